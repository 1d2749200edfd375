import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { DATA_SOURCE_CHANGED, subscribe } from '../support/sse.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * Data source permissions over real HTTP: the original's access-control routes, and a matrix of
 * built-in role x grant (none, to the user, to a team of theirs) x level x the role defaults kept
 * or revoked, asserted at every entry point that reaches a data source, REST and GraphQL alike,
 * and across orgs. Expected levels are worked out here by hand, not by the server's rule.
 */
let server: TestServer;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

type Role = 'Viewer' | 'Editor' | 'Admin';
type Level = 'Query' | 'Edit' | 'Admin';
const RANK: Record<Level | 'none', number> = { none: 0, Query: 1, Edit: 2, Admin: 3 };
let serial = 0;

async function createUser(login: string, role: Role, orgId = 1): Promise<{ id: number; auth: string }> {
  const res = await call(server, 'POST', '/api/admin/users', { body: { login, email: `${login}@example.com`, password: 'user-pass' } });
  expect(res.status).toBe(200);
  const id = res.body.id as number;
  if (orgId !== 1) {
    expect((await call(server, 'POST', `/api/orgs/${orgId}/users`, { body: { loginOrEmail: login, role } })).status).toBe(200);
    // New users join org 1 as well; this one belongs to `orgId` only.
    expect((await call(server, 'DELETE', `/api/orgs/1/users/${id}`)).status).toBe(200);
  } else if (role !== 'Viewer') {
    expect((await call(server, 'PATCH', `/api/org/users/${id}`, { body: { role } })).status).toBe(200);
  }
  return { id, auth: basic(login, 'user-pass') };
}

async function createDs(name: string, headers: Record<string, string> = {}): Promise<{ id: number; uid: string; name: string }> {
  const res = await call(server, 'POST', '/api/datasources', { headers, body: { name, type: 'loki', access: 'proxy', url: upstream.url } });
  expect(res.status).toBe(200);
  return { id: res.body.id, uid: res.body.datasource.uid, name };
}

const perm = (uid: string, path: string, permission: string) =>
  call(server, 'POST', `/api/access-control/datasources/${uid}/${path}`, { body: { permission } });

