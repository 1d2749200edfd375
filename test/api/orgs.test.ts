import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';
import { released } from '../support/races.ts';

// The org routes real clients call (grafana-client's organization(s) elements, the Terraform
// provider's grafana_organization), on two instances sharing one database.

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => ([first, second] = [a, b]));

let upstream: Server;
let upstreamUrl = '';
beforeAll(async () => {
  upstream = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ upstream: true, path: req.url }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const EMPTY_ADDRESS = { address1: '', address2: '', city: '', zipCode: '', state: '', country: '' };

async function createOrg(name: string, server: TestServer = first): Promise<number> {
  const res = await call(server, 'POST', '/api/orgs', { body: { name } });
  expect(res.status).toBe(200);
  return res.body.orgId;
}

async function createUser(login: string, orgId?: number, password = 'user-pass'): Promise<{ id: number; auth: string }> {
  const res = await call(first, 'POST', '/api/admin/users', { body: { login, password, ...(orgId ? { orgId } : {}) } });
  expect(res.status).toBe(200);
  return { id: res.body.id, auth: basic(login, password) };
}

async function addMember(orgId: number, login: string, role: string, server: TestServer = first) {
  return call(server, 'POST', `/api/orgs/${orgId}/users`, { body: { loginOrEmail: login, role } });
}

/** An org whose only Admin is `login` (the creating server admin leaves it). */
async function orgAdministeredBy(name: string, login: string): Promise<{ orgId: number; admin: { id: number; auth: string } }> {
  const orgId = await createOrg(name);
  const admin = await createUser(login, orgId);
  expect((await call(first, 'PATCH', `/api/orgs/${orgId}/users/${admin.id}`, { body: { role: 'Admin' } })).status).toBe(200);
  const [me] = await first.sql<{ id: number }>(`select id from "user" where login = 'admin'`);
  expect((await call(first, 'DELETE', `/api/orgs/${orgId}/users/${me!.id}`)).status).toBe(200);
  return { orgId, admin };
}

describe('creating, reading and renaming orgs', () => {
  it('answers with the original bodies, byte for byte where they are Go maps', async () => {
    const res = await call(first, 'POST', '/api/orgs', { body: { name: 'Created Org' } });
    expect(res.status).toBe(200);
    expect(res.text).toBe(`{"message":"Organization created","orgId":${res.body.orgId}}`);
    const id = res.body.orgId as number;
    expect((await call(second, 'GET', `/api/orgs/${id}`)).text).toBe(`{"id":${id},"name":"Created Org","address":${JSON.stringify(EMPTY_ADDRESS)}}`);
    expect((await call(second, 'GET', '/api/orgs/name/Created%20Org')).body).toEqual({ id, name: 'Created Org', address: EMPTY_ADDRESS });
    // The creator (here the server admin) is its Admin.
    expect((await call(second, 'GET', `/api/orgs/${id}/users`)).body.map((m: { login: string; role: string }) => [m.login, m.role])).toEqual([['admin', 'Admin']]);

    expect(await call(first, 'PUT', `/api/orgs/${id}`, { body: { name: 'Renamed Org' } })).toMatchObject({ status: 200, body: { message: 'Organization updated' } });
    expect((await call(second, 'GET', `/api/orgs/${id}`)).body.name).toBe('Renamed Org');
    expect(await call(second, 'GET', '/api/orgs/name/Created%20Org')).toMatchObject({ status: 404, body: { message: 'Organization not found' } });
  });

  it('keeps names unique: 409 on create (also when ten race), 400 on rename, as the original', async () => {
    await createOrg('Unique Name');
    expect(await call(first, 'POST', '/api/orgs', { body: { name: 'Unique Name' } })).toMatchObject({ status: 409, body: { message: 'Organization name taken' } });
    const other = await createOrg('Another Name');
    expect(await call(first, 'PUT', `/api/orgs/${other}`, { body: { name: 'Unique Name' } })).toMatchObject({ status: 400, body: { message: 'Organization name taken' } });

    const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => call(i % 2 ? first : second, 'POST', '/api/orgs', { body: { name: 'Raced Name' } })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect(await first.sql(`select 1 from org where name = 'Raced Name'`)).toHaveLength(1);
  });

  it('refuses bad input and unknown orgs with the original messages', async () => {
    expect(await call(first, 'POST', '/api/orgs', { body: {} })).toMatchObject({ status: 400, body: { message: 'bad request data' } });
    expect(await call(first, 'POST', '/api/orgs', { body: { name: 'x'.repeat(191) } })).toMatchObject({ status: 400 });
    expect(await call(first, 'PUT', '/api/orgs/1', { body: { name: '' } })).toMatchObject({ status: 400, body: { message: 'bad request data' } });
    expect(await call(first, 'GET', '/api/orgs/987654')).toMatchObject({ status: 404, body: { message: 'Organization not found' } });
    expect(await call(first, 'PUT', '/api/orgs/987654', { body: { name: 'ghost' } })).toMatchObject({ status: 404, body: { message: 'Organization not found' } });
    expect(await call(first, 'GET', '/api/orgs/abc')).toMatchObject({ status: 400, body: { message: 'orgId is invalid' } });
    expect(await call(first, 'DELETE', '/api/orgs/987654')).toMatchObject({ status: 404, body: { message: 'Failed to delete organization. ID not found' } });
    expect(await call(first, 'DELETE', '/api/orgs/1')).toMatchObject({ status: 400, body: { message: 'Can not delete org for current user' } });
  });

  it('refuses a caller without the rule before reading its body, as the original\'s access check comes before its binding', async () => {
    const viewer = await createUser('order-viewer');
    const orgId = await createOrg('Order Org');
    const admin = await createUser('order-org-admin', orgId);
    expect((await call(first, 'PATCH', `/api/orgs/${orgId}/users/${admin.id}`, { body: { role: 'Admin' } })).status).toBe(200);
    const rows: Array<[string, string]> = [
      ['POST', '/api/orgs'], ['PUT', `/api/orgs/${orgId}`], ['POST', `/api/orgs/${orgId}/users`], ['PATCH', `/api/orgs/${orgId}/users/${admin.id}`],
    ];
    for (const [method, path] of rows) {
      const refused = await call(first, method, path, { auth: viewer.auth, body: {} });
      expect([method, path, refused.status, refused.body.title]).toEqual([method, path, 403, 'Access denied']);
    }
    // The org's own Admin passes the rule on the org's rows: then the body is the problem.
    for (const [method, path] of rows.slice(1)) {
      const bad = await call(first, method, path, { auth: admin.auth, body: {} });
      expect([method, path, bad.status, bad.body]).toEqual([method, path, 400, { message: 'bad request data' }]);
    }
  });

  it('lets any signed-in user create an org only when [users] allow_org_create is on', async () => {
    const user = await createUser('would-create');
    expect((await call(first, 'POST', '/api/orgs', { auth: user.auth, body: { name: 'Not Allowed' } })).status).toBe(403);
  });
});

describe('GET /api/orgs', () => {
  it('pages from 0 by id, filters by name prefix or exact name, and ends with an empty page', async () => {
    for (const n of [1, 2, 3]) await createOrg(`pageable ${n}`);
    const all = await call(first, 'GET', '/api/orgs?query=pageable');
    expect(all.body.map((o: { name: string }) => o.name)).toEqual(['pageable 1', 'pageable 2', 'pageable 3']);
    expect(Object.keys(all.body[0])).toEqual(['id', 'name']);
    const pages = [];
    for (const page of [0, 1, 2]) pages.push((await call(first, 'GET', `/api/orgs?query=pageable&perpage=2&page=${page}`)).body.map((o: { name: string }) => o.name));
    expect(pages).toEqual([['pageable 1', 'pageable 2'], ['pageable 3'], []]);
    expect((await call(first, 'GET', '/api/orgs?name=pageable%202')).body.map((o: { name: string }) => o.name)).toEqual(['pageable 2']);
    // A prefix, not a substring; wildcards are taken literally.
    expect((await call(first, 'GET', '/api/orgs?query=ageable')).body).toEqual([]);
    expect((await call(first, 'GET', '/api/orgs?query=_ageable')).body).toEqual([]);
    expect((await call(first, 'GET', '/api/orgs?perpage=1&page=2147483647')).body).toEqual([]);
  });
});

describe('org members', () => {
  it('lists every member over REST, more than a page of the graph holds, and reads a limit of 0 or below as all', async () => {
    const orgId = await createOrg('Crowded Org');
    for (let i = 0; i < 105; i++) await createUser(`crowd-${String(i).padStart(3, '0')}`, orgId);
    const asAdmin = { headers: { 'x-grafana-org-id': String(orgId) } };
    expect((await call(first, 'GET', `/api/orgs/${orgId}/users`)).body).toHaveLength(106);
    expect((await call(second, 'GET', '/api/org/users', asAdmin)).body).toHaveLength(106);
    expect((await call(second, 'GET', '/api/org/users?limit=0', asAdmin)).body).toHaveLength(106);
    expect((await call(second, 'GET', '/api/org/users?limit=-3', asAdmin)).body).toHaveLength(106);
    expect((await call(second, 'GET', '/api/org/users/lookup?query=crowd-10&limit=3', asAdmin)).body.map((m: { login: string }) => m.login))
      .toEqual(['crowd-100', 'crowd-101', 'crowd-102']);
  });

  it('removes by /api/orgs/:orgId/users/:userId without deleting a user left in no org, even from the org the request acts in', async () => {
    const orgId = await createOrg('Keeps Orphans');
    const only = await createUser('only-here', orgId);
    const inOrg = { headers: { 'x-grafana-org-id': String(orgId) } };
    expect(await call(first, 'DELETE', `/api/orgs/${orgId}/users/${only.id}`, inOrg)).toMatchObject({ status: 200, body: { message: 'User removed from organization' } });
    expect((await call(second, 'GET', `/api/users/${only.id}`)).status).toBe(200);
    // The same user, added back then removed by /api/org/users, goes with its last membership.
    expect((await addMember(orgId, 'only-here', 'Viewer')).status).toBe(200);
    expect(await call(second, 'DELETE', `/api/org/users/${only.id}`, inOrg)).toMatchObject({ status: 200, body: { message: 'User deleted' } });
    expect((await call(first, 'GET', `/api/users/${only.id}`)).status).toBe(404);
  });

  it('are added by login or e-mail, listed by login with the original fields, re-roled and removed', async () => {
    const orgId = await createOrg('Members Org');
    const ann = await createUser('ann');
    await createUser('bob');
    const added = await addMember(orgId, 'ANN', 'Editor');
    expect(added.status).toBe(200);
    expect(added.text).toBe(`{"message":"User added to organization","userId":${ann.id}}`);
    expect((await addMember(orgId, 'bob', 'Viewer', second)).status).toBe(200);

    const list = await call(second, 'GET', `/api/orgs/${orgId}/users`);
    expect(list.body.map((m: { login: string; role: string }) => [m.login, m.role])).toEqual([['admin', 'Admin'], ['ann', 'Editor'], ['bob', 'Viewer']]);
    expect(Object.keys(list.body[1])).toEqual([
      'orgId', 'userId', 'uid', 'email', 'name', 'avatarUrl', 'login', 'role', 'lastSeenAt', 'created', 'lastSeenAtAge',
      'isDisabled', 'authLabels', 'isExternallySynced', 'isProvisioned',
    ]);
    expect(list.body[1]).toMatchObject({ orgId, userId: ann.id, login: 'ann', lastSeenAtAge: '10 years', isDisabled: false, authLabels: [] });

    // Ann joined her second org: her current org stays the first.
    expect((await call(first, 'GET', '/api/user', { auth: ann.auth })).body.orgId).toBe(1);
    expect(await call(first, 'PATCH', `/api/orgs/${orgId}/users/${ann.id}`, { body: { role: 'Admin' } })).toMatchObject({ status: 200, body: { message: 'Organization user updated' } });
    // Ann now administers it herself, with the org header.
    const asAnn = { auth: ann.auth, headers: { 'x-grafana-org-id': String(orgId) } };
    expect((await call(second, 'GET', '/api/org/users', asAnn)).body.map((m: { login: string }) => m.login)).toEqual(['admin', 'ann', 'bob']);
    expect((await call(second, 'GET', '/api/org/users?query=BO&limit=5', asAnn)).body.map((m: { login: string }) => m.login)).toEqual(['bob']);
    expect((await call(second, 'GET', '/api/org/users?limit=1', asAnn)).body).toHaveLength(1);
    const lookup = await call(second, 'GET', '/api/org/users/lookup?query=ann', asAnn);
    expect(lookup.body).toEqual([{ userId: ann.id, login: 'ann', avatarUrl: expect.stringMatching(/^\/avatar\/[0-9a-f]{32}$/) }]);

    const bob = (list.body as Array<{ login: string; userId: number }>).find((m) => m.login === 'bob')!.userId;
    expect(await call(first, 'PATCH', `/api/org/users/${bob}`, { ...asAnn, body: { role: 'Editor' } })).toMatchObject({ status: 200 });
    expect(await call(first, 'DELETE', `/api/org/users/${bob}`, asAnn)).toMatchObject({ status: 200, body: { message: 'User removed from organization' } });
    // Bob still belongs to the main org, so he is only removed, never deleted.
    expect((await call(second, 'GET', `/api/users/${bob}`)).status).toBe(200);
    expect((await call(second, 'GET', `/api/orgs/${orgId}/users`)).body.map((m: { login: string }) => m.login)).toEqual(['admin', 'ann']);
  });

  it('refuse unknown users, duplicates, bad roles and non-members with the original messages', async () => {
    const orgId = await createOrg('Strict Org');
    const carl = await createUser('carl');
    expect(await addMember(orgId, 'nobody-at-all', 'Viewer')).toMatchObject({ status: 404, body: { message: 'User not found' } });
    expect(await addMember(orgId, 'carl', 'Owner')).toMatchObject({ status: 400, body: { message: 'Invalid role specified' } });
    expect(await call(first, 'POST', `/api/orgs/${orgId}/users`, { body: { loginOrEmail: 'carl' } })).toMatchObject({ status: 400, body: { message: 'bad request data' } });
    expect((await addMember(orgId, 'carl', 'Viewer')).status).toBe(200);
    const again = await addMember(orgId, 'carl', 'Editor', second);
    expect(again.status).toBe(409);
    expect(again.text).toBe(`{"message":"User is already member of this organization","userId":${carl.id}}`);
    expect(await call(first, 'POST', '/api/orgs/987654/users', { body: { loginOrEmail: 'carl', role: 'Viewer' } })).toMatchObject({ status: 404, body: { message: 'Organization not found' } });
    expect(await call(first, 'PATCH', `/api/orgs/${orgId}/users/987654`, { body: { role: 'Viewer' } })).toMatchObject({ status: 404, body: { message: 'User not found' } });
    expect(await call(first, 'PATCH', `/api/orgs/${orgId}/users/${carl.id}`, { body: { role: 'Boss' } })).toMatchObject({ status: 400, body: { message: 'Invalid role specified' } });
    expect(await call(first, 'PATCH', `/api/orgs/${orgId}/users/x`, { body: { role: 'Viewer' } })).toMatchObject({ status: 400, body: { message: 'userId is invalid' } });
    expect(await call(first, 'DELETE', `/api/orgs/${orgId}/users/987654`)).toMatchObject({ status: 404, body: { message: 'User not found' } });
    // Service accounts are managed through their own API, not as members.
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'member-sa' } });
    expect(await call(first, 'DELETE', `/api/orgs/1/users/${sa.body.id}`)).toMatchObject({ status: 404, body: { message: 'User not found' } });
  });

  it('moves a user removed from its current org to another of its orgs, or to none', async () => {
    const orgA = await createOrg('aaa move first');
    const dora = await createUser('dora', orgA);
    expect((await call(first, 'GET', '/api/user', { auth: dora.auth })).body.orgId).toBe(orgA);
    expect((await call(first, 'DELETE', `/api/orgs/${orgA}/users/${dora.id}`)).status).toBe(200);
    // No org left on the admin route: the user stays, in no org, and sees no org's data.
    const me = await call(second, 'GET', '/api/user', { auth: dora.auth });
    expect(me.body.orgId).toBeNull();
    expect((await call(second, 'GET', '/api/org', { auth: dora.auth })).status).toBe(403);
    expect((await call(second, 'GET', '/api/user/orgs', { auth: dora.auth })).body).toEqual([]);
    // Joining an org again makes it current.
    expect((await addMember(1, 'dora', 'Viewer')).status).toBe(200);
    expect((await call(first, 'GET', '/api/user', { auth: dora.auth })).body.orgId).toBe(1);
  });

  it('deletes a user left in no org when removed from the current org, as the original, but never the last server admin', async () => {
    const { orgId, admin } = await orgAdministeredBy('Orphans Org', 'orphan-admin');
    const erin = await createUser('erin', orgId);
    const asAdmin = { auth: admin.auth, headers: { 'x-grafana-org-id': String(orgId) } };
    expect(await call(first, 'DELETE', `/api/org/users/${erin.id}`, asAdmin)).toMatchObject({ status: 200, body: { message: 'User deleted' } });
    expect((await call(second, 'GET', `/api/users/${erin.id}`)).status).toBe(404);
    expect((await call(second, 'GET', '/api/user', { auth: erin.auth })).status).toBe(401);
  });
});

