import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';

// Spec 4.1 global users, with the original server's messages (reference 2.3-2.6), checked on two
// instances sharing one database as they would run behind a load balancer.

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => ([first, second] = [a, b]));

async function createUser(body: Record<string, unknown>, server: TestServer = first): Promise<number> {
  const res = await call(server, 'POST', '/api/admin/users', { body });
  expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { id: expect.any(Number), message: 'User created' } });
  return res.body.id;
}

const canRead = async (server: TestServer, auth: string) => (await call(server, 'GET', '/api/datasources', { auth })).status;

/** A transaction on its own connection, to hold row or index locks while requests run into them. */
async function openTransaction(server: TestServer): Promise<pg.Client> {
  const client = new pg.Client(server.connection);
  await client.connect();
  await client.query('begin');
  return client;
}

/** Waits until `count` sessions of the test database are blocked on a lock. */
async function waitForLockWaiters(count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [row] = await first.sql<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (row!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`fewer than ${count} sessions ever waited on a lock`);
}

describe('POST /api/admin/users', () => {
  it('creates a user in the auto-assign org with the auto-assign role, id first, password hashed', async () => {
    const res = await call(first, 'POST', '/api/admin/users', { body: { name: 'Jane Doe', email: 'jane@example.com', login: '  jane  ', password: 'jane-pass' } });
    expect(res.status).toBe(200);
    expect(res.text).toBe(`{"id":${res.body.id},"message":"User created"}`);
    const [row] = await first.sql('select login, email, name, is_admin, is_disabled, is_service_account, org_id, password_hash, last_seen_at from "user" where id = $1', [res.body.id]);
    expect(row).toMatchObject({ login: 'jane', email: 'jane@example.com', name: 'Jane Doe', is_admin: false, is_disabled: false, is_service_account: false, org_id: 1 });
    expect(String(row!.password_hash)).toMatch(/^\$argon2id\$/);
    // Never seen: a decade ago, so the new user does not count as active.
    expect(Date.now() - new Date(row!.last_seen_at as string).getTime()).toBeGreaterThan(9 * 365 * 24 * 3600 * 1000);
    expect(await first.sql('select org_id, role from org_user where user_id = $1', [res.body.id])).toEqual([{ org_id: 1, role: 'Viewer' }]);
    // The plaintext is nowhere in the database row.
    const [json] = await first.sql<{ doc: string }>('select row_to_json(u)::text as doc from "user" u where id = $1', [res.body.id]);
    expect(json!.doc).not.toContain('jane-pass');
    // The user can sign in with the login or the e-mail, on either instance.
    expect(await canRead(first, basic('jane', 'jane-pass'))).toBe(200);
    expect(await canRead(second, basic('JANE@example.com', 'jane-pass'))).toBe(200);
  });

  it('defaults the login to the e-mail and the e-mail to the login', async () => {
    const byEmail = await createUser({ email: ' only-mail@example.com ', password: 'pass1234' });
    const byLogin = await createUser({ login: 'only-login', password: 'pass1234' });
    expect(await first.sql('select login, email from "user" where id = any($1) order by id', [[byEmail, byLogin]])).toEqual([
      { login: 'only-mail@example.com', email: 'only-mail@example.com' },
      { login: 'only-login', email: 'only-login' },
    ]);
  });

  it('joins the org given as orgId, and refuses an unknown one', async () => {
    const [org] = await first.sql<{ id: number }>(`insert into org (name) values ('Second Org') returning id`);
    const id = await createUser({ login: 'in-second', password: 'pass1234', orgId: org!.id });
    expect(await first.sql('select org_id from "user" where id = $1', [id])).toEqual([{ org_id: org!.id }]);
    expect(await first.sql('select org_id, role from org_user where user_id = $1', [id])).toEqual([{ org_id: org!.id, role: 'Viewer' }]);

    const bad = await call(first, 'POST', '/api/admin/users', { body: { login: 'nowhere', password: 'pass1234', orgId: 987654 } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'organization not found' });
    expect(await first.sql(`select 1 from "user" where login = 'nowhere'`)).toEqual([]);
  });

  it('follows [users] auto_assign_org_id and auto_assign_org_role', async () => {
    const [org] = await first.sql<{ id: number }>(`insert into org (name) values ('Auto Org') returning id`);
    const configured = await startTestServer({
      connection: first.connection,
      overrides: { users: { auto_assign_org_id: String(org!.id), auto_assign_org_role: 'Editor' } },
    });
    try {
      const id = await createUser({ login: 'auto-assigned', password: 'pass1234' }, configured);
      expect(await first.sql('select org_id from "user" where id = $1', [id])).toEqual([{ org_id: org!.id }]);
      expect(await first.sql('select org_id, role from org_user where user_id = $1', [id])).toEqual([{ org_id: org!.id, role: 'Editor' }]);
    } finally {
      await configured.close();
    }
  });

  it('without auto_assign_org, gives the user an org of its own as Admin (orgId ignored)', async () => {
    const own = await startTestServer({ connection: first.connection, overrides: { users: { auto_assign_org: 'false' } } });
    try {
      const id = await createUser({ email: 'founder@example.com', password: 'pass1234', orgId: 1 }, own);
      const [org] = await first.sql<{ id: number; name: string }>('select o.id, o.name from org o join "user" u on u.org_id = o.id where u.id = $1', [id]);
      expect(org!.name).toBe('founder@example.com');
      expect(await first.sql('select org_id, role from org_user where user_id = $1', [id])).toEqual([{ org_id: org!.id, role: 'Admin' }]);
    } finally {
      await own.close();
    }
  });

  it.each<[string, unknown, number, string]>([
    ['neither login nor e-mail', { name: 'Nobody', password: 'pass1234' }, 400, 'Validation error, need specify either username or email'],
    ['blank login and e-mail', { login: '   ', email: ' ', password: 'pass1234' }, 400, 'Validation error, need specify either username or email'],
    ['a 3-character password', { login: 'shorty', password: 'abc' }, 400, 'Password is missing or too short'],
    ['no password', { login: 'no-password' }, 400, 'bad request data'],
    ['an empty password', { login: 'empty-password', password: '' }, 400, 'bad request data'],
    ['a number as login', { login: 5, password: 'pass1234' }, 400, 'bad request data'],
    ['a login longer than its column', { login: 'l'.repeat(191), password: 'pass1234' }, 400, 'login is too long (at most 190 characters)'],
    ['an e-mail longer than its column', { login: 'long-mail', email: `${'e'.repeat(180)}@example.com`, password: 'pass1234' }, 400, 'email is too long (at most 190 characters)'],
    ['a name longer than its column', { login: 'long-name', name: 'n'.repeat(256), password: 'pass1234' }, 400, 'name is too long (at most 255 characters)'],
    ['an array body', [{ login: 'array', password: 'pass1234' }], 400, 'bad request data'],
  ])('refuses %s', async (_case, body, status, message) => {
    const res = await call(first, 'POST', '/api/admin/users', { body });
    expect({ status: res.status, body: res.body }).toEqual({ status, body: { message } });
  });

  it('refuses text PostgreSQL cannot store (NUL) with a 400, over REST and GraphQL', async () => {
    const rest = await call(first, 'POST', '/api/admin/users', { body: { login: 'nul\u0000login', password: 'pass1234' } });
    expect(rest.status).toBe(400);
    expect(typeof rest.body.message).toBe('string');
    const graphql = await gql(first, 'mutation($input: UserCreateInput!) { userCreate(input: $input) { user { id } userErrors { code message } } }', { input: { login: 'nul\u0000login', password: 'pass1234' } });
    expect({ status: graphql.status, data: graphql.body.data }).toEqual({
      status: 200, data: { userCreate: { user: null, userErrors: [{ code: 'BAD_REQUEST', message: 'login must not contain NUL characters' }] } },
    });
  });

  it('refuses bodies that are not JSON', async () => {
    const notJson = await call(first, 'POST', '/api/admin/users', { rawBody: 'login=x&password=y', headers: { 'content-type': 'application/json' } });
    expect({ status: notJson.status, body: notJson.body }).toEqual({ status: 400, body: { message: 'bad request data' } });
    const wrongType = await call(first, 'POST', '/api/admin/users', { rawBody: '{"login":"x","password":"pass1234"}', headers: { 'content-type': 'text/plain' } });
    expect({ status: wrongType.status, body: wrongType.body }).toEqual({ status: 400, body: { message: 'bad request data' } });
    // None of the refused requests left a user behind.
    const [row] = await first.sql<{ n: number }>(`select count(*)::int as n from "user" where login in ('x', 'shorty', 'no-password', 'empty-password', 'long-mail', 'long-name', 'array')`);
    expect(row!.n).toBe(0);
  });

  it('answers 412 for a login or e-mail already taken, in any case, checked against both', async () => {
    const taken = { email: 'taken@example.com', login: 'taken' };
    await createUser({ ...taken, password: 'pass1234' });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ login: 'TAKEN', email: 'other@example.com' }, "User with email 'other@example.com' or username 'TAKEN' already exists"],
      [{ login: 'fresh', email: 'Taken@Example.com' }, "User with email 'Taken@Example.com' or username 'fresh' already exists"],
      // The new login is an existing e-mail, and the new e-mail an existing login.
      [{ login: 'taken@EXAMPLE.com' }, "User with email '' or username 'taken@EXAMPLE.com' already exists"],
      [{ login: 'fresh2', email: 'Taken' }, "User with email 'Taken' or username 'fresh2' already exists"],
      // Trimmed before the check and in the message.
      [{ login: '  taken  ', email: 'other2@example.com' }, "User with email 'other2@example.com' or username 'taken' already exists"],
    ];
    for (const [body, message] of cases) {
      const res = await call(first, 'POST', '/api/admin/users', { body: { ...body, password: 'pass1234' } });
      expect({ body, status: res.status, reply: res.body }).toEqual({ body, status: 412, reply: { message } });
    }
    const [row] = await first.sql<{ n: number }>(`select count(*)::int as n from "user" where lower(login) in ('fresh', 'fresh2') or lower(email) like 'other%'`);
    expect(row!.n).toBe(0);
  });

  it('answers 412 when the duplicate commits while the creation runs (the unique index decides)', async () => {
    // A concurrent creation holds an uncommitted row: the pre-check cannot see it, the insert waits on the index.
    const holder = await openTransaction(first);
    try {
      await holder.query(`insert into "user" (login, email, org_id) values ('held', 'held@example.com', 1)`);
      const pending = call(second, 'POST', '/api/admin/users', { body: { login: 'HELD', email: 'someone@example.com', password: 'pass1234' } });
      await waitForLockWaiters(1);
      await holder.query('commit');
      const res = await pending;
      expect({ status: res.status, body: res.body }).toEqual({ status: 412, body: { message: "User with email 'someone@example.com' or username 'HELD' already exists" } });
    } finally {
      await holder.end();
    }
    expect(await first.sql(`select login from "user" where lower(login) = 'held'`)).toEqual([{ login: 'held' }]);
  });

  it('creates exactly one of many identical concurrent creations, over both instances', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      call(i % 2 ? first : second, 'POST', '/api/admin/users', { body: { login: 'racer', email: 'racer@example.com', password: 'pass1234' } })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    expect(await first.sql(`select count(*)::int as n from "user" where login = 'racer'`)).toEqual([{ n: 1 }]);
  });

  it('without auto-assign, tells a racing twin (412) from an org that merely has the name (409)', async () => {
    const own = await startTestServer({ connection: first.connection, overrides: { users: { auto_assign_org: 'false' } } });
    try {
      // Only an org of that name commits meanwhile.
      let holder = await openTransaction(first);
      try {
        await holder.query(`insert into org (name) values ('solo@example.com')`);
        const pending = call(own, 'POST', '/api/admin/users', { body: { email: 'solo@example.com', password: 'pass1234' } });
        await waitForLockWaiters(1);
        await holder.query('commit');
        const res = await pending;
        expect({ status: res.status, body: res.body }).toEqual({ status: 409, body: { message: 'Organization name taken' } });
      } finally {
        await holder.end();
      }
      // A twin user with its org commits meanwhile.
      holder = await openTransaction(first);
      try {
        const { rows } = await holder.query<{ id: number }>(`insert into org (name) values ('twin@example.com') returning id`);
        await holder.query(`insert into "user" (login, email, org_id) values ('twin@example.com', 'twin@example.com', $1)`, [rows[0]!.id]);
        const pending = call(own, 'POST', '/api/admin/users', { body: { email: 'twin@example.com', password: 'pass1234' } });
        await waitForLockWaiters(1);
        await holder.query('commit');
        const res = await pending;
        expect({ status: res.status, body: res.body }).toEqual({ status: 412, body: { message: "User with email 'twin@example.com' or username '' already exists" } });
      } finally {
        await holder.end();
      }
    } finally {
      await own.close();
    }
  });

  it('is the GraphQL mutation userCreate too, a duplicate a user error', async () => {
    const create = 'mutation($input: UserCreateInput!) { userCreate(input: $input) { user { databaseId login } userErrors { code message } } }';
    const res = await gql(first, create, { input: { login: 'via-graphql', password: 'pass1234' } });
    expect(res.body.data?.userCreate).toEqual({ user: { databaseId: expect.any(Number), login: 'via-graphql' }, userErrors: [] });
    const dup = await gql(first, create, { input: { login: 'via-graphql', password: 'pass1234' } });
    expect(dup.status).toBe(200);
    expect(dup.body.data?.userCreate).toEqual({ user: null, userErrors: [{ code: 'PRECONDITION_FAILED', message: 'User with email \'\' or username \'via-graphql\' already exists' }] });
  });
});

