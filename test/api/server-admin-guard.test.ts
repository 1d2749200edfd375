import { describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, startTestServer, type Reply, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';
import { released } from '../support/races.ts';

// The server must always keep an enabled server admin: demotion, disabling and deletion (by the
// admin API or by removing a user from its last org) share one guard, race-free across instances.

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => ([first, second] = [a, b]));

const LAST_ADMIN = { status: 400, body: { message: 'cannot remove last grafana admin' } };

async function userId(login: string): Promise<number> {
  const [row] = await first.sql<{ id: number }>('select id from "user" where login = $1', [login]);
  return row!.id;
}

async function createAdmin(login: string, orgId?: number): Promise<{ id: number; auth: string }> {
  const created = await call(first, 'POST', '/api/admin/users', { body: { login, password: 'admin-pass', ...(orgId ? { orgId } : {}) } });
  expect(created.status).toBe(200);
  expect((await call(first, 'PUT', `/api/admin/users/${created.body.id}/permissions`, { body: { isServiceAdmin: true } })).status).toBe(200);
  return { id: created.body.id, auth: basic(login, 'admin-pass') };
}

const enabledAdmins = async (server: TestServer = first) =>
  (await server.sql<{ login: string }>('select login from "user" where is_admin and not is_disabled order by login')).map((r) => r.login);

const lockUsers = (...users: Array<{ id: number }>) => ({ sql: 'select 1 from "user" where id = any($1) for update', params: [users.map((u) => u.id)] });

/**
 * Two fresh instances on a database of their own whose only server admins are "admin" and one more,
 * for races that may take either away; `run` gets both admins and both servers.
 */
async function racePair(run: (a: { id: number; auth: string }, b: { id: number; auth: string }, servers: [TestServer, TestServer]) => Promise<void>): Promise<void> {
  const one = await startTestServer();
  const two = await startTestServer({ connection: one.connection });
  try {
    const created = await call(one, 'POST', '/api/admin/users', { body: { login: 'second-admin', password: 'admin-pass' } });
    expect((await call(one, 'PUT', `/api/admin/users/${created.body.id}/permissions`, { body: { isServiceAdmin: true } })).status).toBe(200);
    const [admin] = await one.sql<{ id: number }>(`select id from "user" where login = 'admin'`);
    // Both instances verify both admins' passwords first, so the racing requests reach the
    // database together instead of queueing behind password hashing.
    for (const server of [one, two]) {
      for (const auth of [ADMIN, basic('second-admin', 'admin-pass')]) expect((await call(server, 'GET', '/api/admin/stats', { auth })).status).toBe(200);
    }
    await run({ id: admin!.id, auth: ADMIN }, { id: created.body.id, auth: basic('second-admin', 'admin-pass') }, [one, two]);
  } finally {
    await two.close();
    await one.close();
  }
}

const statusOf = (r: Reply) => r.status;

describe('the last enabled server admin', () => {
  it('cannot delete, demote or disable itself (issue: it could delete itself)', async () => {
    const admin = await userId('admin');
    expect(await call(first, 'DELETE', `/api/admin/users/${admin}`)).toMatchObject(LAST_ADMIN);
    expect(await call(second, 'PUT', `/api/admin/users/${admin}/permissions`, { body: { isGrafanaAdmin: false } })).toMatchObject(LAST_ADMIN);
    expect(await call(first, 'POST', `/api/admin/users/${admin}/disable`)).toMatchObject(LAST_ADMIN);
    expect(await enabledAdmins()).toEqual(['admin']);
    expect((await call(second, 'GET', '/api/admin/stats')).status).toBe(200);
  });

  it('counts only enabled admins: a disabled admin does not keep the server administrable', async () => {
    const spare = await createAdmin('spare-admin');
    expect((await call(first, 'POST', `/api/admin/users/${spare.id}/disable`)).status).toBe(200);
    const admin = await userId('admin');
    expect(await call(first, 'DELETE', `/api/admin/users/${admin}`)).toMatchObject(LAST_ADMIN);
    // Deleting the disabled one takes no enabled admin away.
    expect((await call(second, 'DELETE', `/api/admin/users/${spare.id}`)).status).toBe(200);
    expect(await enabledAdmins()).toEqual(['admin']);
  });

  it('survives 20 concurrent deletions of the last two admins on two instances: exactly one goes', async () => {
    await racePair(async (a, b, [one, two]) => {
      const results = await released(one, lockUsers(a, b), 10, () => Promise.all(Array.from({ length: 20 }, (_, i) => {
        const target = i % 2 ? a : b;
        return call(i % 4 < 2 ? one : two, 'DELETE', `/api/admin/users/${target.id}`, { auth: (i % 3 ? a : b).auth });
      })));
      // Callers may have deleted themselves (401) or each other; nothing else may happen.
      expect(results.map(statusOf).filter((s) => ![200, 400, 401, 404].includes(s))).toEqual([]);
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of results.filter((r) => r.status === 400)) expect(r.body).toEqual(LAST_ADMIN.body);
      expect(await enabledAdmins(one)).toHaveLength(1);
    });
  });

  it('survives 20 concurrent demotions, disablings and deletions of the last two admins: one enabled admin remains', async () => {
    await racePair(async (a, b, [one, two]) => {
      const ops = [
        (server: TestServer, id: number, auth: string) => call(server, 'PUT', `/api/admin/users/${id}/permissions`, { auth, body: { isServiceAdmin: false } }),
        (server: TestServer, id: number, auth: string) => call(server, 'POST', `/api/admin/users/${id}/disable`, { auth }),
        (server: TestServer, id: number, auth: string) => call(server, 'DELETE', `/api/admin/users/${id}`, { auth }),
      ];
      const results = await released(one, lockUsers(a, b), 10, () => Promise.all(Array.from({ length: 20 }, (_, i) =>
        ops[i % 3]!(i % 2 ? one : two, (i % 4 < 2 ? a : b).id, (i % 5 < 3 ? a : b).auth))));
      // A demoted caller is refused (403), a deleted or disabled one unknown (401).
      expect(results.map(statusOf).filter((s) => ![200, 400, 401, 403, 404].includes(s))).toEqual([]);
      for (const r of results.filter((r) => r.status === 400)) expect(r.body).toEqual(LAST_ADMIN.body);
      expect(await enabledAdmins(one)).toHaveLength(1);
    });
  });
});