describe('the last Admin of an org', () => {
  it('cannot be demoted or removed', async () => {
    const { orgId, admin } = await orgAdministeredBy('Last Admin Org', 'lone-admin');
    expect(await call(first, 'PATCH', `/api/orgs/${orgId}/users/${admin.id}`, { body: { role: 'Editor' } }))
      .toMatchObject({ status: 400, body: { message: 'Cannot change role so that there is no organization admin left' } });
    expect(await call(first, 'DELETE', `/api/orgs/${orgId}/users/${admin.id}`))
      .toMatchObject({ status: 400, body: { message: 'Cannot remove last organization admin' } });
    const asAdmin = { auth: admin.auth, headers: { 'x-grafana-org-id': String(orgId) } };
    expect(await call(second, 'PATCH', `/api/org/users/${admin.id}`, { ...asAdmin, body: { role: 'Viewer' } })).toMatchObject({ status: 400 });
    expect(await call(second, 'DELETE', `/api/org/users/${admin.id}`, asAdmin)).toMatchObject({ status: 400 });
    expect(await first.sql(`select role from org_user where org_id = $1`, [orgId])).toEqual([{ role: 'Admin' }]);
  });

  it('survives 20 concurrent demotions and removals of the last two Admins, on two instances', async () => {
    const { orgId, admin: a } = await orgAdministeredBy('Raced Admins Org', 'race-admin-a');
    const b = await createUser('race-admin-b', orgId);
    expect((await call(first, 'PATCH', `/api/orgs/${orgId}/users/${b.id}`, { body: { role: 'Admin' } })).status).toBe(200);
    // Both memberships are held locked until the requests wait together, so they meet in the database.
    const memberships = { sql: 'select 1 from org_user where org_id = $1 for update', params: [orgId] };
    const results = await released(first, memberships, 10, () => Promise.all(Array.from({ length: 20 }, (_, i) => {
      const target = i % 2 ? a.id : b.id;
      const server = i % 4 < 2 ? first : second;
      return i % 3 === 0
        ? call(server, 'DELETE', `/api/orgs/${orgId}/users/${target}`).then((r) => ({ target, r }))
        : call(server, 'PATCH', `/api/orgs/${orgId}/users/${target}`, { body: { role: 'Viewer' } }).then((r) => ({ target, r }));
    })));
    expect(results.filter(({ r }) => ![200, 400, 404].includes(r.status))).toEqual([]);
    for (const { r } of results.filter(({ r }) => r.status === 400)) {
      expect(['Cannot change role so that there is no organization admin left', 'Cannot remove last organization admin']).toContain(r.body.message);
    }
    // Only one of the two ever lost its Admin role: the other kept it.
    const succeeded = new Set(results.filter(({ r }) => r.status === 200).map(({ target }) => target));
    expect(succeeded.size).toBe(1);
    const admins = await first.sql(`select user_id from org_user where org_id = $1 and role = 'Admin'`, [orgId]);
    expect(admins).toHaveLength(1);
    expect(succeeded.has(admins[0]!.user_id as number)).toBe(false);
  });
});

