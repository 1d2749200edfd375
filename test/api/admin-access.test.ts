import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROUTES } from '../../src/http/routes.ts';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';

// Spec 5.1: the administration endpoints take Basic authentication of a server admin and nothing
// else. Every denial must also leave the database untouched.

let server: TestServer;
let viewerId: number;
let viewer: string;
let orgAdmin: string;
let orgToken: string;
let serviceAccountToken: string;

const UNAUTHORIZED = { extra: null, message: 'Unauthorized', messageId: 'auth.unauthorized', statusCode: 401, traceID: '' };
const PERMISSION_DENIED = { message: 'Permission denied' };

/** A request each admin route would act on if it let the caller through: the viewer promoting itself, etc. */
function requestFor(method: string, path: string): { path: string; body?: unknown } {
  const concrete = path.replace(':id', String(viewerId)).replace(':orgId', '1').replace(':name', encodeURIComponent('Main Org.'));
  if (method === 'PUT' && path === '/api/users/:id') return { path: concrete, body: { login: 'taken-over', email: 'taken-over@example.com' } };
  if (path.endsWith('/permissions')) return { path: concrete, body: { isServiceAdmin: true } };
  if (path.endsWith('/password')) return { path: concrete, body: { password: 'taken-over' } };
  if (path.endsWith('/pause-all-alerts')) return { path: concrete, body: { paused: true } };
  if (method === 'POST' && path.endsWith('/users')) return { path: concrete, body: { login: 'intruder', password: 'intruder-pw' } };
  return { path: concrete };
}

/** The /api/admin routes: refused with the legacy "Permission denied". */
const adminRoutes = ROUTES.filter((r) => r.access.kind === 'server-admin' && !r.access.action);
/** Server-wide user and org routes: refused with the access-control 403 naming the action. */
const actionRoutes = ROUTES.filter((r) => r.access.kind === 'server-admin' && r.access.action);

beforeAll(async () => {
  server = await startTestServer();
  const created = await call(server, 'POST', '/api/admin/users', { body: { login: 'viewer', password: 'viewer-pw' } });
  expect(created.status).toBe(200);
  viewerId = created.body.id;
  viewer = basic('viewer', 'viewer-pw');
  // An org Admin who is not a server admin: the org role must not open the admin area either.
  const admin2 = await call(server, 'POST', '/api/admin/users', { body: { login: 'org-admin', password: 'org-admin-pw' } });
  await server.sql(`update org_user set role = 'Admin' where user_id = $1`, [admin2.body.id]);
  orgAdmin = basic('org-admin', 'org-admin-pw');
  orgToken = (await call(server, 'POST', '/api/auth/keys', { body: { name: 'org-admin-key', role: 'Admin' } })).body.key;
  const sa = await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'robot', role: 'Admin' } });
  serviceAccountToken = (await call(server, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { body: { name: 'robot-token' } })).body.key;
});
afterAll(() => server.close());

