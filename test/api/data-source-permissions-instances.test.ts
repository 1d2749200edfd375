import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/** Two instances on one database: a permission change on one holds on the other's very next request. */
let a: TestServer;
let b: TestServer;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  a = await startTestServer();
  b = await startTestServer({ connection: a.connection });
});
afterAll(async () => {
  await b.close();
  await a.close();
  await upstream.close();
});

describe('a revoked permission', () => {
  it('is refused on the other instance at once: team membership, user grant, role grant, and SQL by hand', async () => {
    const ds = (await call(a, 'POST', '/api/datasources', { body: { name: 'shared-perm', type: 'loki', access: 'proxy', url: upstream.url } })).body.datasource;
    const user = await call(a, 'POST', '/api/admin/users', { body: { login: 'mi-viewer', password: 'user-pass' } });
    const auth = basic('mi-viewer', 'user-pass');
    const team = (await call(a, 'POST', '/api/teams', { body: { name: 'mi-team' } })).body.teamId;
    await call(a, 'POST', `/api/teams/${team}/members`, { body: { userId: user.body.id } });
    for (const role of ['Viewer', 'Editor']) await call(a, 'POST', `/api/access-control/datasources/${ds.uid}/builtInRoles/${role}`, { body: { permission: '' } });
    await call(a, 'POST', `/api/access-control/datasources/${ds.uid}/teams/${team}`, { body: { permission: 'Query' } });

    const onB = async () => ({
      proxy: (await call(b, 'GET', `/api/datasources/proxy/uid/${ds.uid}/x`, { auth })).status,
      read: (await call(b, 'GET', `/api/datasources/${ds.id}`, { auth })).status,
      listed: ((await call(b, 'GET', '/api/datasources', { auth })).body as Array<{ id: number }>).some((d) => d.id === ds.id),
    });
    const allowed = { proxy: 200, read: 200, listed: true };
    const refused = { proxy: 403, read: 403, listed: false };

    // Warm B's caches twice (the proxy's target and the caller's level), then change things on A.
    expect(await onB()).toEqual(allowed);
    expect(await onB()).toEqual(allowed);
    expect((await call(a, 'DELETE', `/api/teams/${team}/members/${user.body.id}`)).status).toBe(200);
    expect(await onB()).toEqual(refused);

    await call(a, 'POST', `/api/access-control/datasources/${ds.uid}/users/${user.body.id}`, { body: { permission: 'Query' } });
    expect(await onB()).toEqual(allowed);
    await call(a, 'POST', `/api/access-control/datasources/${ds.uid}/users/${user.body.id}`, { body: { permission: '' } });
    expect(await onB()).toEqual(refused);

    await call(a, 'POST', `/api/access-control/datasources/${ds.uid}/builtInRoles/Viewer`, { body: { permission: 'Query' } });
    expect(await onB()).toEqual(allowed);
    // A statement written by hand notifies too (the trigger).
    await a.sql(`delete from data_source_permission where data_source_id = $1 and built_in_role = 'Viewer'`, [ds.id]);
    expect(await onB()).toEqual(refused);

    // Deleting the team takes its grants with it, on every instance.
    await call(a, 'POST', `/api/teams/${team}/members`, { body: { userId: user.body.id } });
    expect(await onB()).toEqual(allowed);
    expect((await call(a, 'DELETE', `/api/teams/${team}`)).status).toBe(200);
    expect(await onB()).toEqual(refused);
  });
});
