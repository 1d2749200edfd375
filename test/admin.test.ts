import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from './support/server.ts';

let server: TestServer;
let viewer: string;
let orgToken: string;

beforeAll(async () => {
  server = await startTestServer({
    overrides: {
      'auth.generic_oauth': { client_secret: 'OVERRIDE-CANARY-SECRET', enabled: 'true' },
      smtp: { password: 'SMTP-CANARY-PW', host: 'mail.example:25' },
      database: { url: '' },
      'event_publisher': { rabbitmq_url: 'amqp://rabbit:RABBIT-CANARY@mq.example/' },
    },
    env: { GF_SECURITY_SECRET_KEY: 'ENV-CANARY-SECRET-KEY', GF_AUTH_GITHUB_CLIENT_SECRET: 'ENV-CANARY-GITHUB' },
  });
  const created = await call(server, 'POST', '/api/admin/users', { body: { name: 'Vic', email: 'vic@example.com', login: 'vic', password: 'vicpass' } });
  expect(created.status).toBe(200);
  viewer = basic('vic', 'vicpass');
  orgToken = (await call(server, 'POST', '/api/auth/keys', { body: { name: 'admin-key', role: 'Admin' } })).body.key;
});
afterAll(() => server.close());

// Every row has three cells: jest hands a `done` callback to a test taking more arguments than its row.
const ADMIN_ROUTES: Array<[string, string, unknown]> = [
  ['GET', '/api/admin/settings', undefined],
  ['GET', '/api/admin/stats', undefined],
  ['POST', '/api/admin/users', { login: 'x1', password: 'xxxxx' }],
  ['PUT', '/api/admin/users/1/password', { password: 'new-password' }],
  ['PUT', '/api/admin/users/1/permissions', { isServiceAdmin: true }],
  ['DELETE', '/api/admin/users/999', undefined],
  ['POST', '/api/admin/pause-all-alerts', { paused: false }],
];

describe('admin routes accept only Basic authentication of a server admin', () => {
  it.each(ADMIN_ROUTES)('%s %s', async (method, path, body) => {
    const anonymous = await call(server, method, path, { auth: null, body });
    expect(anonymous.status).toBe(401);
    const token = await call(server, method, path, { auth: `Bearer ${orgToken}`, body });
    expect(token.status).toBe(403);
    expect(token.body).toEqual({ message: 'Permission denied' });
    const nonAdmin = await call(server, method, path, { auth: viewer, body });
    expect(nonAdmin.status).toBe(403);
    expect(nonAdmin.body).toEqual({ message: 'Permission denied' });
  });

  it('refuses the GraphQL admin fields to tokens and non-admins too', async () => {
    for (const auth of [`Bearer ${orgToken}`, viewer]) {
      const res = await gql(server, '{ adminStats { userCount } }', {}, auth);
      expect(res.status).toBe(403);
      expect(res.body.errors?.[0]?.message).toBe('Permission denied');
    }
  });
});

describe('GET /api/admin/settings', () => {
  it('returns every section as strings with secrets masked', async () => {
    const res = await call(server, 'GET', '/api/admin/settings');
    expect(res.status).toBe(200);
    const bag = res.body as Record<string, Record<string, string>>;
    for (const section of ['DEFAULT', 'analytics', 'auth.anonymous', 'auth.basic', 'auth.ldap', 'auth.proxy', 'dashboards.json', 'database',
      'emails', 'event_publisher', 'log', 'log.console', 'log.file', 'paths', 'security', 'server', 'session', 'smtp', 'users', 'auth.github', 'auth.generic_oauth']) {
      expect(bag[section]).toBeDefined();
    }
    for (const section of Object.values(bag)) for (const value of Object.values(section)) expect(typeof value).toBe('string');
    expect(bag.DEFAULT!.app_mode).toBeDefined();
    expect(bag.security!.secret_key).toBe('*********');
    expect(bag.security!.admin_password).toBe('*********');
    expect(bag['auth.github']!.client_secret).toBe('*********');
    expect(bag['auth.generic_oauth']!.client_secret).toBe('*********');
    expect(bag['auth.generic_oauth']!.enabled).toBe('true');
    expect(bag.smtp!.password).toBe('*********');
    expect(bag.smtp!.user).toBe(''); // empty stays empty
    expect(bag.event_publisher!.rabbitmq_url).toBe('amqp://rabbit:xxxxx@mq.example/');
    expect(bag.database!.password).toBe('*********');
    expect(bag.session!.provider_config).toBe('*********');
    expect(res.text).not.toMatch(/CANARY/);
  });
});

