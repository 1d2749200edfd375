import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { subscribe } from '../support/sse.ts';

// The data source permissions reach every way of querying: POST /api/ds/query, resources, the
// GraphQL query fields and live queries (ended at the next tick once the permission is gone).

let server: TestServer;
let uid: string;
let userId: number;
const VIEWER = basic('q-viewer', 'viewer-pass');

beforeAll(async () => {
  server = await startTestServer({ overrides: { live: { min_refresh: '200ms' } } });
  const created = await call(server, 'POST', '/api/datasources', { body: { name: 'td-perm', type: 'grafana-testdata-datasource', access: 'proxy' } });
  expect(created.status).toBe(200);
  uid = created.body.datasource.uid;
  const user = await call(server, 'POST', '/api/admin/users', { body: { login: 'q-viewer', password: 'viewer-pass' } });
  expect(user.status).toBe(200);
  userId = user.body.id;
});

afterAll(async () => {
  await server?.close();
});

const walk = () => ({ refId: 'A', datasource: { type: 'grafana-testdata-datasource', uid }, scenarioId: 'random_walk', seed: 7, intervalMs: 60000 });
const query = (auth: string) => call(server, 'POST', '/api/ds/query', { auth, body: { from: 'now-1h', to: 'now', queries: [walk()] } });
const grant = (path: string, permission: string) => call(server, 'POST', `/api/access-control/datasources/${uid}/${path}`, { body: { permission } });

async function revokeRoles(): Promise<void> {
  for (const role of ['Viewer', 'Editor']) expect((await grant(`builtInRoles/${role}`, '')).status).toBe(200);
}

describe('querying a data source the caller may not query', () => {
  it('is refused on every entry point, and allowed again by a grant to the user', async () => {
    expect((await query(VIEWER)).status).toBe(200);
    await revokeRoles();
    try {
      const refused = await query(VIEWER);
      expect(refused).toMatchObject({ status: 403, body: { message: 'Access denied to data source' } });
      // Org Admins administer every data source, whatever its grants.
      expect((await query(ADMIN)).status).toBe(200);

      const resource = await call(server, 'GET', `/api/datasources/uid/${uid}/resources/scenarios`, { auth: VIEWER });
      expect(resource).toMatchObject({ status: 403, body: { message: 'Access denied to datasource' } });

      const viaGraphQL = await gql(server, 'query($queries: [JSONObject!]!) { dataQuery(from: "now-1h", to: "now", queries: $queries) { status } }', { queries: [walk()] }, VIEWER);
      expect(viaGraphQL.body.errors?.[0]).toMatchObject({ message: 'Access denied to data source', extensions: { code: 'FORBIDDEN' } });

      expect((await grant(`users/${userId}`, 'Query')).status).toBe(200);
      expect((await query(VIEWER)).status).toBe(200);
      expect((await call(server, 'GET', `/api/datasources/uid/${uid}/resources/scenarios`, { auth: VIEWER })).status).toBe(200);
    } finally {
      await grant(`users/${userId}`, '');
      for (const role of ['Viewer', 'Editor']) await grant(`builtInRoles/${role}`, 'Query');
    }
  });
});

describe('a live query', () => {
  const LIVE = `subscription($queries: [JSONObject!]!) {
    liveQuery(queries: $queries, from: "now-1h", to: "now", refresh: "200ms") { refreshedAt viewers results { refId status error } }
  }`;

  it('is refused at subscription, or ends at the next tick, once its subscriber may no longer query', async () => {
    const stream = await subscribe(server, LIVE, { auth: VIEWER, variables: { queries: [walk()] } });
    // A second viewer of the same query (an admin) keeps the shared run going.
    const admin = await subscribe(server, LIVE, { auth: ADMIN, variables: { queries: [walk()] } });
    try {
      expect(stream.status).toBe(200);
      await stream.waitFor((e) => e.event === 'next' && !!e.data.data, 5000);
      await revokeRoles();
      const last = await stream.waitFor((e) => e.event === 'next' && !!e.data.errors, 5000);
      expect(last.data.errors[0]).toMatchObject({ message: 'Access denied to data source', extensions: { code: 'FORBIDDEN' } });
      await stream.ended;
      // The admin's stream goes on with the next ticks.
      const seen = admin.events.length;
      await admin.waitFor((e) => admin.events.indexOf(e) >= seen && e.event === 'next' && !!e.data.data, 5000);

      // Joining a running query is checked too.
      const late = await subscribe(server, LIVE, { auth: VIEWER, variables: { queries: [walk()] } });
      const refused = await late.waitFor((e) => e.event === 'next', 5000);
      expect(refused.data.errors[0]).toMatchObject({ message: 'Access denied to data source' });
      late.close();
    } finally {
      stream.close();
      admin.close();
      for (const role of ['Viewer', 'Editor']) await grant(`builtInRoles/${role}`, 'Query');
    }
  });
});
