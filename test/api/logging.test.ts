import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

let server: TestServer;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  // Everything that can log does: request lines, the proxy's own lines, debug detail.
  server = await startTestServer({ overrides: { server: { router_logging: 'true' }, dataproxy: { logging: 'true' }, log: { level: 'debug' } } });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

const requestLines = (s: TestServer) => s.logs.filter((l) => l.msg === 'request');

describe('request log lines', () => {
  it('writes one structured line per request: method, route template, status, duration, user and org', async () => {
    const before = requestLines(server).length;
    await call(server, 'GET', '/api/datasources');
    await call(server, 'GET', '/api/datasources/424242');
    await call(server, 'GET', '/api/no-such-route');
    await call(server, 'GET', '/api/health', { auth: null });
    await gql(server, '{ currentOrganization { dataSources { nodes { id } } } }');
    await new Promise((resolve) => setTimeout(resolve, 50)); // lines are written when responses close
    const lines = requestLines(server).slice(before);
    expect(lines.map((l) => [l.method, l.route, l.status])).toEqual([
      ['GET', '/api/datasources', 200],
      ['GET', '/api/datasources/:id', 404],
      ['GET', 'unmatched', 404],
      ['GET', '/api/health', 200],
      ['POST', '/graphql', 200],
    ]);
    for (const line of lines) {
      expect(line.level).toBe(30); // info, because router_logging is on
      expect(typeof line.durationMs).toBe('number');
      expect(line.durationMs as number).toBeGreaterThanOrEqual(0);
    }
    expect(lines[0]).toMatchObject({ userId: 1, orgId: 1 });
    expect(lines[1]).toMatchObject({ userId: 1, orgId: 1 });
    expect(lines[4]).toMatchObject({ userId: 1, orgId: 1 }); // GraphQL authenticates inside yoga; still known here
    expect(lines[3]!.userId).toBeUndefined(); // no credentials on the health check
    // Each line names its request; the id is for logs only, as the original sends none.
    expect(new Set(lines.map((l) => l.requestId)).size).toBe(5);
    for (const line of lines) expect(line.requestId).toMatch(/^[a-z0-9]+-[a-z0-9]+$/);
  });

  it('logs requests at debug level without router_logging, so [log] level decides', async () => {
    const quiet = await startTestServer({ connection: server.connection, overrides: { server: { router_logging: 'false' }, log: { level: 'debug' } } });
    const warnOnly = await startTestServer({ connection: server.connection, overrides: { server: { router_logging: 'true' }, log: { level: 'warn' } } });
    try {
      await call(quiet, 'GET', '/api/datasources');
      await call(warnOnly, 'GET', '/api/datasources');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(requestLines(quiet).map((l) => [l.route, l.level])).toEqual([['/api/datasources', 20]]);
      expect(requestLines(warnOnly)).toEqual([]);
      expect(warnOnly.logs.every((l) => (l.level as number) >= 40)).toBe(true);
    } finally {
      await quiet.close();
      await warnOnly.close();
    }
  });
});