describe('PUT /api/admin/users/:id/password', () => {
  it('replaces the password at once on every instance and clears the user\'s failed logins', async () => {
    const id = await createUser({ login: 'pw-user', password: 'old-pass' });
    const old = basic('pw-user', 'old-pass');
    // Both instances have verified (and cached) the old password.
    expect(await canRead(first, old)).toBe(200);
    expect(await canRead(second, old)).toBe(200);
    await first.sql(`insert into login_attempt (username) values ('pw-user'), ('pw-user'), ('someone-else')`);
    const [before] = await first.sql<{ password_hash: string }>('select password_hash from "user" where id = $1', [id]);

    const res = await call(first, 'PUT', `/api/admin/users/${id}/password`, { body: { password: 'new-pass' } });
    expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: '{"message":"User password updated"}' });
    expect(await first.sql(`select username from login_attempt where username in ('pw-user', 'someone-else')`)).toEqual([{ username: 'someone-else' }]);

    expect(await canRead(second, old)).toBe(401);
    expect(await canRead(first, old)).toBe(401);
    expect(await canRead(second, basic('pw-user', 'new-pass'))).toBe(200);
    expect(await canRead(first, basic('pw-user', 'new-pass'))).toBe(200);
    const [after] = await first.sql<{ password_hash: string }>('select password_hash from "user" where id = $1', [id]);
    expect(after!.password_hash).toMatch(/^\$argon2id\$/);
    expect(after!.password_hash).not.toBe(before!.password_hash);
    expect(after!.password_hash).not.toContain('new-pass');
  });

  it('refuses bad input and unknown users, changing nothing', async () => {
    const id = await createUser({ login: 'pw-keeper', password: 'keep-pass' });
    const cases: Array<[string, unknown, number, string]> = [
      [`/api/admin/users/${id}/password`, { password: 'abc' }, 400, 'New password too short'],
      [`/api/admin/users/${id}/password`, { password: '' }, 400, 'bad request data'],
      [`/api/admin/users/${id}/password`, {}, 400, 'bad request data'],
      [`/api/admin/users/${id}/password`, { password: 1234 }, 400, 'bad request data'],
      ['/api/admin/users/424242/password', { password: 'abcdef' }, 404, 'user not found'],
      ['/api/admin/users/x/password', { password: 'abcdef' }, 400, 'id is invalid'],
    ];
    for (const [path, body, status, message] of cases) {
      const res = await call(first, 'PUT', path, { body });
      expect({ path, body, status: res.status, reply: res.body }).toEqual({ path, body, status, reply: { message } });
    }
    expect(await canRead(first, basic('pw-keeper', 'keep-pass'))).toBe(200);
  });

  it('does not touch service accounts (404)', async () => {
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'pw-bot' } });
    const res = await call(first, 'PUT', `/api/admin/users/${sa.body.id}/password`, { body: { password: 'abcdef' } });
    expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: 'user not found' } });
    expect(await first.sql('select password_hash from "user" where id = $1', [sa.body.id])).toEqual([{ password_hash: null }]);
  });
});