describe('the original\'s access-control routes', () => {
  it('lists the defaults, sets and removes grants with the original\'s messages, and refuses bad input', async () => {
    const ds = await createDs('perm-routes');
    const listed = await call(server, 'GET', `/api/access-control/datasources/${ds.uid}`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((p: { builtInRole: string; permission: string; isManaged: boolean }) => [p.builtInRole, p.permission, p.isManaged]))
      .toEqual([['Viewer', 'Query', true], ['Editor', 'Query', true], ['Admin', 'Admin', false]]);
    expect(listed.body[0]).toEqual({
      id: expect.any(Number), roleName: 'managed:builtins:viewer:permissions', isManaged: true, isInherited: false, isServiceAccount: false,
      userId: null, userLogin: null, userAvatarUrl: null, teamId: null, teamAvatarUrl: null, team: null, builtInRole: 'Viewer',
      actions: ['datasources:query', 'datasources:read'], permission: 'Query',
    });

    const user = await createUser('perm-routes-user', 'Viewer');
    const team = (await call(server, 'POST', '/api/teams', { body: { name: 'perm-routes-team' } })).body.teamId;
    expect((await perm(ds.uid, `users/${user.id}`, 'Edit')).body).toEqual({ message: 'Permission updated' });
    expect((await perm(ds.uid, `teams/${team}`, 'Admin')).body).toEqual({ message: 'Permission updated' });
    const withGrants = (await call(server, 'GET', `/api/access-control/datasources/${ds.uid}`)).body;
    expect(withGrants[0]).toMatchObject({ userId: user.id, userLogin: 'perm-routes-user', permission: 'Edit', roleName: `managed:users:${user.id}:permissions`, userAvatarUrl: expect.stringMatching(/^\/avatar\//) });
    expect(withGrants[1]).toMatchObject({ teamId: team, team: 'perm-routes-team', permission: 'Admin', actions: expect.arrayContaining(['datasources.permissions:write']) });
    expect((await perm(ds.uid, `users/${user.id}`, '')).body).toEqual({ message: 'Permission removed' });

    const bulk = await call(server, 'POST', `/api/access-control/datasources/${ds.uid}`, { body: { permissions: [{ builtInRole: 'Viewer', permission: '' }, { userId: user.id, permission: 'Query' }] } });
    expect(bulk.body).toEqual({ message: 'Permissions updated' });
    expect((await call(server, 'GET', `/api/access-control/datasources/${ds.uid}`)).body.map((p: { permission: string; userId: number | null; builtInRole: string | null }) => [p.userId, p.builtInRole, p.permission]))
      .toEqual([[user.id, null, 'Query'], [null, null, 'Admin'], [null, 'Editor', 'Query'], [null, 'Admin', 'Admin']]);

    const bad = await perm(ds.uid, `users/${user.id}`, 'Owner');
    expect([bad.status, bad.body]).toEqual([400, { message: 'failed to set user permission' }]);
    expect((await perm(ds.uid, 'users/999999', 'Query')).body).toEqual({ message: 'failed to set user permission' });
    expect((await perm(ds.uid, 'teams/999999', 'Query')).body).toEqual({ message: 'failed to set team permission' });
    expect((await perm(ds.uid, 'builtInRoles/Admin', 'Query')).body).toEqual({ message: 'failed to set role permission' });
    expect((await perm(ds.uid, 'builtInRoles/Owner', 'Query')).status).toBe(400);
    expect((await call(server, 'GET', '/api/access-control/datasources/no-such-uid')).status).toBe(404);
    expect((await call(server, 'GET', '/api/access-control/datasources/description')).body).toEqual({
      assignments: { users: true, serviceAccounts: true, teams: true, builtInRoles: true }, permissions: ['Admin', 'Edit', 'Query'],
    });
  });

  it('gives every data source the defaults however it is written, provisioning and SQL included', async () => {
    await server.sql(`insert into data_source (org_id, uid, name, type, access, url, json_data) values (1, 'by-sql', 'by-sql', 'loki', 'proxy', '', '{}')`);
    const rows = await server.sql<{ built_in_role: string; level: number }>(
      `select built_in_role, level from data_source_permission p join data_source d on d.id = p.data_source_id where d.uid = 'by-sql' order by built_in_role`);
    expect(rows).toEqual([{ built_in_role: 'Editor', level: 1 }, { built_in_role: 'Viewer', level: 1 }]);
  });
});

interface Case { role: Role; defaults: boolean; via: 'none' | 'user' | 'team'; level: Level | 'none' }

const CASES: Case[] = [];
for (const role of ['Viewer', 'Editor', 'Admin'] as const) {
  for (const defaults of [true, false]) {
    CASES.push({ role, defaults, via: 'none', level: 'none' });
    for (const via of ['user', 'team'] as const) for (const level of ['Query', 'Edit', 'Admin'] as const) CASES.push({ role, defaults, via, level });
  }
}

/** What the case may do: an org Admin everything; others the best of the role defaults (Query) and the grant. */
function expectedRank(c: Case): number {
  if (c.role === 'Admin') return 3;
  return Math.max(c.defaults ? 1 : 0, RANK[c.level]);
}

/** Every entry point, each answering whether the caller got through (200) or was refused (403; never anything else). */
async function probe(ds: { id: number; uid: string; name: string }, auth: string): Promise<Record<string, boolean>> {
  const status = async (method: string, path: string, body?: unknown): Promise<boolean> => {
    const res = await call(server, method, path, { auth, body });
    if (res.status !== 200 && res.status !== 403) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    if (res.status === 403) expect(res.body.message).toMatch(/Permissions needed: datasources/);
    return res.status === 200;
  };
  /** Whether a graph change went through: refused as a user error (or an error) FORBIDDEN, and nothing else. */
  const gqlOk = async (query: string, field: string): Promise<boolean> => {
    const res = await gql(server, query, {}, auth);
    const code = res.body.errors?.[0]?.extensions?.code ?? res.body.data?.[field]?.userErrors?.[0]?.code;
    if (code && code !== 'FORBIDDEN') throw new Error(`${query}: ${JSON.stringify(res.body)}`);
    return !code;
  };
  /** Whether the graph reads the data source: null where the caller may not. */
  const gqlSees = async (query: string): Promise<boolean> => {
    const res = await gql(server, query, {}, auth);
    if (res.body.errors) throw new Error(`${query}: ${JSON.stringify(res.body)}`);
    return res.body.data.currentOrganization.dataSource !== null;
  };
  const update = { name: ds.name, type: 'loki', access: 'proxy', url: upstream.url };
  const result: Record<string, boolean> = {
    list: ((await call(server, 'GET', '/api/datasources', { auth })).body as Array<{ id: number }>).some((d) => d.id === ds.id),
    byId: await status('GET', `/api/datasources/${ds.id}`),
    byUid: await status('GET', `/api/datasources/uid/${ds.uid}`),
    byName: await status('GET', `/api/datasources/name/${ds.name}`),
    idByName: await status('GET', `/api/datasources/id/${ds.name}`),
    health: (await call(server, 'GET', `/api/datasources/uid/${ds.uid}/health`, { auth })).status !== 403,
    proxyById: await status('GET', `/api/datasources/proxy/${ds.id}/loki/api/v1/labels`),
    proxyByUid: await status('GET', `/api/datasources/proxy/uid/${ds.uid}/loki/api/v1/labels`),
    frontendSettings: ds.name in (await call(server, 'GET', '/api/frontend/settings', { auth })).body.datasources,
    gqlList: ((await gql(server, '{ currentOrganization { dataSources { nodes { databaseId } } } }', {}, auth)).body.data!.currentOrganization.dataSources.nodes as Array<{ databaseId: number }>)
      .some((d) => d.databaseId === ds.id),
    gqlById: await gqlSees(`{ currentOrganization { dataSource(databaseId: ${ds.id}) { id } } }`),
    gqlByUid: await gqlSees(`{ currentOrganization { dataSource(uid: "${ds.uid}") { id } } }`),
    update: await status('PUT', `/api/datasources/${ds.id}`, update),
    gqlUpdate: await gqlOk(`mutation { dataSourceUpdate(uid: "${ds.uid}", input: { name: "${ds.name}", type: "loki", access: "proxy", url: "${upstream.url}" }) { userErrors { code } } }`, 'dataSourceUpdate'),
    permissionsRead: await status('GET', `/api/access-control/datasources/${ds.uid}`),
    permissionsField: (await gql(server, `{ currentOrganization { dataSource(uid: "${ds.uid}") { permissions { permission } } } }`, {}, ADMIN)).body.data !== undefined
      && (await gql(server, '{ currentOrganization { dataSources { nodes { databaseId permissions { permission } } } } }', {}, auth)).body.data!.currentOrganization.dataSources.nodes
        .some((d: { databaseId: number; permissions: unknown }) => d.databaseId === ds.id && d.permissions !== null),
    // Writing a grant the caller already has changes nothing but proves the right.
    permissionsWrite: await status('POST', `/api/access-control/datasources/${ds.uid}/builtInRoles/Editor`, { permission: 'Query' }),
    gqlPermissionsWrite: await gqlOk(`mutation { dataSourcePermissionSet(uid: "${ds.uid}", input: { builtInRole: "Editor", permission: "Query" }) { userErrors { code } } }`, 'dataSourcePermissionSet'),
  };
  // Last, as it ends the data source when allowed.
  result.delete = await status('DELETE', `/api/datasources/uid/${ds.uid}`);
  return result;
}

describe('the permission matrix', () => {
  it.each(CASES.map((c) => [`${c.role}, defaults ${c.defaults ? 'kept' : 'revoked'}, ${c.via === 'none' ? 'no grant' : `${c.level} to the ${c.via}`}`, c] as const))('%s', async (_name, c) => {
    const n = ++serial;
    const ds = await createDs(`matrix-${n}`);
    if (!c.defaults) {
      // The Editor grant stays until the end for the probe's grant writes, so revoke both roles by hand.
      for (const role of ['Viewer', 'Editor']) expect((await perm(ds.uid, `builtInRoles/${role}`, '')).status).toBe(200);
    }
    const user = await createUser(`matrix-user-${n}`, c.role);
    if (c.via === 'user') expect((await perm(ds.uid, `users/${user.id}`, c.level)).status).toBe(200);
    if (c.via === 'team') {
      const team = (await call(server, 'POST', '/api/teams', { body: { name: `matrix-team-${n}` } })).body.teamId;
      expect((await call(server, 'POST', `/api/teams/${team}/members`, { body: { userId: user.id } })).status).toBe(200);
      expect((await perm(ds.uid, `teams/${team}`, c.level)).status).toBe(200);
    }
    const rank = expectedRank(c);
    const reads = rank >= 1;
    const writes = rank >= 2;
    const administers = rank >= 3;
    const got = await probe(ds, user.auth);
    expect(got).toEqual({
      list: reads, byId: reads, byUid: reads, byName: reads, idByName: reads, health: reads, proxyById: reads, proxyByUid: reads,
      frontendSettings: reads, gqlList: reads, gqlById: reads, gqlByUid: reads,
      update: writes, gqlUpdate: writes,
      permissionsRead: administers, permissionsField: administers, permissionsWrite: administers, gqlPermissionsWrite: administers,
      delete: writes,
    });
  });
});

describe('across orgs and for tokens', () => {
  it('never lets a grant in one org reach another org\'s requests', async () => {
    const ds = await createDs('org-one-secret');
    const orgTwo = (await call(server, 'POST', '/api/orgs', { body: { name: 'Permissions Org Two' } })).body.orgId as number;
    const outsider = await createUser('org-two-admin', 'Admin', orgTwo);
    const headers = { 'X-Grafana-Org-Id': String(orgTwo) };
    // An Admin of org two, with org one's id and uid in hand, finds nothing.
    for (const path of [`/api/datasources/${ds.id}`, `/api/datasources/uid/${ds.uid}`, `/api/datasources/proxy/${ds.id}/x`, `/api/access-control/datasources/${ds.uid}`]) {
      expect((await call(server, 'GET', path, { auth: outsider.auth, headers })).status).toBe(404);
    }
    expect((await call(server, 'GET', '/api/datasources', { auth: outsider.auth, headers })).body).toEqual([]);
    // A user granted Admin in org one, acting in org two, sees none of org one there.
    const both = await createUser('both-orgs', 'Viewer');
    expect((await call(server, 'POST', `/api/orgs/${orgTwo}/users`, { body: { loginOrEmail: 'both-orgs', role: 'Viewer' } })).status).toBe(200);
    expect((await perm(ds.uid, `users/${both.id}`, 'Admin')).status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/${ds.id}`, { auth: both.auth })).status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/${ds.id}`, { auth: both.auth, headers })).status).toBe(404);
    expect((await call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/x`, { auth: both.auth, headers })).status).toBe(404);
    expect((await call(server, 'GET', '/api/datasources', { auth: both.auth, headers })).body).toEqual([]);
    // Org two's teams and users cannot be granted org one's data source.
    const orgTwoTeam = (await call(server, 'POST', '/api/teams', { headers, body: { name: 'org-two-team' } })).body.teamId;
    expect((await perm(ds.uid, `teams/${orgTwoTeam}`, 'Query')).status).toBe(400);
    expect((await perm(ds.uid, `users/${outsider.id}`, 'Query')).status).toBe(400);
  });

  it('lets a role-only token through by its role\'s grant alone', async () => {
    const ds = await createDs('for-keys');
    const key = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: 'perm-viewer-key', role: 'Viewer' } })).body.key}`;
    expect((await call(server, 'GET', `/api/datasources/proxy/${ds.id}/x`, { auth: key })).status).toBe(200);
    expect((await perm(ds.uid, 'builtInRoles/Viewer', '')).status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/proxy/${ds.id}/x`, { auth: key })).status).toBe(403);
    expect((await call(server, 'GET', `/api/datasources/${ds.id}`, { auth: key })).status).toBe(403);
    expect(((await call(server, 'GET', '/api/datasources', { auth: key })).body as Array<{ id: number }>).some((d) => d.id === ds.id)).toBe(false);
  });
});

describe('subscriptions', () => {
  it('stop delivering a data source its subscriber may no longer see', async () => {
    const ds = await createDs('live-perm');
    const viewer = await createUser('live-viewer', 'Viewer');
    const stream = await subscribe(server, DATA_SOURCE_CHANGED, { auth: viewer.auth });
    try {
      const update = (url: string) => call(server, 'PUT', `/api/datasources/${ds.id}`, { body: { name: ds.name, type: 'loki', access: 'proxy', url } });
      await update('http://first.example');
      await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.dataSource?.url === 'http://first.example');
      expect((await perm(ds.uid, 'builtInRoles/Viewer', '')).status).toBe(200);
      await update('http://hidden.example');
      // A change of another data source it may see arrives; the hidden one's never does.
      const other = await createDs('live-visible');
      await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.id === other.id);
      expect(stream.events.some((e) => e.data?.data?.dataSourceChanged?.dataSource?.url === 'http://hidden.example')).toBe(false);
      expect((await call(server, 'DELETE', `/api/datasources/${ds.id}`)).status).toBe(200);
      await call(server, 'DELETE', `/api/datasources/${other.id}`);
      await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.kind === 'DELETED' && e.data.data.dataSourceChanged.id === other.id);
      expect(stream.events.some((e) => e.data?.data?.dataSourceChanged?.kind === 'DELETED' && e.data.data.dataSourceChanged.id === ds.id)).toBe(false);
    } finally {
      stream.close();
    }
  });
});