describe('secrets in logs', () => {
  it('never writes a password, token or data source secret, whatever the request and its outcome', async () => {
    const canaries: string[] = [];
    const canary = (name: string) => {
      const value = `CANARY-${name}-${Math.random().toString(36).slice(2, 10)}`;
      canaries.push(value);
      return value;
    };

    // Users and Basic credentials: created, used, mistyped, changed, over REST and GraphQL.
    const userPw = canary('USER-PW');
    const created = await call(server, 'POST', '/api/admin/users', { body: { login: 'canary-user', email: 'c@example.com', password: userPw } });
    expect(created.status).toBe(200);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('canary-user', userPw) })).status).toBe(200);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('canary-user', canary('WRONG-PW')) })).status).toBe(401);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('no-such-user', canary('UNKNOWN-USER-PW')) })).status).toBe(401);
    const newPw = canary('CHANGED-PW');
    expect((await call(server, 'PUT', `/api/admin/users/${created.body.id}/password`, { body: { password: newPw } })).status).toBe(200);
    expect((await call(server, 'PUT', `/api/admin/users/${created.body.id}/password`, { body: { password: 'x' } })).status).toBe(400);
    const gqlPw = canary('GQL-PW');
    const gqlChange = await gql(server, 'mutation($id: ID!, $pw: String!) { userPasswordUpdate(id: $id, input: { password: $pw }) { userErrors { message } } }',
      { id: Buffer.from(`User:${created.body.id}`).toString('base64url'), pw: gqlPw });
    expect(gqlChange.body.errors).toBeUndefined();
    expect(gqlChange.body.data.userPasswordUpdate.userErrors).toEqual([]);
    expect((await gql(server, '{ currentOrganization { dataSources { nodes { id } } } }', {}, basic('canary-user', canary('GQL-WRONG-PW')))).status).toBe(401);

    // Data source secrets: create, update, both faces, plus a refused one.
    const ds = await call(server, 'POST', '/api/datasources', {
      body: {
        name: 'canary-ds', type: 'loki', access: 'proxy', url: upstream.url, basicAuth: true, basicAuthUser: 'u',
        basicAuthPassword: canary('DS-BASIC'), password: canary('DS-LEGACY'), secureJsonData: { httpHeaderValue1: canary('DS-HEADER') },
        jsonData: { httpHeaderName1: 'X-Key' },
      },
    });
    expect(ds.status).toBe(200);
    expect((await call(server, 'PUT', `/api/datasources/${ds.body.id}`, {
      body: { name: 'canary-ds', type: 'loki', access: 'proxy', url: upstream.url, secureJsonData: { httpHeaderValue1: canary('DS-ROTATED') }, jsonData: { httpHeaderName1: 'X-Key' } },
    })).status).toBe(200);
    expect((await call(server, 'POST', '/api/datasources', { body: { name: 'canary-ds', type: 'loki', access: 'proxy', secureJsonData: { k: canary('DS-CONFLICT') } } })).status).toBe(409);
    expect((await call(server, 'POST', '/api/datasources', { rawBody: `{"name": "broken", "secureJsonData": {"k": "${canary('BAD-JSON')}"`, headers: { 'content-type': 'application/json' } })).status).toBe(400);
    const gqlDs = await gql(server, 'mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } } }', {
      input: { name: 'canary-gql-ds', type: 'loki', access: 'proxy', secureJsonData: { token: canary('GQL-DS') } },
    });
    expect(gqlDs.body.errors).toBeUndefined();
    const badVars = await gql(server, 'mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } } }', {
      input: { name: 42, type: 'loki', access: 'proxy', secureJsonData: { token: canary('GQL-BAD-VARS') } },
    });
    expect(badVars.body.errors).toBeDefined();

    // Tokens: a legacy key and a service account token, created and used; a forged one refused.
    const key = (await call(server, 'POST', '/api/auth/keys', { body: { name: 'canary-key', role: 'Admin' } })).body.key as string;
    canaries.push(key);
    expect((await call(server, 'GET', '/api/datasources', { auth: `Bearer ${key}` })).status).toBe(200);
    const account = (await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'canary-sa', role: 'Editor' } })).body;
    const saToken = (await call(server, 'POST', `/api/serviceaccounts/${account.id}/tokens`, { body: { name: 'canary-sa-token' } })).body.key as string;
    canaries.push(saToken);
    expect((await call(server, 'GET', '/api/datasources', { auth: `Bearer ${saToken}` })).status).toBe(200);
    expect((await call(server, 'GET', '/api/datasources', { auth: `Bearer ${canary('FORGED-TOKEN')}` })).status).toBe(401);

    // The proxy: upstream credentials injected from secrets, caller headers and query strings.
    const proxied = await call(server, 'GET', `/api/datasources/proxy/${ds.body.id}/api/v1/query?apiKey=${canary('QUERY')}`, {
      headers: { 'x-ds-authorization': `Bearer ${canary('DS-AUTH-HEADER')}`, cookie: `grafana_session=${canary('COOKIE')}` },
    });
    expect(proxied.status).toBe(200);
    expect(server.logs.some((l) => l.component === 'dataproxy')).toBe(true);

    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = server.logText();
    expect(requestLines(server).length).toBeGreaterThan(15);
    for (const secret of canaries) {
      expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
      // Nor in a Basic header's encoding.
      expect(text).not.toContain(Buffer.from(`canary-user:${secret}`).toString('base64'));
    }
  });
});