describe('PUT /api/admin/users/:id/permissions', () => {
  const adminsNow = async () => (await first.sql<{ id: number }>('select id from "user" where is_admin order by id')).map((r) => r.id);
  const permissions = (id: number, body: unknown, auth = ADMIN, server = first) => call(server, 'PUT', `/api/admin/users/${id}/permissions`, { auth, body });

  it('grants and revokes with isServiceAdmin or isGrafanaAdmin, keys in any case, at once on the other instance', async () => {
    const id = await createUser({ login: 'perm-user', password: 'pass1234' });
    const auth = basic('perm-user', 'pass1234');
    expect((await call(second, 'GET', '/api/admin/stats', { auth })).status).toBe(403);

    const granted = await permissions(id, { isServiceAdmin: true });
    expect({ status: granted.status, text: granted.text }).toEqual({ status: 200, text: '{"message":"User permissions updated"}' });
    expect((await call(second, 'GET', '/api/admin/stats', { auth })).status).toBe(200);

    await permissions(id, { isGrafanaAdmin: false });
    expect((await call(second, 'GET', '/api/admin/stats', { auth })).status).toBe(403);
    await permissions(id, { ISSERVICEADMIN: true });
    expect(await adminsNow()).toContain(id);
    await permissions(id, { isgrafanaadmin: false });
    expect(await adminsNow()).not.toContain(id);
    await permissions(id, { IsGrafanaAdmin: true });
    expect(await adminsNow()).toContain(id);

    // A demoted admin loses the admin area on the very next request, on the instance that did not demote it.
    expect((await call(second, 'GET', '/api/admin/settings', { auth })).status).toBe(200);
    await permissions(id, { isServiceAdmin: false });
    const denied = await call(second, 'GET', '/api/admin/settings', { auth });
    expect({ status: denied.status, body: denied.body }).toEqual({ status: 403, body: { message: 'Permission denied' } });
  });

  it('refuses a body without the flag instead of reading it as a demotion, and unknown users', async () => {
    const id = await createUser({ login: 'perm-kept', password: 'pass1234' });
    await permissions(id, { isServiceAdmin: true });
    for (const body of [{}, { isServiceAdmin: null }, { isServiceAdmin: 'yes' }, { admin: false }, { isServiceAdmin: true, isGrafanaAdmin: 'yes' }, { isGrafanaAdmin: null }]) {
      const res = await permissions(id, body);
      expect({ body, status: res.status, reply: res.body }).toEqual({ body, status: 400, reply: { message: 'bad request data' } });
    }
    expect(await adminsNow()).toContain(id);
    await permissions(id, { isServiceAdmin: false });
    for (const path of ['/api/admin/users/424242/permissions']) {
      const res = await call(first, 'PUT', path, { body: { isServiceAdmin: true } });
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: 'user not found' } });
    }
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'perm-bot' } });
    expect((await permissions(sa.body.id, { isServiceAdmin: true })).status).toBe(404);
    expect(await first.sql('select is_admin from "user" where id = $1', [sa.body.id])).toEqual([{ is_admin: false }]);
  });

  it('refuses to remove the last server admin, but lets an admin step down when another remains', async () => {
    expect(await adminsNow()).toEqual([1]);
    const alone = await permissions(1, { isServiceAdmin: false });
    expect({ status: alone.status, body: alone.body }).toEqual({ status: 400, body: { message: 'cannot remove last grafana admin' } });
    expect(await adminsNow()).toEqual([1]);

    const deputy = await createUser({ login: 'deputy', password: 'pass1234' });
    await permissions(deputy, { isServiceAdmin: true });
    // The deputy demotes itself: allowed, the original admin remains.
    expect((await permissions(deputy, { isServiceAdmin: false }, basic('deputy', 'pass1234'))).status).toBe(200);
    expect(await adminsNow()).toEqual([1]);
  });

  it('keeps one admin when two admins demote each other at the same moment (forced interleaving)', async () => {
    const a = await createUser({ login: 'admin-a', password: 'pass-a' });
    const b = await createUser({ login: 'admin-b', password: 'pass-b' });
    // a and b are the only admins.
    await first.sql('update "user" set is_admin = (id = any($1))', [[a, b]]);
    // Hold both admin rows so the two demotions start together and then race for them.
    const holder = await openTransaction(first);
    let results: Array<{ status: number; body: unknown }>;
    try {
      await holder.query('select id from "user" where id = any($1) for update', [[a, b]]);
      const pending = Promise.all([
        permissions(b, { isServiceAdmin: false }, basic('admin-a', 'pass-a'), first),
        permissions(a, { isServiceAdmin: false }, basic('admin-b', 'pass-b'), second),
      ]);
      await waitForLockWaiters(2);
      await holder.query('commit');
      results = (await pending).map((r) => ({ status: r.status, body: r.body }));
    } finally {
      await holder.end();
    }
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(results.find((r) => r.status === 400)!.body).toEqual({ message: 'cannot remove last grafana admin' });
    const remaining = await adminsNow();
    expect(remaining).toHaveLength(1);
    expect([a, b]).toContain(remaining[0]);
    await first.sql('update "user" set is_admin = (id = 1)');
  });

  it('keeps one admin over repeated free-running mutual demotions on two instances', async () => {
    const a = await createUser({ login: 'racer-a', password: 'pass-a' });
    const b = await createUser({ login: 'racer-b', password: 'pass-b' });
    for (let round = 0; round < 5; round++) {
      await first.sql('update "user" set is_admin = (id = any($1))', [[a, b]]);
      const results = await Promise.all([
        permissions(b, { isServiceAdmin: false }, basic('racer-a', 'pass-a'), first),
        permissions(a, { isGrafanaAdmin: false }, basic('racer-b', 'pass-b'), second),
      ]);
      // The loser is refused as the last admin (400), or, when the winner committed before the
      // loser's request was let in, as no longer an admin (403): either way exactly one demotion.
      const statuses = results.map((r) => r.status).sort();
      expect([[200, 400], [200, 403]]).toContainEqual(statuses);
      expect(await adminsNow()).toHaveLength(1);
    }
    await first.sql('update "user" set is_admin = (id = 1)');
  });
});