describe('the current org: GET/PUT /api/org', () => {
  it('reads and renames the org the request acts in', async () => {
    const { orgId, admin } = await orgAdministeredBy('Current Org', 'current-admin');
    expect((await call(first, 'GET', '/api/org', { auth: admin.auth })).body).toEqual({ id: orgId, name: 'Current Org', address: EMPTY_ADDRESS });
    expect(await call(second, 'PUT', '/api/org', { auth: admin.auth, body: { name: 'Current Org Renamed' } })).toMatchObject({ status: 200, body: { message: 'Organization updated' } });
    expect((await call(first, 'GET', `/api/orgs/${orgId}`)).body.name).toBe('Current Org Renamed');
    expect(await call(second, 'PUT', '/api/org', { auth: admin.auth, body: { name: 'Main Org.' } })).toMatchObject({ status: 400, body: { message: 'Organization name taken' } });
  });
});

describe('org scoping', () => {
  it('keeps a member of another org away from this org\'s data sources, tokens and service accounts in every form', async () => {
    const { orgId: otherOrg, admin: outsider } = await orgAdministeredBy('Outsiders', 'outsider');
    const ds = await call(first, 'POST', '/api/datasources', { body: { name: 'org1-secret', type: 'prometheus', access: 'proxy', url: upstreamUrl } });
    expect(ds.status).toBe(200);
    const { id, uid } = ds.body.datasource;
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'org1-account', role: 'Admin' } });
    const key = await call(first, 'POST', '/api/auth/keys', { body: { name: 'org1-key', role: 'Viewer' } });
    const reads = [
      `/api/datasources/${id}`, `/api/datasources/uid/${uid}`, '/api/datasources/name/org1-secret', '/api/datasources/id/org1-secret',
      `/api/datasources/proxy/${id}/api/v1/query`, `/api/datasources/proxy/uid/${uid}/api/v1/query`,
      `/api/serviceaccounts/${sa.body.id}`, `/api/serviceaccounts/${sa.body.id}/tokens`,
    ];
    for (const server of [first, second]) {
      for (const path of reads) {
        const res = await call(server, 'GET', path, { auth: outsider.auth });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        // Naming the org is refused outright: the outsider is no member of it.
        const named = await call(server, 'GET', path, { auth: outsider.auth, headers: { 'x-grafana-org-id': '1' } });
        expect({ path, status: named.status }).toEqual({ path, status: 401 });
      }
      expect((await call(server, 'GET', '/api/datasources', { auth: outsider.auth })).body).toEqual([]);
      expect((await call(server, 'GET', '/api/auth/keys', { auth: outsider.auth })).body).toEqual([]);
      for (const [method, path] of [['DELETE', `/api/datasources/${id}`], ['DELETE', `/api/datasources/uid/${uid}`], ['DELETE', '/api/datasources/name/org1-secret'],
        ['DELETE', `/api/auth/keys/${key.body.id}`], ['DELETE', `/api/serviceaccounts/${sa.body.id}`], ['PUT', `/api/datasources/${id}`]]) {
        const res = await call(server, method!, path!, { auth: outsider.auth, body: method === 'PUT' ? { name: 'stolen', type: 'loki', access: 'proxy' } : undefined });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
      expect(await call(server, 'GET', '/api/orgs/1', { auth: outsider.auth })).toMatchObject({ status: 403 });
      expect(await call(server, 'GET', '/api/orgs/1/users', { auth: outsider.auth })).toMatchObject({ status: 403 });
      expect((await call(server, 'GET', '/api/org', { auth: outsider.auth })).body.id).toBe(otherOrg);
    }
    expect((await call(first, 'GET', `/api/datasources/${id}`)).body.name).toBe('org1-secret');
  });

  it('follows membership changes on every instance at once: a removed member is refused in that org', async () => {
    const orgId = await createOrg('Comings And Goings');
    const frank = await createUser('frank');
    await addMember(orgId, 'frank', 'Editor');
    const inOrg = { auth: frank.auth, headers: { 'x-grafana-org-id': String(orgId) } };
    expect((await call(first, 'GET', '/api/datasources', inOrg)).status).toBe(200);
    expect((await call(second, 'GET', '/api/datasources', inOrg)).status).toBe(200);
    expect((await call(second, 'DELETE', `/api/orgs/${orgId}/users/${frank.id}`)).status).toBe(200);
    expect((await call(first, 'GET', '/api/datasources', inOrg)).status).toBe(401);
    expect((await call(second, 'GET', '/api/datasources', inOrg)).status).toBe(401);
  });
});