describe('removing a user from its last org', () => {
  it('never deletes a server admin: an org Admin only removes the membership, over REST and GraphQL, and says so', async () => {
    const orgId = (await first.sql<{ id: number }>(`insert into org (name) values ('Lonely Admins') returning id`))[0]!.id;
    const orgAdmin = await call(first, 'POST', '/api/admin/users', { body: { login: 'org-boss', password: 'boss-pass', orgId } });
    await first.sql(`update org_user set role = 'Admin' where user_id = $1`, [orgAdmin.body.id]);
    // Two server admins, each a member of that org only: neither is the last one.
    await createAdmin('backup-admin');
    const admins = [await userId('admin'), await userId('backup-admin')];
    for (const id of admins) {
      await first.sql('delete from org_user where user_id = $1', [id]);
      await first.sql(`insert into org_user (org_id, user_id, role) values ($1, $2, 'Viewer')`, [orgId, id]);
      await first.sql('update "user" set org_id = $1 where id = $2', [orgId, id]);
    }
    const asBoss = { auth: basic('org-boss', 'boss-pass'), headers: { 'x-grafana-org-id': String(orgId) } };
    expect(await call(second, 'DELETE', `/api/org/users/${admins[0]}`, asBoss)).toMatchObject({ status: 200, body: { message: 'User removed from organization' } });
    const viaGraphQL = await call(second, 'POST', '/graphql', {
      ...asBoss,
      body: {
        query: 'mutation($id: ID!) { organizationMemberRemove(id: $id) { deletedUserId userErrors { message } } }',
        variables: { id: Buffer.from(`OrganizationMember:${orgId}:${admins[1]}`).toString('base64url') },
      },
    });
    expect(viaGraphQL.body).toEqual({ data: { organizationMemberRemove: { deletedUserId: null, userErrors: [] } } });
    // Both kept, server admins still, in no org.
    expect(await first.sql('select login, is_admin, org_id from "user" where id = any($1) order by login', [admins])).toEqual([
      { login: 'admin', is_admin: true, org_id: null },
      { login: 'backup-admin', is_admin: true, org_id: null },
    ]);
    expect(await first.sql('select 1 from org_user where user_id = any($1)', [admins])).toHaveLength(0);
    expect(await enabledAdmins()).toEqual(['admin', 'backup-admin']);
    // Anyone else left in no org is deleted, as the original does.
    const plain = await call(first, 'POST', '/api/admin/users', { body: { login: 'plain-member', password: 'plain-pass', orgId } });
    await first.sql('delete from org_user where user_id = $1 and org_id <> $2', [plain.body.id, orgId]);
    expect(await call(second, 'DELETE', `/api/org/users/${plain.body.id}`, asBoss)).toMatchObject({ status: 200, body: { message: 'User deleted' } });
    expect(await first.sql('select 1 from "user" where id = $1', [plain.body.id])).toHaveLength(0);
  });
});
