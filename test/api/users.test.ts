import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';

// The user routes real clients call (grafana-client's users/user/admin elements, the Terraform
// provider's grafana_user), with the original server's shapes, checked on two instances.

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => ([first, second] = [a, b]));

async function createUser(login: string, extra: Record<string, unknown> = {}, password = 'user-pass'): Promise<number> {
  const res = await call(first, 'POST', '/api/admin/users', { body: { login, email: `${login}@example.com`, name: `Name ${login}`, password, ...extra } });
  expect(res.status).toBe(200);
  return res.body.id;
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('GET /api/users/:id', () => {
  it('reads back a user just created, as Terraform does after POST /api/admin/users, in the original field order', async () => {
    const id = await createUser('tf-user');
    const res = await call(second, 'GET', `/api/users/${id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([
      'id', 'uid', 'email', 'name', 'login', 'theme', 'orgId', 'isGrafanaAdmin', 'isDisabled', 'isExternal', 'isExternallySynced',
      'isGrafanaAdminExternallySynced', 'authLabels', 'updatedAt', 'createdAt', 'avatarUrl',
    ]);
    expect(res.body).toMatchObject({
      id, email: 'tf-user@example.com', name: 'Name tf-user', login: 'tf-user', theme: '', orgId: 1,
      isGrafanaAdmin: false, isDisabled: false, isExternal: false, authLabels: [],
    });
    expect(res.body.uid).toMatch(/^[0-9a-f]{14}$/);
    expect(res.body.createdAt).toMatch(ISO);
    // The original's Gravatar path: md5 of the trimmed, lower-cased e-mail.
    expect(res.body.avatarUrl).toBe(`/avatar/${createHash('md5').update('tf-user@example.com').digest('hex')}`);
  });

  it('answers 404 "user not found" for unknown ids and service accounts, 400 for a non-integer id', async () => {
    expect(await call(first, 'GET', '/api/users/987654')).toMatchObject({ status: 404, body: { message: 'user not found' } });
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'not-a-user' } });
    expect((await call(first, 'GET', `/api/users/${sa.body.id}`)).body).toEqual({ message: 'user not found' });
    expect(await call(first, 'GET', '/api/users/abc')).toMatchObject({ status: 400, body: { message: 'id is invalid' } });
  });
});

describe('GET /api/users and /api/users/search', () => {
  it('page by login, with the original defaults, and end with an empty page', async () => {
    for (const n of [3, 1, 2]) await createUser(`pager-${n}`);
    const all = await call(first, 'GET', '/api/users?query=pager-');
    expect(all.status).toBe(200);
    expect(all.body.map((u: { login: string }) => u.login)).toEqual(['pager-1', 'pager-2', 'pager-3']);
    expect(Object.keys(all.body[0])).toEqual(['id', 'uid', 'name', 'login', 'email', 'avatarUrl', 'isAdmin', 'isDisabled', 'lastSeenAt', 'lastSeenAtAge', 'authLabels']);
    // Created users were never seen: a decade ago, as the original stamps them.
    expect(all.body[0].lastSeenAtAge).toBe('10 years');

    const pages = [];
    for (let page = 1; page <= 4; page++) pages.push((await call(first, 'GET', `/api/users/search?query=PAGER&perpage=2&page=${page}`)).body);
    expect(pages.map((p) => p.users.map((u: { login: string }) => u.login))).toEqual([['pager-1', 'pager-2'], ['pager-3'], [], []]);
    expect(pages.map((p) => [p.totalCount, p.page, p.perPage])).toEqual([[3, 1, 2], [3, 2, 2], [3, 3, 2], [3, 4, 2]]);
    expect(Object.keys(pages[0])).toEqual(['totalCount', 'users', 'page', 'perPage']);

    // Page 0, negative or unparsable values fall back to page 1 and 1000 per page, as in the original.
    const defaults = await call(first, 'GET', '/api/users/search?query=pager&page=0&perpage=abc');
    expect([defaults.body.page, defaults.body.perPage, defaults.body.users.length]).toEqual([1, 1000, 3]);
    const negative = await call(first, 'GET', '/api/users/search?query=pager&page=-3&perpage=-1');
    expect([negative.body.page, negative.body.perPage]).toEqual([1, 1000]);
    // A huge page is simply past the end.
    expect((await call(first, 'GET', '/api/users?perpage=2147483647&page=2147483647')).body).toEqual([]);
    // Wildcards are matched literally; the query matches e-mails and names too.
    expect((await call(first, 'GET', '/api/users?query=%25')).body).toEqual([]);
    expect((await call(first, 'GET', '/api/users?query=Name%20pager-2')).body.map((u: { login: string }) => u.login)).toEqual(['pager-2']);
    // Service accounts are never listed.
    await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'pager-sa' } });
    expect((await call(first, 'GET', '/api/users/search?query=pager')).body.totalCount).toBe(3);
  });
});

describe('GET /api/users/lookup', () => {
  it('finds by login or e-mail in any case, and answers 404 otherwise', async () => {
    const id = await createUser('Looked-Up');
    for (const q of ['looked-up', 'LOOKED-UP@example.com']) {
      const res = await call(first, 'GET', `/api/users/lookup?loginOrEmail=${encodeURIComponent(q)}`);
      expect({ q, status: res.status, id: res.body.id, login: res.body.login }).toEqual({ q, status: 200, id, login: 'Looked-Up' });
    }
    expect(await call(first, 'GET', '/api/users/lookup?loginOrEmail=nobody')).toMatchObject({ status: 404, body: { message: 'user not found' } });
    expect(await call(first, 'GET', '/api/users/lookup')).toMatchObject({ status: 404, body: { message: 'user not found' } });
  });
});

describe('PUT /api/users/:id', () => {
  it('updates name, e-mail, login and theme; empty fields keep their values; the login follows the e-mail when not sent', async () => {
    const id = await createUser('to-update');
    expect(await call(first, 'PUT', `/api/users/${id}`, { body: { name: 'New Name', login: 'updated', email: 'updated@example.com', theme: 'dark' } }))
      .toMatchObject({ status: 200, body: { message: 'User updated' } });
    expect((await call(second, 'GET', `/api/users/${id}`)).body).toMatchObject({ name: 'New Name', login: 'updated', email: 'updated@example.com', theme: 'dark' });
    // The new login signs in at once; the old one no longer does.
    expect((await call(second, 'GET', '/api/user', { auth: basic('updated', 'user-pass') })).status).toBe(200);
    expect((await call(second, 'GET', '/api/user', { auth: basic('to-update', 'user-pass') })).status).toBe(401);

    expect((await call(first, 'PUT', `/api/users/${id}`, { body: { email: 'mail-login@example.com' } })).status).toBe(200);
    expect((await call(first, 'GET', `/api/users/${id}`)).body).toMatchObject({ name: 'New Name', login: 'mail-login@example.com', email: 'mail-login@example.com', theme: 'dark' });
  });

  it('refuses an empty login and e-mail, a taken login or e-mail, unknown users and bad input', async () => {
    const id = await createUser('keeper');
    await createUser('taken');
    const empty = await call(first, 'PUT', `/api/users/${id}`, { body: { name: 'x' } });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: 'Need to specify either username or email', messageId: 'user.empty-username-and-email', statusCode: 400, traceID: '' });
    for (const body of [{ login: 'TAKEN' }, { login: 'keeper', email: 'taken@example.com' }, { login: 'taken@example.com' }]) {
      const res = await call(first, 'PUT', `/api/users/${id}`, { body });
      expect({ body, status: res.status, message: res.body.message }).toEqual({ body, status: 409, message: 'Update would result in user login conflict' });
    }
    // Its own login and e-mail in another case are no conflict.
    expect((await call(first, 'PUT', `/api/users/${id}`, { body: { login: 'KEEPER', email: 'KEEPER@example.com' } })).status).toBe(200);
    expect(await call(first, 'PUT', '/api/users/987654', { body: { login: 'ghost' } })).toMatchObject({ status: 404, body: { message: 'user not found' } });
    expect((await call(first, 'PUT', `/api/users/${id}`, { body: { login: 'x'.repeat(191) } })).status).toBe(400);
    expect((await call(first, 'PUT', `/api/users/${id}`, { rawBody: '{"login":', headers: { 'content-type': 'application/json' } })).body).toEqual({ message: 'bad request data' });
  });
});

describe('GET /api/users/:id/orgs and the signed-in user', () => {
  it('lists orgs by name with roles; GET/PUT /api/user act on the caller only', async () => {
    const id = await createUser('member');
    const org = await call(first, 'POST', '/api/orgs', { body: { name: 'aaa first by name' } });
    expect((await call(first, 'POST', `/api/orgs/${org.body.orgId}/users`, { body: { loginOrEmail: 'member', role: 'Editor' } })).status).toBe(200);
    const expected = [{ orgId: org.body.orgId, name: 'aaa first by name', role: 'Editor' }, { orgId: 1, name: 'Main Org.', role: 'Viewer' }];
    expect((await call(first, 'GET', `/api/users/${id}/orgs`)).body).toEqual(expected);
    const auth = basic('member', 'user-pass');
    expect((await call(second, 'GET', '/api/user/orgs', { auth })).body).toEqual(expected);

    const me = await call(second, 'GET', '/api/user', { auth });
    expect(me.body).toMatchObject({ id, login: 'member', orgId: 1, isGrafanaAdmin: false });
    expect((await call(second, 'PUT', '/api/user', { auth, body: { name: 'Me Myself', login: 'member', email: 'member@example.com' } })).body).toEqual({ message: 'User updated' });
    expect((await call(first, 'GET', `/api/users/${id}`)).body.name).toBe('Me Myself');
  });

  it('refuses tokens on the signed-in user routes (they act for an org, not a user)', async () => {
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'user-route-sa', role: 'Admin' } });
    const token = await call(first, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { body: { name: 't' } });
    for (const [method, path] of [['GET', '/api/user'], ['PUT', '/api/user'], ['GET', '/api/user/orgs'], ['PUT', '/api/user/password'], ['POST', '/api/user/using/1']]) {
      const res = await call(first, method!, path!, { auth: `Bearer ${token.body.key}`, body: method === 'GET' ? undefined : {} });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 403, body: { message: 'Endpoint only available for users' } });
    }
  });
});

describe('PUT /api/user/password', () => {
  it('checks the old password, and the old one stops working on every instance at once', async () => {
    await createUser('pw-changer', {}, 'old-secret');
    const oldAuth = basic('pw-changer', 'old-secret');
    // Both instances have verified (and cached) the old password.
    expect((await call(first, 'GET', '/api/user', { auth: oldAuth })).status).toBe(200);
    expect((await call(second, 'GET', '/api/user', { auth: oldAuth })).status).toBe(200);

    expect(await call(first, 'PUT', '/api/user/password', { auth: oldAuth, body: { oldPassword: 'wrong', newPassword: 'new-secret', confirmNew: 'new-secret' } }))
      .toMatchObject({ status: 401, body: { message: 'Invalid old password' } });
    // Absent or null passwords are empty ones: a wrong old password, as the original answers them.
    for (const body of [{}, { oldPassword: null, newPassword: null }, { OLDPASSWORD: null }]) {
      expect(await call(first, 'PUT', '/api/user/password', { auth: oldAuth, body })).toMatchObject({ status: 401, body: { message: 'Invalid old password' } });
    }
    expect(await call(first, 'PUT', '/api/user/password', { auth: oldAuth, body: { oldPassword: 5, newPassword: 'new-secret' } }))
      .toMatchObject({ status: 400, body: { message: 'bad request data' } });
    const short = await call(first, 'PUT', '/api/user/password', { auth: oldAuth, body: { oldPassword: 'old-secret', newPassword: 'abc' } });
    expect(short.status).toBe(400);
    expect(short.body.message).toBe('New password is too short');
    expect((await call(second, 'GET', '/api/user', { auth: oldAuth })).status).toBe(200);

    expect(await call(first, 'PUT', '/api/user/password', { auth: oldAuth, body: { oldPassword: 'old-secret', newPassword: 'new-secret', confirmNew: 'new-secret' } }))
      .toMatchObject({ status: 200, body: { message: 'User password changed' } });
    expect((await call(second, 'GET', '/api/user', { auth: oldAuth })).status).toBe(401);
    expect((await call(first, 'GET', '/api/user', { auth: oldAuth })).status).toBe(401);
    expect((await call(second, 'GET', '/api/user', { auth: basic('pw-changer', 'new-secret') })).status).toBe(200);
    const [row] = await first.sql<{ doc: string }>(`select row_to_json(u)::text as doc from "user" u where login = 'pw-changer'`);
    expect(row!.doc).not.toContain('new-secret');
  });
});

describe('POST /api/user/using/:id', () => {
  it('switches the org later requests act in, on every instance; a non-member org is 401', async () => {
    await createUser('switcher');
    const org = await call(first, 'POST', '/api/orgs', { body: { name: 'switch target' } });
    const orgId = org.body.orgId as number;
    await call(first, 'POST', `/api/orgs/${orgId}/users`, { body: { loginOrEmail: 'switcher', role: 'Admin' } });
    await call(first, 'POST', '/api/datasources', { auth: ADMIN, body: { name: 'in-main', type: 'loki', access: 'proxy' } });
    const auth = basic('switcher', 'user-pass');
    const names = async (server: TestServer) => (await call(server, 'GET', '/api/datasources', { auth })).body.map((d: { name: string }) => d.name);
    expect(await names(second)).toContain('in-main');
    expect((await call(second, 'GET', '/api/org', { auth })).body.id).toBe(1);

    expect(await call(first, 'POST', `/api/user/using/${orgId}`, { auth })).toMatchObject({ status: 200, body: { message: 'Active organization changed' } });
    expect((await call(second, 'GET', '/api/org', { auth })).body).toEqual({ id: orgId, name: 'switch target', address: { address1: '', address2: '', city: '', zipCode: '', state: '', country: '' } });
    expect(await names(second)).toEqual([]);
    expect((await call(second, 'GET', '/api/user', { auth })).body.orgId).toBe(orgId);

    const stranger = await call(first, 'POST', '/api/orgs', { body: { name: 'not mine' } });
    expect(await call(first, 'POST', `/api/user/using/${stranger.body.orgId}`, { auth })).toMatchObject({ status: 401, body: { message: 'Not a valid organization' } });
    expect(await call(first, 'POST', '/api/user/using/x', { auth })).toMatchObject({ status: 400, body: { message: 'id is invalid' } });
  });
});

describe('POST /api/admin/users/:id/disable and /enable', () => {
  it('refuse the disabled user at once on every instance (401) and restore access when enabled', async () => {
    const id = await createUser('to-disable');
    const auth = basic('to-disable', 'user-pass');
    expect((await call(first, 'GET', '/api/datasources', { auth })).status).toBe(200);
    expect((await call(second, 'GET', '/api/datasources', { auth })).status).toBe(200);

    expect(await call(first, 'POST', `/api/admin/users/${id}/disable`)).toMatchObject({ status: 200, body: { message: 'User disabled' } });
    for (const server of [second, first]) {
      const res = await call(server, 'GET', '/api/datasources', { auth });
      expect(res.status).toBe(401);
      expect(res.body.messageId).toBe('identity.disabled');
    }
    expect((await call(second, 'GET', `/api/users/${id}`)).body.isDisabled).toBe(true);

    expect(await call(second, 'POST', `/api/admin/users/${id}/enable`)).toMatchObject({ status: 200, body: { message: 'User enabled' } });
    expect((await call(first, 'GET', '/api/datasources', { auth })).status).toBe(200);
    expect((await call(second, 'GET', '/api/datasources', { auth })).status).toBe(200);

    expect(await call(first, 'POST', '/api/admin/users/987654/disable')).toMatchObject({ status: 404, body: { message: 'user not found' } });
    expect(await call(first, 'POST', '/api/admin/users/987654/enable')).toMatchObject({ status: 404, body: { message: 'user not found' } });
  });

  it('never disables the last enabled server admin', async () => {
    const [admin] = await first.sql<{ id: number }>(`select id from "user" where login = 'admin'`);
    const res = await call(first, 'POST', `/api/admin/users/${admin!.id}/disable`);
    expect(res).toMatchObject({ status: 400, body: { message: 'cannot remove last grafana admin' } });
    expect((await call(second, 'GET', '/api/admin/stats')).status).toBe(200);
  });
});

describe('GraphQL', () => {
  it('offers the same: viewer, users, user and a user search (REST\'s paged search is not on /graphql)', async () => {
    const id = await createUser('gql-user');
    const res = await gql(first, `query($userId: ID!) {
      viewer { login isServiceAdmin }
      user: node(id: $userId) { ... on User { login orgId isServiceAdmin organizations { edges { role node { databaseId } } } } }
      allUsers(query: "gql-user", first: 1) { totalCount nodes { login } }
    }`, { userId: Buffer.from(`User:${id}`).toString('base64url') });
    expect(res.body).toEqual({ data: {
      viewer: { login: 'admin', isServiceAdmin: true },
      user: { login: 'gql-user', orgId: 1, isServiceAdmin: false, organizations: { edges: [{ role: 'Viewer', node: { databaseId: 1 } }] } },
      allUsers: { totalCount: 1, nodes: [{ login: 'gql-user' }] },
    } });
    expect((await gql(first, '{ userSearch { totalCount } }')).body.errors?.[0]?.message).toMatch(/^Cannot query field "userSearch" on type "Query"/);
    const denied = await gql(first, '{ allUsers { totalCount } }', {}, basic('gql-user', 'user-pass'));
    expect(denied.body.errors?.[0]).toMatchObject({ message: 'You\'ll need additional permissions to perform this action. Permissions needed: users:read', extensions: { code: 'FORBIDDEN' } });
  });
});
