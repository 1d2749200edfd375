import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROUTES } from '../../src/http/routes.ts';
import { eventually } from '../support/instances.ts';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { createDataSource, createOrg, createUser, fillPath, parseJson, rawRequest, routeKey, type RawReply } from './helpers.ts';

/**
 * Absolute-form request targets (`GET http://host:port/path HTTP/1.1`, RFC 9112 section 3.2.2) route
 * exactly like the origin form. The hosts named in them are deliberately unrelated to the server.
 */
let server: TestServer;
let upstream: Upstream;
let ds: { id: number; uid: string; name: string };
let member: { id: number; auth: string };
let orgTwo: number;
const agent = new Agent({ keepAlive: false });

beforeAll(async () => {
  server = await startTestServer();
  upstream = await startUpstream();
  ds = await createDataSource(server, ADMIN, { name: 'org-one-ds', type: 'prometheus', url: `${upstream.url}/base` });
  orgTwo = await createOrg(server, 'Org Two');
  // A member of both orgs, currently in org 1.
  member = await createUser(server, 'member', 'Admin', 1);
  await server.sql('insert into org_user (org_id, user_id, role) values ($1, $2, $3)', [orgTwo, member.id, 'Admin']);
  const inTwo = await call(server, 'POST', '/api/datasources', { auth: member.auth, headers: { 'x-grafana-org-id': String(orgTwo) }, body: { name: 'org-two-ds', type: 'loki', access: 'proxy', url: upstream.url } });
  expect(inTwo.status).toBe(200);
});
afterAll(async () => {
  agent.destroy();
  await server.close();
  await upstream.close();
});

/** The same request in absolute form, with a target host that is not this server's. */
const absolute = (path: string, host = 'elsewhere.example:8443') => `http://${host}${path}`;

function send(method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<RawReply> {
  return rawRequest(server.url, { method, path: target, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body }, agent);
}

/** Sends one request and returns its answer with the route the access log recorded for it. */
async function routed(method: string, target: string, headers: Record<string, string> = {}): Promise<{ status: number; route: unknown }> {
  const lines = () => server.logs.filter((line) => line.msg === 'request');
  const before = lines().length;
  const reply = await send(method, target, headers);
  await eventually(async () => lines().length, before + 1);
  const logged = lines().slice(before);
  expect(logged).toHaveLength(1);
  return { status: reply.status, route: logged[0]!.route };
}

describe('absolute-form request targets', () => {
  it('every row of the route table is matched from the absolute form as from the origin form', async () => {
    const params = { id: ds.id, uid: ds.uid, name: ds.name, serviceAccountId: 1, tokenId: 1, orgId: 1, userId: 1, teamId: 1, builtInRole: 'Viewer' };
    for (const route of ROUTES) {
      const method = route.method === 'ANY' ? 'GET' : route.method;
      const path = fillPath(route, params).replace(/\*$/, route.path === '/api/*' ? 'no-such-route' : 'api/v1/query');
      const logged = route.kind === 'endpoint' && route.endpoint === 'not-found' ? 'unmatched' : route.path;
      // Without credentials, so nothing changes; the access log names the row that matched.
      const fromAbsolute = await routed(method, absolute(path));
      const fromOrigin = await routed(method, path);
      expect({ key: routeKey(route), route: fromAbsolute.route }).toEqual({ key: routeKey(route), route: logged });
      expect({ key: routeKey(route), ...fromOrigin }).toEqual({ key: routeKey(route), ...fromAbsolute });
    }
  });

  it('answers every GET route the same in both forms', async () => {
    const params = { id: ds.id, uid: ds.uid, name: ds.name, serviceAccountId: 1, tokenId: 1, orgId: 1, userId: 1, teamId: 1, builtInRole: 'Viewer' };
    for (const route of ROUTES.filter((r) => r.kind === 'rest' && r.method === 'GET')) {
      const path = fillPath(route, params);
      const [fromAbsolute, fromOrigin] = [await send('GET', absolute(path), { authorization: ADMIN }), await send('GET', path, { authorization: ADMIN })];
      expect({ key: routeKey(route), status: fromAbsolute.status }).toEqual({ key: routeKey(route), status: fromOrigin.status });
      // The stats count requests and logins, so only the settings document and data are compared whole.
      if (route.path !== '/api/admin/stats') expect(parseJson(fromAbsolute.body)).toEqual(parseJson(fromOrigin.body));
    }
  });

  it('serves health, the OpenAPI document, metrics and GraphQL from the absolute form', async () => {
    const health = await send('GET', absolute('/api/health'));
    expect(health.status).toBe(200);
    expect(parseJson(health.body)).toMatchObject({ database: 'ok' });
    expect((await send('HEAD', absolute('/api/health'))).status).toBe(200);
    const openapi = await send('GET', absolute('/api/openapi.json'));
    expect(openapi.body.equals((await send('GET', '/api/openapi.json')).body)).toBe(true);
    const metrics = await send('GET', absolute('/metrics'));
    expect(metrics.status).toBe(200);
    expect(metrics.body.toString()).toContain('# TYPE');

    const graphql = await send('POST', absolute('/graphql?x=1'), { authorization: ADMIN }, JSON.stringify({ query: '{ currentOrganization { dataSources { nodes { name } } } }' }));
    expect(graphql.status).toBe(200);
    expect(parseJson(graphql.body)).toEqual({ data: { currentOrganization: { dataSources: { nodes: [{ name: 'org-one-ds' }] } } } });
  });

  it('the host in the target never chooses the org: the caller\'s current org, or X-Grafana-Org-Id, decides', async () => {
    const names = (reply: RawReply) => (parseJson(reply.body) as Array<{ name: string }>).map((d) => d.name);
    for (const host of ['org-two.example', '127.0.0.1:1', 'localhost']) {
      const current = await send('GET', absolute('/api/datasources', host), { authorization: member.auth, host: 'org-two.example' });
      expect(current.status).toBe(200);
      expect(names(current)).toEqual(['org-one-ds']);
      const chosen = await send('GET', absolute('/api/datasources', host), { authorization: member.auth, 'x-grafana-org-id': String(orgTwo) });
      expect(names(chosen)).toEqual(['org-two-ds']);
    }
    const org = await send('GET', absolute('/api/datasources/name/org-two-ds', 'org-two.example'), { authorization: member.auth });
    expect(org.status).toBe(404);
  });

  it('proxies the normalised path: the upstream sees the data source path, never the client\'s target', async () => {
    for (const [target, expected] of [
      [absolute(`/api/datasources/proxy/${ds.id}/api/v1/query?query=up`), '/base/api/v1/query?query=up'],
      [absolute(`/api/datasources/proxy/uid/${ds.uid}/api/v1/labels`, 'upstream.example'), '/base/api/v1/labels'],
      [absolute(`/api/datasources/proxy/${ds.id}`), '/base'],
    ] as const) {
      const before = upstream.requests.length;
      const reply = await send('GET', target, { authorization: ADMIN });
      expect({ target, status: reply.status }).toEqual({ target, status: 200 });
      expect(upstream.requests.slice(before).map((r) => [r.url, r.headers.host])).toEqual([[expected, `127.0.0.1:${upstream.port}`]]);
    }
    // The proxy's own path checks apply to the normalised path as well.
    expect((await send('GET', absolute(`/api/datasources/proxy/${ds.id}/a/%2e%2e/b`), { authorization: ADMIN })).status).toBe(400);
    expect((await send('GET', absolute('/api/datasources/proxy/abc/x'), { authorization: ADMIN })).status).toBe(400);
  });
});