describe('DELETE /api/admin/users/:id', () => {
  it('deletes the user with its memberships and stars; it cannot sign in again on any instance', async () => {
    const id = await createUser({ login: 'doomed', password: 'pass1234' });
    const [org] = await first.sql<{ id: number }>(`insert into org (name) values ('Doomed Org') returning id`);
    await first.sql(`insert into org_user (org_id, user_id, role) values ($1, $2, 'Editor')`, [org!.id, id]);
    const dashboards = await first.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values (1, 'doom-1', 'a'), (1, 'doom-2', 'b') returning id`);
    for (const d of dashboards) await first.sql('insert into star (user_id, dashboard_id) values ($1, $2)', [id, d.id]);
    // Someone else's star on the same dashboard stays.
    await first.sql('insert into star (user_id, dashboard_id) values (1, $1)', [dashboards[0]!.id]);
    const auth = basic('doomed', 'pass1234');
    expect(await canRead(first, auth)).toBe(200);
    expect(await canRead(second, auth)).toBe(200);

    const res = await call(first, 'DELETE', `/api/admin/users/${id}`);
    expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: '{"message":"User deleted"}' });
    expect(await first.sql('select 1 from "user" where id = $1', [id])).toEqual([]);
    expect(await first.sql('select 1 from org_user where user_id = $1', [id])).toEqual([]);
    expect(await first.sql('select 1 from star where user_id = $1', [id])).toEqual([]);
    expect(await first.sql('select user_id from star where dashboard_id = $1', [dashboards[0]!.id])).toEqual([{ user_id: 1 }]);
    expect(await canRead(second, auth)).toBe(401);
    expect(await canRead(first, auth)).toBe(401);

    const again = await call(first, 'DELETE', `/api/admin/users/${id}`);
    expect({ status: again.status, body: again.body }).toEqual({ status: 404, body: { message: 'user not found' } });
    expect((await call(first, 'DELETE', '/api/admin/users/abc')).body).toEqual({ message: 'id is invalid' });
  });

  it('answers 404 for a service account, whose tokens go only with the account itself', async () => {
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'delete-bot', role: 'Viewer' } });
    const token = await call(first, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { body: { name: 'delete-bot-token' } });
    const res = await call(first, 'DELETE', `/api/admin/users/${sa.body.id}`);
    expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: 'user not found' } });
    expect(await canRead(second, `Bearer ${token.body.key}`)).toBe(200);

    // Deleting the account removes its api_key rows with it (the foreign key cascades).
    expect((await call(first, 'DELETE', `/api/serviceaccounts/${sa.body.id}`)).status).toBe(200);
    expect(await first.sql('select 1 from api_key where service_account_id = $1 or id = $2', [sa.body.id, token.body.id])).toEqual([]);
    expect(await first.sql('select 1 from org_user where user_id = $1', [sa.body.id])).toEqual([]);
    expect(await canRead(second, `Bearer ${token.body.key}`)).toBe(401);
  });

  it('is the GraphQL mutation userDelete too', async () => {
    const id = await createUser({ login: 'gql-doomed', password: 'pass1234' });
    const globalId = Buffer.from(`User:${id}`).toString('base64url');
    const doc = 'mutation($id: ID!) { userDelete(id: $id) { deletedUserId userErrors { code message } } }';
    const res = await gql(first, doc, { id: globalId });
    expect(res.body.data).toEqual({ userDelete: { deletedUserId: globalId, userErrors: [] } });
    const again = await gql(first, doc, { id: globalId });
    expect(again.body.data).toEqual({ userDelete: { deletedUserId: null, userErrors: [{ code: 'NOT_FOUND', message: 'user not found' }] } });
  });
});