describe('GET /api/admin/stats', () => {
  it('answers the spec\'s integer counters, each computed from real rows', async () => {
    const before = (await call(server, 'GET', '/api/admin/stats')).body;
    expect(Object.keys(before)).toEqual(['user_count', 'org_count', 'dashboard_count', 'db_snapshot_count', 'db_tag_count', 'data_source_count', 'playlist_count', 'starred_db_count', 'service_admin_count']);
    for (const value of Object.values(before)) expect(Number.isInteger(value)).toBe(true);

    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Stats Org') returning id`);
    const [d1] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values (1, 'd1', 'one') returning id`);
    const [d2] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values (1, 'd2', 'two') returning id`);
    await server.sql(`insert into dashboard (org_id, uid, title, is_folder) values (1, 'f1', 'folder', true)`);
    await server.sql(`insert into dashboard_tag (dashboard_id, term) values ($1, 'prod'), ($2, 'prod'), ($2, 'db')`, [d1!.id, d2!.id]);
    await server.sql(`insert into dashboard_snapshot (org_id, name, key) values (1, 's', 'k1')`);
    await server.sql(`insert into playlist (org_id, name) values (1, 'p')`);
    await server.sql(`insert into star (user_id, dashboard_id) values (1, $1)`, [d1!.id]);
    const vic = (await server.sql<{ id: number }>(`select id from "user" where login = 'vic'`))[0]!.id;
    await server.sql(`insert into star (user_id, dashboard_id) values ($1, $2)`, [vic, d1!.id]);
    await call(server, 'POST', '/api/admin/users', { body: { login: 'stats-user', password: 'pw12345' } });
    await call(server, 'PUT', `/api/admin/users/${vic}/permissions`, { body: { isServiceAdmin: true } });
    await call(server, 'POST', '/api/datasources', { body: { name: 'stats-ds', type: 'loki', access: 'proxy' } });
    await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'not a user' } });

    const after = (await call(server, 'GET', '/api/admin/stats')).body;
    expect(after).toEqual({
      user_count: before.user_count + 1,
      org_count: before.org_count + 1,
      dashboard_count: before.dashboard_count + 2,
      db_snapshot_count: before.db_snapshot_count + 1,
      db_tag_count: before.db_tag_count + 2,
      data_source_count: before.data_source_count + 1,
      playlist_count: before.playlist_count + 1,
      starred_db_count: before.starred_db_count + 1,
      service_admin_count: before.service_admin_count + 1,
    });
    await call(server, 'PUT', `/api/admin/users/${vic}/permissions`, { body: { isServiceAdmin: false } });
    await server.sql('delete from org where id = $1', [org!.id]);
  });
});