describe('REST admin routes', () => {
  it('are exactly the documented administration endpoints, all marked server-admin', () => {
    expect(adminRoutes.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'DELETE /api/admin/users/:id',
      'GET /api/admin/settings',
      'GET /api/admin/stats',
      'POST /api/admin/pause-all-alerts',
      'POST /api/admin/provisioning/datasources/reload',
      'POST /api/admin/users',
      'POST /api/admin/users/:id/disable',
      'POST /api/admin/users/:id/enable',
      'PUT /api/admin/users/:id/password',
      'PUT /api/admin/users/:id/permissions',
    ]);
    expect(actionRoutes.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'DELETE /api/orgs/:orgId',
      'GET /api/orgs',
      'GET /api/orgs/name/:name',
      'GET /api/users',
      'GET /api/users/:id',
      'GET /api/users/:id/orgs',
      'GET /api/users/:id/teams',
      'GET /api/users/lookup',
      'GET /api/users/search',
      'POST /api/users/:id/using/:orgId',
      'PUT /api/users/:id',
    ]);
  });

  it.each(actionRoutes.map((r) => [r.method, r.path, r.access.kind === 'server-admin' ? r.access.action : '']))('%s %s: anonymous 401, tokens and non-admins 403 naming %s', async (method, path, action) => {
    const { path: concrete, body } = requestFor(method!, path!);
    expect((await call(server, method!, concrete, { auth: null, body })).body).toEqual(UNAUTHORIZED);
    for (const auth of [`Bearer ${orgToken}`, basic('api_key', orgToken), `Bearer ${serviceAccountToken}`, viewer, orgAdmin]) {
      const denied = await call(server, method!, concrete, { auth, body });
      expect({ auth, status: denied.status, message: denied.body.message, title: denied.body.title }).toEqual({
        auth, status: 403, title: 'Access denied', message: `You'll need additional permissions to perform this action. Permissions needed: ${action}`,
      });
    }
  });

  it.each(adminRoutes.map((r) => [r.method, r.path]))('%s %s: anonymous 401, tokens and non-admins 403 "Permission denied"', async (method, path) => {
    const { path: concrete, body } = requestFor(method, path);
    const anonymous = await call(server, method, concrete, { auth: null, body });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual(UNAUTHORIZED);

    for (const auth of [`Bearer ${orgToken}`, basic('api_key', orgToken), `Bearer ${serviceAccountToken}`, viewer, orgAdmin]) {
      const denied = await call(server, method, concrete, { auth, body });
      expect({ auth, status: denied.status, body: denied.body }).toEqual({ auth, status: 403, body: PERMISSION_DENIED });
    }
  });

  it('let nothing through: no user created, no password or permission changed, nothing deleted or paused', async () => {
    expect(await server.sql(`select 1 from "user" where login = 'intruder'`)).toEqual([]);
    const [row] = await server.sql('select is_admin, is_disabled, login from "user" where id = $1', [viewerId]);
    expect(row).toEqual({ is_admin: false, is_disabled: false, login: 'viewer' });
    expect(await server.sql('select id from org where id = 1')).toEqual([{ id: 1 }]);
    expect((await call(server, 'GET', '/api/datasources', { auth: viewer })).status).toBe(200);
    expect(await server.sql('select paused from alert_pause_state')).toEqual([{ paused: false }]);
  });

  it('serve a server admin using Basic authentication', async () => {
    expect((await call(server, 'GET', '/api/admin/stats', { auth: ADMIN })).status).toBe(200);
    expect((await call(server, 'GET', '/api/admin/settings', { auth: ADMIN })).status).toBe(200);
    // Authorised, so the request reaches the handler and gets its own answer.
    expect((await call(server, 'DELETE', '/api/admin/users/424242', { auth: ADMIN })).body).toEqual({ message: 'user not found' });
  });

  it('answer a wrong admin password with 401, not 403', async () => {
    const res = await call(server, 'GET', '/api/admin/stats', { auth: basic('admin', 'not-the-password') });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Invalid username or password');
  });
});

describe('GraphQL admin fields', () => {
  const OPERATIONS: Array<[string, string, Record<string, unknown>]> = [
    ['adminSettings', '{ adminSettings }', {}],
    ['adminStats', '{ adminStats { userCount } }', {}],
    ['userCreate', 'mutation { userCreate(input: { login: "gql-intruder", password: "intruder-pw" }) { user { id } } }', {}],
    ['userPasswordUpdate', 'mutation($id: ID!) { userPasswordUpdate(id: $id, input: { password: "taken-over" }) { user { id } } }', { id: 0 }],
    ['userPermissionsUpdate', 'mutation($id: ID!) { userPermissionsUpdate(id: $id, input: { isServiceAdmin: true }) { user { id } } }', { id: 0 }],
    ['userDelete', 'mutation($id: ID!) { userDelete(id: $id) { deletedUserId } }', { id: 0 }],
    ['userDisable', 'mutation($id: ID!) { userDisable(id: $id) { user { id } } }', { id: 0 }],
    ['userEnable', 'mutation($id: ID!) { userEnable(id: $id) { user { id } } }', { id: 0 }],
    ['alertsPause', 'mutation { alertsPause(paused: true) { paused } }', {}],
    ['dataSourceProvisioningReload', 'mutation { dataSourceProvisioningReload { created userErrors { message } } }', {}],
  ];

  it.each(OPERATIONS)('%s needs Basic authentication of a server admin', async (_field, query, variables) => {
    const vars = 'id' in variables ? { id: viewerId } : variables;
    const anonymous = await gql(server, query, vars, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.data ?? null).toBeNull();
    for (const auth of [`Bearer ${orgToken}`, basic('api_key', orgToken), `Bearer ${serviceAccountToken}`, viewer, orgAdmin]) {
      const denied = await gql(server, query, vars, auth);
      expect({ auth, status: denied.status, message: denied.body.errors?.[0]?.message }).toEqual({ auth, status: 403, message: 'Permission denied' });
      expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  });

  it('changed nothing for the refused callers, and serves the admin', async () => {
    expect(await server.sql(`select 1 from "user" where login = 'gql-intruder'`)).toEqual([]);
    expect(await server.sql('select is_admin from "user" where id = $1', [viewerId])).toEqual([{ is_admin: false }]);
    expect((await call(server, 'GET', '/api/datasources', { auth: viewer })).status).toBe(200);
    expect(await server.sql('select paused from alert_pause_state')).toEqual([{ paused: false }]);
    const stats = await gql(server, '{ adminStats { userCount serviceAdminCount } }');
    expect(stats.status).toBe(200);
    expect(stats.body.data).toEqual({ adminStats: { userCount: 3, serviceAdminCount: 1 } });
  });
});
