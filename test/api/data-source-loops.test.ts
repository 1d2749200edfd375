import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, gql, startTestServer, type TestServer } from '../support/server.ts';

// The Via loop guard beyond the proxy: resources, queries and health checks of a data source whose
// URL leads back to this deployment go one hop and answer 508, as the proxy does, instead of
// calling themselves until the process runs out of file descriptors.

const LOOP = { message: 'data source proxy loop detected' };
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A Prometheus data source whose URL is this server's own resources URL for it, with the admin's credentials. */
async function selfReferring(uid: string): Promise<{ id: number; uid: string }> {
  const res = await call(server, 'POST', '/api/datasources', {
    body: { uid, name: uid, type: 'prometheus', access: 'proxy', url: `${server.url}/api/datasources/uid/${uid}/resources`, basicAuth: true, basicAuthUser: 'admin', secureJsonData: { basicAuthPassword: 'admin' } },
  });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

/** Requests this server answered on `route` while `run` ran (its access log). */
async function served(route: string, run: () => Promise<unknown>): Promise<number> {
  const count = () => server.logs.filter((line) => line.msg === 'request' && line.route === route).length;
  const before = count();
  await run();
  // The access line of the outer request is written once its response is over.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return count() - before;
}

const RESOURCES = '/api/datasources/uid/:uid/resources/*';

describe('a data source leading back here', () => {
  it('resources: one hop, then 508', async () => {
    const ds = await selfReferring('loop-resources');
    let res: { status: number; body: any } | undefined;
    const hops = await served(RESOURCES, async () => (res = await call(server, 'GET', `/api/datasources/uid/${ds.uid}/resources/api/v1/labels`)));
    expect([res!.status, res!.body]).toEqual([508, LOOP]);
    expect(hops).toBe(2);
  });

  it('queries: the refId answers the 508 of the one hop', async () => {
    const ds = await selfReferring('loop-query');
    let res: { status: number; body: any } | undefined;
    const hops = await served(RESOURCES, async () => (res = await call(server, 'POST', '/api/ds/query', {
      body: { from: '1700000000000', to: '1700000300000', queries: [{ refId: 'A', datasource: { uid: ds.uid }, expr: '1', instant: true }] },
    })));
    expect(res!.status).toBe(400);
    expect(res!.body.results.A).toMatchObject({ status: 508, errorSource: 'downstream' });
    expect(res!.body.results.A.error).toContain('data source proxy loop detected');
    expect(hops).toBe(1);
  });

  it('health: one hop, and the check fails saying so', async () => {
    const ds = await selfReferring('loop-health');
    let res: { status: number; body: any } | undefined;
    const hops = await served(RESOURCES, async () => (res = await call(server, 'GET', `/api/datasources/uid/${ds.uid}/health`)));
    expect([res!.status, res!.body]).toEqual([400, { message: 'request failed: 508 Loop Detected - There was an error returned querying the Prometheus API.', status: 'ERROR' }]);
    expect(hops).toBe(1);
  });
});

describe('a request that already came through this deployment', () => {
  it('is refused with 508 on resources, queries and health, by REST and GraphQL, before any lookup', async () => {
    const via = { via: '1.1 edge, 1.1 dashgate' };
    const td = await call(server, 'POST', '/api/datasources', { body: { name: 'loop-testdata', type: 'testdata', access: 'proxy' } });
    const uid = td.body.datasource.uid as string;
    const answers = [
      await call(server, 'GET', `/api/datasources/uid/${uid}/resources/scenarios`, { headers: via }),
      await call(server, 'GET', '/api/datasources/uid/no-such-uid/resources/x', { headers: via }),
      await call(server, 'GET', `/api/datasources/uid/${uid}/resources/..%2f..%2fx`, { headers: via }),
      await call(server, 'POST', '/api/ds/query', { headers: via, body: { queries: [{ refId: 'A', datasource: { uid } }] } }),
      await call(server, 'GET', `/api/datasources/uid/${uid}/health`, { headers: via }),
      await call(server, 'GET', `/api/datasources/${td.body.datasource.id}/health`, { headers: via }),
    ];
    for (const res of answers) expect([res.status, res.body]).toEqual([508, LOOP]);
    for (const query of ['query($q: [JSONObject!]!) { dataQuery(queries: $q) { status } }', 'query($uid: String!) { currentOrganization { dataSource(uid: $uid) { health { status } } } }']) {
      const graph = await call(server, 'POST', '/graphql', { headers: via, body: { query, variables: { q: [{ refId: 'A', datasource: { uid } }], uid } } });
      expect(graph.body.errors.map((e: { message: string; extensions: { code: string } }) => [e.message, e.extensions.code])).toEqual([[LOOP.message, 'LOOP_DETECTED']]);
    }
    // Without our name in Via, the same requests are served.
    expect((await call(server, 'GET', `/api/datasources/uid/${uid}/resources/scenarios`, { headers: { via: '1.1 edge' } })).status).toBe(200);
    expect((await gql(server, 'query($uid: String!) { currentOrganization { dataSource(uid: $uid) { health { status } } } }', { uid })).body).toEqual({ data: { currentOrganization: { dataSource: { health: { status: 'OK' } } } } });
  });
});