describe('POST /api/admin/users', () => {
  it('creates a user in the default org with the auto-assign role; login defaults to the e-mail', async () => {
    const res = await call(server, 'POST', '/api/admin/users', { body: { name: 'Mail Only', email: '  only@example.com ', password: 'pass1234' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id', 'message']);
    expect(res.body.message).toBe('User created');
    const [row] = await server.sql('select login, email, is_admin, org_id, password_hash from "user" where id = $1', [res.body.id]);
    expect(row).toMatchObject({ login: 'only@example.com', email: 'only@example.com', is_admin: false, org_id: 1 });
    expect(String(row!.password_hash)).toMatch(/^\$argon2id\$/);
    expect(await server.sql('select org_id, role from org_user where user_id = $1', [res.body.id])).toEqual([{ org_id: 1, role: 'Viewer' }]);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('only@example.com', 'pass1234') })).status).toBe(200);
  });

  it('honours orgId, and refuses an unknown one', async () => {
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Second') returning id`);
    const res = await call(server, 'POST', '/api/admin/users', { body: { login: 'in-second', password: 'pass1234', orgId: org!.id } });
    expect(res.status).toBe(200);
    expect(await server.sql('select org_id, role from org_user where user_id = $1', [res.body.id])).toEqual([{ org_id: org!.id, role: 'Viewer' }]);
    const bad = await call(server, 'POST', '/api/admin/users', { body: { login: 'nowhere', password: 'pass1234', orgId: 987654 } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'organization not found' });
  });

  it('validates the login and password', async () => {
    expect((await call(server, 'POST', '/api/admin/users', { body: { name: 'x', password: 'pass1234' } })).body).toEqual({ message: 'Validation error, need specify either username or email' });
    const short = await call(server, 'POST', '/api/admin/users', { body: { login: 'shorty', password: 'abc' } });
    expect(short.status).toBe(400);
    expect(short.body).toEqual({ message: 'Password is missing or too short' });
    expect((await call(server, 'POST', '/api/admin/users', { body: { login: 'nopw' } })).status).toBe(400);
    expect((await call(server, 'POST', '/api/admin/users', { body: { login: 5, password: 'pass1234' } })).body).toEqual({ message: 'bad request data' });
  });

  it('answers 412 for a duplicate login or e-mail in any case, also under concurrency', async () => {
    const dup = await call(server, 'POST', '/api/admin/users', { body: { login: 'VIC', email: 'new@example.com', password: 'pass1234' } });
    expect(dup.status).toBe(412);
    expect(dup.body).toEqual({ message: "User with email 'new@example.com' or username 'VIC' already exists" });
    const crossed = await call(server, 'POST', '/api/admin/users', { body: { login: 'Vic@Example.com', password: 'pass1234' } });
    expect(crossed.status).toBe(412);
    const racing = await Promise.all(Array.from({ length: 8 }, () => call(server, 'POST', '/api/admin/users', { body: { login: 'racer', email: 'racer@example.com', password: 'pass1234' } })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
  });
});

describe('PUT /api/admin/users/:id/password', () => {
  it('replaces the password at once', async () => {
    const { id } = (await call(server, 'POST', '/api/admin/users', { body: { login: 'pw-user', password: 'old-pass' } })).body;
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('pw-user', 'old-pass') })).status).toBe(200);
    const res = await call(server, 'PUT', `/api/admin/users/${id}/password`, { body: { password: 'new-pass' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'User password updated' });
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('pw-user', 'old-pass') })).status).toBe(401);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('pw-user', 'new-pass') })).status).toBe(200);
  });

  it('validates', async () => {
    expect((await call(server, 'PUT', '/api/admin/users/1/password', { body: { password: 'abc' } })).body).toEqual({ message: 'New password too short' });
    expect((await call(server, 'PUT', '/api/admin/users/424242/password', { body: { password: 'abcdef' } })).status).toBe(404);
    expect((await call(server, 'PUT', '/api/admin/users/x/password', { body: { password: 'abcdef' } })).body).toEqual({ message: 'id is invalid' });
    expect((await call(server, 'PUT', '/api/admin/users/1/password', { body: {} })).body).toEqual({ message: 'bad request data' });
  });
});