describe('deleting an org', () => {
  it('removes its data sources, tokens, service accounts and memberships at once, and both instances forget them', async () => {
    const { orgId, admin } = await orgAdministeredBy('Doomed Org', 'doomed-admin');
    const asAdmin = { auth: admin.auth, headers: { 'x-grafana-org-id': String(orgId) } };
    const ds = await call(first, 'POST', '/api/datasources', { ...asAdmin, body: { name: 'doomed-ds', type: 'prometheus', access: 'proxy', url: upstreamUrl } });
    expect(ds.status).toBe(200);
    const dsId = ds.body.id as number;
    const sa = await call(first, 'POST', '/api/serviceaccounts', { ...asAdmin, body: { name: 'doomed-sa', role: 'Admin' } });
    const token = await call(first, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { ...asAdmin, body: { name: 'doomed-token' } });
    const key = await call(first, 'POST', '/api/auth/keys', { ...asAdmin, body: { name: 'doomed-key', role: 'Admin' } });
    const bearer = (k: string) => ({ auth: `Bearer ${k}` });
    // Every instance has verified the tokens and proxied through the data source (both cached).
    for (const server of [first, second]) {
      expect((await call(server, 'GET', `/api/datasources/proxy/${dsId}/x`, bearer(token.body.key))).status).toBe(200);
      expect((await call(server, 'GET', '/api/datasources', bearer(key.body.key))).status).toBe(200);
      expect((await call(server, 'GET', '/api/org', asAdmin)).status).toBe(200);
    }

    expect(await call(second, 'DELETE', `/api/orgs/${orgId}`)).toMatchObject({ status: 200, body: { message: 'Organization deleted' } });

    for (const server of [first, second]) {
      expect((await call(server, 'GET', `/api/datasources/proxy/${dsId}/x`, bearer(token.body.key))).status).toBe(401);
      expect((await call(server, 'GET', '/api/datasources', bearer(key.body.key))).status).toBe(401);
      expect((await call(server, 'GET', '/api/org', asAdmin)).status).toBe(401);
      expect((await call(server, 'GET', `/api/orgs/${orgId}`)).status).toBe(404);
    }
    for (const table of ['data_source', 'api_key', 'org_user']) {
      expect({ table, rows: await first.sql(`select 1 from ${table} where org_id = $1`, [orgId]) }).toEqual({ table, rows: [] });
    }
    expect(await first.sql('select 1 from "user" where id = $1', [sa.body.id])).toEqual([]);
    // Its Admin stays a user, now in no org.
    expect((await call(first, 'GET', '/api/user', { auth: admin.auth })).body.orgId).toBeNull();

    // Even an org restored under the same id (and a member there) reaches nothing of the old one:
    // no instance kept the deleted data source in its proxy cache.
    await first.sql('insert into org (id, name) values ($1, $2)', [orgId, 'Restored Org']);
    await first.sql(`insert into org_user (org_id, user_id, role) values ($1, $2, 'Admin')`, [orgId, admin.id]);
    for (const server of [first, second]) {
      const res = await call(server, 'GET', `/api/datasources/proxy/${dsId}/x`, asAdmin);
      expect({ status: res.status, upstream: res.body?.upstream }).toEqual({ status: 404, upstream: undefined });
    }
  });

  it('refuses the org the caller acts in, whether named by header or current', async () => {
    const orgId = await createOrg('Acting In');
    expect(await call(first, 'DELETE', `/api/orgs/${orgId}`, { headers: { 'x-grafana-org-id': String(orgId) } }))
      .toMatchObject({ status: 400, body: { message: 'Can not delete org for current user' } });
    expect((await call(first, 'GET', `/api/orgs/${orgId}`)).status).toBe(200);
  });
});