describe('PUT /api/admin/users/:id/permissions', () => {
  it('grants and revokes with isServiceAdmin or the brand-named alias, in any key case', async () => {
    const { id } = (await call(server, 'POST', '/api/admin/users', { body: { login: 'perm-user', password: 'pass1234' } })).body;
    const auth = basic('perm-user', 'pass1234');
    expect((await call(server, 'GET', '/api/admin/stats', { auth })).status).toBe(403);
    const grant = await call(server, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isServiceAdmin: true } });
    expect(grant.body).toEqual({ message: 'User permissions updated' });
    expect((await call(server, 'GET', '/api/admin/stats', { auth })).status).toBe(200);
    await call(server, 'PUT', `/api/admin/users/${id}/permissions`, { body: { IsGrafanaAdmin: false } });
    expect((await call(server, 'GET', '/api/admin/stats', { auth })).status).toBe(403);
    await call(server, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isgrafanaadmin: true } });
    expect((await call(server, 'GET', '/api/admin/stats', { auth })).status).toBe(200);
    await call(server, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isServiceAdmin: false } });
    expect((await call(server, 'PUT', '/api/admin/users/424242/permissions', { body: { isServiceAdmin: true } })).body).toEqual({ message: 'user not found' });
  });

  it('refuses to remove the last server admin, even when two admins demote each other at once', async () => {
    const alone = await call(server, 'PUT', '/api/admin/users/1/permissions', { body: { isServiceAdmin: false } });
    expect(alone.status).toBe(400);
    expect(alone.body).toEqual({ message: 'cannot remove last grafana admin' });

    const { id } = (await call(server, 'POST', '/api/admin/users', { body: { login: 'second-admin', password: 'pass1234' } })).body;
    await call(server, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isServiceAdmin: true } });
    const results = await Promise.all([
      call(server, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isServiceAdmin: false } }),
      call(server, 'PUT', '/api/admin/users/1/permissions', { auth: basic('second-admin', 'pass1234'), body: { isServiceAdmin: false } }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const admins = await server.sql('select id from "user" where is_admin');
    expect(admins).toHaveLength(1);
    // Put the original admin back in charge for the rest of the file.
    if (admins[0]!.id !== 1) {
      await call(server, 'PUT', '/api/admin/users/1/permissions', { auth: basic('second-admin', 'pass1234'), body: { isServiceAdmin: true } });
      await call(server, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isServiceAdmin: false } });
    }
    expect(await server.sql('select id from "user" where is_admin')).toEqual([{ id: 1 }]);
  });
});

describe('DELETE /api/admin/users/:id', () => {
  it('deletes the user with memberships, stars and tokens', async () => {
    const { id } = (await call(server, 'POST', '/api/admin/users', { body: { login: 'doomed', password: 'pass1234' } })).body;
    const [dash] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values (1, 'doomed-d', 't') returning id`);
    await server.sql('insert into star (user_id, dashboard_id) values ($1, $2)', [id, dash!.id]);
    const res = await call(server, 'DELETE', `/api/admin/users/${id}`);
    expect(res.body).toEqual({ message: 'User deleted' });
    expect(await server.sql('select 1 from org_user where user_id = $1', [id])).toEqual([]);
    expect(await server.sql('select 1 from star where user_id = $1', [id])).toEqual([]);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('doomed', 'pass1234') })).status).toBe(401);
    const again = await call(server, 'DELETE', `/api/admin/users/${id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: 'user not found' });
  });
});

describe('POST /api/admin/pause-all-alerts', () => {
  it('pauses and unpauses every alert in one statement; alerts created while paused start paused', async () => {
    const create = (name: string) => gql(server, 'mutation($i: CreateAlertInput!) { createAlert(input: $i) { id state } }', { i: { name } });
    await create('a1');
    await create('a2');
    const paused = await call(server, 'POST', '/api/admin/pause-all-alerts', { body: { paused: true } });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ state: 'paused', message: 'alerts paused', alertsAffected: 2 });
    expect((await create('a3')).body.data.createAlert.state).toBe('paused');
    const listed = await gql(server, '{ alerts { name state } }');
    expect(listed.body.data.alerts).toEqual([{ name: 'a1', state: 'paused' }, { name: 'a2', state: 'paused' }, { name: 'a3', state: 'paused' }]);
    const unpaused = await call(server, 'POST', '/api/admin/pause-all-alerts', { body: { paused: false } });
    expect(unpaused.body).toEqual({ state: 'pending', message: 'alerts un paused', alertsAffected: 3 });
    expect((await create('a4')).body.data.createAlert.state).toBe('unknown');
    expect((await call(server, 'POST', '/api/admin/pause-all-alerts', { body: { paused: 'yes' } })).body).toEqual({ message: 'bad request data' });
  });
});