describe('GraphQL', () => {
  it('offers the same over the graph: orgs, an org, its members, and changes to them', async () => {
    const created = await gql(first, 'mutation { organizationCreate(input: { name: "GraphQL Org" }) { organization { id databaseId } userErrors { message } } }');
    const { id, databaseId: orgId } = created.body.data.organizationCreate.organization as { id: string; databaseId: number };
    await createUser('gina');
    const added = await gql(second, `mutation($id: ID!) {
      organizationMemberAdd(organizationId: $id, input: { loginOrEmail: "gina", role: "Viewer" }) { member { login role } userErrors { message } }
    }`, { id });
    expect(added.body).toEqual({ data: { organizationMemberAdd: { member: { login: 'gina', role: 'Viewer' }, userErrors: [] } } });
    const read = await gql(first, `query($id: ID!) {
      node(id: $id) { ... on Organization { databaseId name members { nodes { login role } } } }
      allOrganizations(query: "GraphQL") { nodes { name } }
    }`, { id });
    expect(read.body).toEqual({ data: {
      node: { databaseId: orgId, name: 'GraphQL Org', members: { nodes: [{ login: 'admin', role: 'Admin' }, { login: 'gina', role: 'Viewer' }] } },
      allOrganizations: { nodes: [{ name: 'GraphQL Org' }] },
    } });
    // A Viewer of the main org sees it, not its members.
    const asGina = await gql(first, '{ currentOrganization { name members { nodes { login } } } }', {}, basic('gina', 'user-pass'));
    expect(asGina.body).toEqual({ data: { currentOrganization: { name: 'Main Org.', members: null } } });
    expect((await gql(first, 'mutation($id: ID!) { organizationDelete(id: $id) { deletedOrganizationId userErrors { message } } }', { id }, ADMIN)).body.data)
      .toEqual({ organizationDelete: { deletedOrganizationId: id, userErrors: [] } });
  });
});
