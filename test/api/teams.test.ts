import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';

/** Teams over real HTTP: the original's paths, bodies, messages and access rules. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

async function createUser(login: string, role: 'Viewer' | 'Editor' | 'Admin' = 'Viewer'): Promise<{ id: number; auth: string }> {
  const res = await call(server, 'POST', '/api/admin/users', { body: { login, email: `${login}@example.com`, password: 'user-pass' } });
  expect(res.status).toBe(200);
  if (role !== 'Viewer') expect((await call(server, 'PATCH', `/api/org/users/${res.body.id}`, { body: { role } })).status).toBe(200);
  return { id: res.body.id, auth: basic(login, 'user-pass') };
}

async function createTeam(name: string, auth = ADMIN): Promise<number> {
  const res = await call(server, 'POST', '/api/teams', { auth, body: { name, email: `${name}@example.com` } });
  expect(res.status).toBe(200);
  return res.body.teamId;
}

describe('team lifecycle', () => {
  it('creates, reads, updates and deletes a team with the original\'s answers', async () => {
    const created = await call(server, 'POST', '/api/teams', { body: { name: 'payments', email: 'pay@example.com' } });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['message', 'teamId', 'uid']);
    expect(created.body.message).toBe('Team created');
    const id = created.body.teamId;

    const got = await call(server, 'GET', `/api/teams/${id}`);
    expect(got.body).toEqual({
      id, uid: created.body.uid, orgId: 1, name: 'payments', email: 'pay@example.com',
      avatarUrl: expect.stringMatching(/^\/avatar\/[0-9a-f]{32}$/), memberCount: 1, permission: 4,
    });
    // Its creator (a user) is its Admin, as in the original since v9.
    expect((await call(server, 'GET', `/api/teams/${id}/members`)).body.map((m: { login: string; permission: number }) => [m.login, m.permission])).toEqual([['admin', 4]]);

    expect((await call(server, 'POST', '/api/teams', { body: { name: 'PAYMENTS' } })).body).toEqual({ message: 'Team name taken' });
    expect((await call(server, 'POST', '/api/teams', { body: { name: 'PAYMENTS' } })).status).toBe(409);
    expect((await call(server, 'POST', '/api/teams', { body: { name: '' } })).status).toBe(400);

    expect((await call(server, 'PUT', `/api/teams/${id}`, { body: { name: 'payments-eu', email: '' } })).body).toEqual({ message: 'Team updated' });
    expect((await call(server, 'GET', `/api/teams/${id}`)).body).toMatchObject({ name: 'payments-eu', email: '' });
    const other = await createTeam('other-team');
    const clash = await call(server, 'PUT', `/api/teams/${other}`, { body: { name: 'Payments-EU' } });
    expect([clash.status, clash.body]).toEqual([400, { message: 'Team name taken' }]);

    expect((await call(server, 'DELETE', `/api/teams/${id}`)).body).toEqual({ message: 'Team deleted' });
    const gone = await call(server, 'GET', `/api/teams/${id}`);
    expect([gone.status, gone.body]).toEqual([404, { message: 'Team not found' }]);
    const again = await call(server, 'DELETE', `/api/teams/${id}`);
    expect([again.status, again.body]).toEqual([404, { message: 'Failed to delete Team. ID not found' }]);
    expect((await call(server, 'GET', '/api/teams/abc')).body).toEqual({ message: 'teamId is invalid' });
  });

  it('manages members: add, list, permission, bulk set, remove', async () => {
    const team = await createTeam('members-team');
    const ann = await createUser('tm-ann');
    const bob = await createUser('tm-bob');
    const carl = await createUser('tm-carl');

    expect((await call(server, 'POST', `/api/teams/${team}/members`, { body: { userId: ann.id } })).body).toEqual({ message: 'Member added to Team' });
    const dup = await call(server, 'POST', `/api/teams/${team}/members`, { body: { userId: ann.id } });
    expect([dup.status, dup.body]).toEqual([400, { message: 'User is already added to this team' }]);
    expect((await call(server, 'POST', `/api/teams/${team}/members`, { body: { userId: 999999 } })).status).toBe(404);
    expect((await call(server, 'POST', `/api/teams/${team}/members`, { body: {} })).status).toBe(400);

    const members = await call(server, 'GET', `/api/teams/${team}/members`);
    expect(members.body).toEqual([expect.objectContaining({ login: 'admin', permission: 4 }), {
      orgId: 1, teamId: team, teamUID: expect.any(String), userId: ann.id, userUID: expect.any(String), auth_module: '',
      email: 'tm-ann@example.com', name: '', login: 'tm-ann', avatarUrl: expect.stringMatching(/^\/avatar\//), labels: [], permission: 0,
    }]);

    expect((await call(server, 'PUT', `/api/teams/${team}/members/${ann.id}`, { body: { permission: 4 } })).body).toEqual({ message: 'Team member updated' });
    const notMember = await call(server, 'PUT', `/api/teams/${team}/members/${bob.id}`, { body: { permission: 4 } });
    expect([notMember.status, notMember.body]).toEqual([404, { message: 'Team member not found.' }]);
    expect((await call(server, 'PUT', `/api/teams/${team}/members/${ann.id}`, { body: { permission: 2 } })).status).toBe(400);

    // Bulk: exactly these, by e-mail or login; Admin wins for one named in both lists.
    const set = await call(server, 'PUT', `/api/teams/${team}/members`, { body: { members: ['tm-bob@example.com', 'tm-carl'], admins: ['tm-carl@example.com'] } });
    expect(set.body).toEqual({ message: 'Team memberships have been updated' });
    const after = (await call(server, 'GET', `/api/teams/${team}/members`)).body as Array<{ login: string; permission: number }>;
    expect(after.map((m) => [m.login, m.permission])).toEqual([['tm-bob', 0], ['tm-carl', 4]]);
    const unknown = await call(server, 'PUT', `/api/teams/${team}/members`, { body: { members: ['nobody@example.com'] } });
    expect([unknown.status, unknown.body]).toEqual([404, { message: 'user not found' }]);
    expect((await call(server, 'GET', `/api/teams/${team}/members`)).body).toHaveLength(2);
    expect((await call(server, 'GET', `/api/teams/${team}`)).body.memberCount).toBe(2);

    expect((await call(server, 'DELETE', `/api/teams/${team}/members/${bob.id}`)).body).toEqual({ message: 'Team Member removed' });
    const missing = await call(server, 'DELETE', `/api/teams/${team}/members/${bob.id}`);
    expect([missing.status, missing.body]).toEqual([404, { message: 'Team member not found' }]);

    // The signed-in user's teams.
    const mine = await call(server, 'GET', '/api/user/teams', { auth: carl.auth });
    expect(mine.body).toEqual([expect.objectContaining({ id: team, name: 'members-team', permission: 4, memberCount: 1 })]);
    expect((await call(server, 'GET', '/api/user/teams', { auth: ann.auth })).body).toEqual([]);

    // The same in the graph: the viewer's teams, those of one org only when it names one.
    const orgId = (n: number) => Buffer.from(`OrganizationNode:${n}`).toString('base64url');
    const graph = await gql(server, `query($main: ID!, $other: ID!) { viewer { ... on User {
      all: teams { nodes { databaseId } } main: teams(organizationId: $main) { nodes { databaseId } } other: teams(organizationId: $other) { nodes { databaseId } } } } }`,
    { main: orgId(1), other: orgId(424242) }, carl.auth);
    expect(graph.body).toEqual({ data: { viewer: { all: { nodes: [{ databaseId: team }] }, main: { nodes: [{ databaseId: team }] }, other: { nodes: [] } } } });
  });
});

describe('the Ansible collection\'s grafana_team module', () => {
  it('gets through its calls in order: search by name, create, members by e-mail, add, remove, delete', async () => {
    await createUser('ansible-ann');
    await createUser('ansible-bob');
    const search = () => call(server, 'GET', '/api/teams/search?name=ansible team');
    // state=present on a fresh server: no team yet (totalCount <= 1 and an empty list), then create.
    expect((await search()).body).toMatchObject({ totalCount: 0, teams: [] });
    expect((await call(server, 'POST', '/api/teams', { body: { email: 'ops@example.com', name: 'ansible team' } })).status).toBe(200);
    const team = (await search()).body.teams[0];
    // Its creator is a member (the collection's `auto_member`, from the original's v9 on).
    expect(team).toMatchObject({ name: 'ansible team', email: 'ops@example.com', memberCount: 1, orgId: 1 });
    // members: it compares e-mails and looks users up by e-mail for their ids.
    for (const email of ['ansible-ann@example.com', 'ansible-bob@example.com']) {
      const user = await call(server, 'GET', `/api/users/lookup?loginOrEmail=${email}`);
      expect((await call(server, 'POST', `/api/teams/${team.id}/members`, { body: { userId: user.body.id } })).status).toBe(200);
    }
    const emails = (await call(server, 'GET', `/api/teams/${team.id}/members`)).body.map((m: { email: string }) => m.email);
    expect(emails).toEqual(['admin@localhost', 'ansible-ann@example.com', 'ansible-bob@example.com']);
    // enforce_members: the one no longer listed goes.
    const bob = await call(server, 'GET', '/api/users/lookup?loginOrEmail=ansible-bob@example.com');
    expect((await call(server, 'DELETE', `/api/teams/${team.id}/members/${bob.body.id}`)).status).toBe(200);
    expect((await search()).body.teams[0].memberCount).toBe(2);
    // state=absent
    expect((await call(server, 'DELETE', `/api/teams/${team.id}`)).body.message).toBe('Team deleted');
    expect((await search()).body.totalCount).toBe(0);
  });
});

describe('the collection\'s team in an org of its own (grafana_team with org_id)', () => {
  it('adds users of another org: the original\'s answers, memberCount and member list', async () => {
    // create_org.yml: the server admin creates the org, and is its Admin.
    const org = await call(server, 'POST', '/api/orgs', { body: { name: 'Other Org.' } });
    expect(org.status).toBe(200);
    const orgId = org.body.orgId as number;
    // create_user.yml: two users through the admin API; they belong to the main org only.
    for (const [name, login, email] of [['John', 'john', 'john+doe@example.com'], ['Jane', 'jane', 'jane.doe@example.com']]) {
      expect((await call(server, 'POST', '/api/admin/users', { body: { name, email, login, password: 'userpassword' } })).status).toBe(200);
    }
    const lookup = async (email: string) => (await call(server, 'GET', `/api/users/lookup?loginOrEmail=${encodeURIComponent(email)}`)).body.id as number;
    const john = await lookup('john+doe@example.com');
    const jane = await lookup('jane.doe@example.com');
    expect((await call(server, 'GET', `/api/users/${john}/orgs`)).body.map((o: { orgId: number }) => o.orgId)).toEqual([1]);

    // The module checks the version first, then switches the admin into the org (org_id).
    expect((await call(server, 'GET', '/api/health')).body.version.split('.')[0]).toBe('12');
    expect((await call(server, 'POST', `/api/user/using/${orgId}`)).body).toEqual({ message: 'Active organization changed' });
    try {
      const search = () => call(server, 'GET', `/api/teams/search?name=${encodeURIComponent('grafana working group')}`);
      expect((await search()).body).toMatchObject({ totalCount: 0, teams: [] });
      const created = await call(server, 'POST', '/api/teams', { body: { email: 'foo.bar@example.com', name: 'grafana working group' } });
      expect([created.status, created.body.message]).toEqual([200, 'Team created']);
      let team = (await search()).body.teams[0];
      // auto_member: the creating user is a member, so the module expects it in the list.
      expect(team).toMatchObject({ name: 'grafana working group', email: 'foo.bar@example.com', orgId, memberCount: 1 });
      const emails = async () => (await call(server, 'GET', `/api/teams/${team.id}/members`)).body.map((m: { email: string }) => m.email);
      expect(await emails()).toEqual(['admin@localhost']);

      for (const userId of [john, jane]) {
        const added = await call(server, 'POST', `/api/teams/${team.id}/members`, { body: { userId } });
        expect([added.status, added.body]).toEqual([200, { message: 'Member added to Team' }]);
      }
      team = (await search()).body.teams[0];
      expect(team.memberCount).toBe(3);
      expect(await emails()).toEqual(['admin@localhost', 'jane.doe@example.com', 'john+doe@example.com']);
      const again = await call(server, 'POST', `/api/teams/${team.id}/members`, { body: { userId: john } });
      expect([again.status, again.body]).toEqual([400, { message: 'User is already added to this team' }]);
      // Neither joined the org by it.
      expect((await call(server, 'GET', `/api/orgs/${orgId}/users`)).body.map((u: { login: string }) => u.login)).toEqual(['admin']);
      const listed = (await call(server, 'GET', `/api/teams/${team.id}/members`)).body as Array<{ login: string; orgId: number; permission: number }>;
      expect(listed.map((m) => [m.login, m.orgId, m.permission])).toEqual([['admin', orgId, 4], ['jane', orgId, 0], ['john', orgId, 0]]);

      // enforce_members with [admin@localhost, john]: the module removes jane.
      expect((await call(server, 'DELETE', `/api/teams/${team.id}/members/${jane}`)).body).toEqual({ message: 'Team Member removed' });
      expect((await search()).body.teams[0].memberCount).toBe(2);
      expect(await emails()).toEqual(['admin@localhost', 'john+doe@example.com']);

      // The bulk form names them by e-mail, whichever org they are in.
      const bulk = await call(server, 'PUT', `/api/teams/${team.id}/members`, { body: { members: ['jane.doe@example.com', 'john+doe@example.com'], admins: ['admin@localhost'] } });
      expect([bulk.status, bulk.body]).toEqual([200, { message: 'Team memberships have been updated' }]);
      expect(await emails()).toEqual(['admin@localhost', 'jane.doe@example.com', 'john+doe@example.com']);
      expect((await search()).body.teams[0].memberCount).toBe(3);
      const unknown = await call(server, 'PUT', `/api/teams/${team.id}/members`, { body: { members: ['nobody@example.com'] } });
      expect([unknown.status, unknown.body]).toEqual([404, { message: 'user not found' }]);

      // GraphQL: the same rule, a user of another org named by its User id.
      await call(server, 'DELETE', `/api/teams/${team.id}/members/${jane}`);
      const teamNode = (await gql(server, `{ viewer { currentOrganization { teams(query: "grafana working") { nodes { id } } } } }`)).body.data.viewer.currentOrganization.teams.nodes[0].id;
      const userNode = (await gql(server, `{ allUsers(query: "jane.doe") { nodes { id } } }`)).body.data.allUsers.nodes[0].id;
      const viaGraph = await gql(server, `mutation($team: ID!, $user: ID!) { teamMemberAdd(teamId: $team, input: { userId: $user }) {
        team { memberCount } member { login isOrganizationMember organizationMemberId } userErrors { message } } }`, { team: teamNode, user: userNode });
      expect(viaGraph.body.data.teamMemberAdd).toEqual({ team: { memberCount: 3 }, member: { login: 'jane', isOrganizationMember: false, organizationMemberId: null }, userErrors: [] });
      const members = await gql(server, `query($id: ID!) { node(id: $id) { ... on Team { memberCount members { login isOrganizationMember } } } }`, { id: teamNode });
      expect(members.body.data.node).toEqual({ memberCount: 3, members: [{ login: 'admin', isOrganizationMember: true }, { login: 'jane', isOrganizationMember: false }, { login: 'john', isOrganizationMember: false }] });
      const bulkGraph = await gql(server, `mutation($team: ID!) { teamMembersSet(teamId: $team, input: { members: ["john+doe@example.com"], admins: ["admin@localhost"] }) { team { memberCount } userErrors { message } } }`, { team: teamNode });
      expect(bulkGraph.body.data.teamMembersSet).toEqual({ team: { memberCount: 2 }, userErrors: [] });
    } finally {
      expect((await call(server, 'POST', '/api/user/using/1')).status).toBe(200);
    }
  });

  it('gives nothing in the team\'s org without membership of the org, and takes effect once the user joins', async () => {
    const org = (await call(server, 'POST', '/api/orgs', { body: { name: 'Grant Org' } })).body.orgId as number;
    const headers = { 'X-Grafana-Org-Id': String(org) };
    const outsider = await createUser('grant-outsider');
    const team = (await call(server, 'POST', '/api/teams', { headers, body: { name: 'grant-team' } })).body.teamId as number;
    expect((await call(server, 'POST', `/api/teams/${team}/members`, { headers, body: { userId: outsider.id } })).status).toBe(200);
    const ds = (await call(server, 'POST', '/api/datasources', { headers, body: { name: 'grant-ds', type: 'grafana-testdata-datasource', access: 'proxy' } })).body.datasource;
    // Only the team may query it: Viewers and Editors lose their default grant.
    for (const role of ['Viewer', 'Editor']) {
      await call(server, 'POST', `/api/access-control/datasources/${ds.uid}/builtInRoles/${role}`, { headers, body: { permission: '' } });
    }
    expect((await call(server, 'POST', `/api/access-control/datasources/${ds.uid}/teams/${team}`, { headers, body: { permission: 'Query' } })).status).toBe(200);

    // It cannot act in the org: no header, no switch; its own org's teams do not list the team.
    const asOutsider = { auth: outsider.auth, headers };
    expect((await call(server, 'GET', '/api/datasources', asOutsider)).status).toBe(401);
    const refusedSwitch = await call(server, 'POST', `/api/user/using/${org}`, { auth: outsider.auth });
    expect([refusedSwitch.status, refusedSwitch.body]).toEqual([401, { message: 'Not a valid organization' }]);
    expect((await call(server, 'GET', '/api/user/teams', { auth: outsider.auth })).body).toEqual([]);
    const graph = await gql(server, `{ viewer { organizations(first: 10) { nodes { name } } } }`, {}, outsider.auth);
    expect(graph.body.data.viewer.organizations.nodes.map((o: { name: string }) => o.name)).toEqual(['Main Org.']);

    // Once a member of the org (as Viewer), the team's grant applies at once.
    expect((await call(server, 'POST', `/api/orgs/${org}/users`, { body: { loginOrEmail: 'grant-outsider', role: 'Viewer' } })).status).toBe(200);
    expect((await call(server, 'GET', '/api/datasources', asOutsider)).body.map((d: { name: string }) => d.name)).toEqual(['grant-ds']);
    expect((await call(server, 'GET', '/api/user/teams', asOutsider)).body.map((t: { name: string }) => t.name)).toEqual(['grant-team']);
    // Leaving the org ends the team membership too, as the original's removal does.
    expect((await call(server, 'DELETE', `/api/orgs/${org}/users/${outsider.id}`)).status).toBe(200);
    expect((await call(server, 'GET', `/api/teams/${team}`, { headers })).body.memberCount).toBe(1);
  });

  it('adds the creating user as Admin, but never a token\'s service account', async () => {
    const editorAdmin = await createUser('creator-admin', 'Admin');
    const byUser = await call(server, 'POST', '/api/teams', { auth: editorAdmin.auth, body: { name: 'made-by-user' } });
    const members = await call(server, 'GET', `/api/teams/${byUser.body.teamId}/members`);
    expect(members.body.map((m: { login: string; permission: number }) => [m.login, m.permission])).toEqual([['creator-admin', 4]]);
    // It reads its team as a team Admin.
    expect((await call(server, 'GET', `/api/teams/${byUser.body.teamId}`, { auth: editorAdmin.auth })).body).toMatchObject({ memberCount: 1, permission: 4 });

    const sa = (await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'team-maker', role: 'Admin' } })).body;
    const token = (await call(server, 'POST', `/api/serviceaccounts/${sa.id}/tokens`, { body: { name: 't' } })).body.key;
    const byToken = await call(server, 'POST', '/api/teams', { auth: `Bearer ${token}`, body: { name: 'made-by-token' } });
    expect(byToken.status).toBe(200);
    expect((await call(server, 'GET', `/api/teams/${byToken.body.teamId}`)).body.memberCount).toBe(0);
    const viaGraph = await gql(server, 'mutation { teamCreate(input: { name: "made-by-graph" }) { team { memberCount permission } } }');
    expect(viaGraph.body.data.teamCreate.team).toEqual({ memberCount: 1, permission: 4 });
  });

  it('never makes a server admin a member of a team in an org it is not in: it cannot act there', async () => {
    // The original adds whichever user creates the team, in the org the request acts in; a server
    // admin who is no member of an org does not act in it, so no team is created for it there.
    const org = (await call(server, 'POST', '/api/orgs', { body: { name: 'Creator Outside Org' } })).body.orgId as number;
    const boss = await createUser('outside-boss');
    expect((await call(server, 'PUT', `/api/admin/users/${boss.id}/permissions`, { body: { isGrafanaAdmin: true } })).status).toBe(200);
    const headers = { 'X-Grafana-Org-Id': String(org) };
    const rest = await call(server, 'POST', '/api/teams', { auth: boss.auth, headers, body: { name: 'outside-rest' } });
    expect([rest.status, rest.body.message]).toEqual([401, 'Unauthorized']);
    const graph = await call(server, 'POST', '/graphql', { auth: boss.auth, headers, body: { query: 'mutation { teamCreate(input: { name: "outside-graph" }) { team { memberCount } } }' } });
    expect(graph.body).toEqual({ errors: [{ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] });

    // Removed from its only org, it acts in none: a team needs teams:create there, which no org role gives it.
    expect((await call(server, 'DELETE', `/api/orgs/1/users/${boss.id}`)).status).toBe(200);
    const none = await call(server, 'POST', '/api/teams', { auth: boss.auth, body: { name: 'outside-none' } });
    expect([none.status, none.body.message]).toEqual([403, "You'll need additional permissions to perform this action. Permissions needed: teams:create"]);
    const noneGraph = await gql(server, 'mutation { teamCreate(input: { name: "outside-none-graph" }) { team { memberCount } } }', {}, boss.auth);
    expect(noneGraph.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await server.sql("select name from team where name like 'outside-%'")).toEqual([]);
    expect(await server.sql('select team_id from team_member where user_id = $1', [boss.id])).toEqual([]);
    // A member of the org again (any role that may create teams), it is added as the others are.
    expect((await call(server, 'POST', `/api/orgs/${org}/users`, { body: { loginOrEmail: 'outside-boss', role: 'Admin' } })).status).toBe(200);
    const inside = await call(server, 'POST', '/api/teams', { auth: boss.auth, headers, body: { name: 'outside-now-inside' } });
    expect(inside.status).toBe(200);
    const members = await call(server, 'GET', `/api/teams/${inside.body.teamId}/members`, { headers });
    expect(members.body.map((m: { login: string; permission: number; orgId: number }) => [m.login, m.permission, m.orgId])).toEqual([['outside-boss', 4, org]]);
  });
});

describe('team search and paging', () => {
  it('filters by query and name, pages with totalCount, and answers past the end', async () => {
    for (const name of ['search-a', 'search-b', 'search-c', 'Search-D', 'other-x']) await createTeam(name);
    const page1 = await call(server, 'GET', '/api/teams/search?query=search&perpage=2&page=1');
    expect(page1.body).toMatchObject({ totalCount: 4, page: 1, perPage: 2 });
    expect(page1.body.teams.map((t: { name: string }) => t.name)).toEqual(['search-a', 'search-b']);
    const page2 = await call(server, 'GET', '/api/teams/search?query=search&perpage=2&page=2');
    expect(page2.body.teams.map((t: { name: string }) => t.name)).toEqual(['search-c', 'Search-D']);
    const past = await call(server, 'GET', '/api/teams/search?query=search&perpage=2&page=9');
    expect(past.body).toEqual({ totalCount: 4, teams: [], page: 9, perPage: 2 });
    expect((await call(server, 'GET', '/api/teams/search?name=search-b')).body.teams.map((t: { name: string }) => t.name)).toEqual(['search-b']);
    // The original's defaults for what does not parse: page 1, 1000 a page.
    expect((await call(server, 'GET', '/api/teams/search?query=search&perpage=x&page=-3')).body).toMatchObject({ totalCount: 4, page: 1, perPage: 1000 });
    expect((await call(server, 'GET', '/api/teams/search?query=%25')).body.totalCount).toBe(0);
  });

  it('runs a root field /graphql does not know: a query naming it fails validation, introspection lacks it', async () => {
    const named = await gql(server, '{ teamSearch(query: "search") { totalCount } }');
    expect(named.status).toBe(400);
    expect(named.body.errors).toEqual([{ message: expect.stringMatching(/^Cannot query field "teamSearch" on type "Query"\./), locations: [{ line: 1, column: 3 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
    const seen = await gql<{ __type: { fields: Array<{ name: string }> }; teamPage: unknown; accountPage: unknown }>(
      server, '{ __type(name: "Query") { fields(includeDeprecated: true) { name } } teamPage: __type(name: "TeamSearch") { name } accountPage: __type(name: "ServiceAccountSearch") { name } }');
    const fields = seen.body.data!.__type.fields.map((f) => f.name);
    expect(fields).toContain('viewer');
    expect(fields).not.toContain('teamSearch');
    expect(fields).not.toContain('serviceAccountSearch');
    expect(seen.body.data).toMatchObject({ teamPage: null, accountPage: null });
  });
});

describe('team access rules', () => {
  it('lets org Admins do everything, team Admins their own team, members read it, others nothing', async () => {
    const team = await createTeam('access-team');
    const elsewhere = await createTeam('access-other');
    const teamAdmin = await createUser('ta-admin');
    const member = await createUser('ta-member', 'Editor');
    const outsider = await createUser('ta-outsider', 'Editor');
    await call(server, 'PUT', `/api/teams/${team}/members`, { body: { members: ['ta-member'], admins: ['ta-admin'] } });

    // Creating a team: org Admins only.
    const refused = await call(server, 'POST', '/api/teams', { auth: member.auth, body: { name: 'nope' } });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('teams:create');

    // Search: non-admins see their own teams only.
    const seen = (auth: string) => call(server, 'GET', '/api/teams/search?query=access', { auth }).then((r) => r.body.teams.map((t: { name: string }) => t.name));
    expect(await seen(ADMIN)).toEqual(['access-other', 'access-team']);
    expect(await seen(member.auth)).toEqual(['access-team']);
    expect(await seen(outsider.auth)).toEqual([]);

    // Reading one: members yes; others 403 whether it exists or not (no existence leak).
    expect((await call(server, 'GET', `/api/teams/${team}`, { auth: member.auth })).status).toBe(200);
    for (const id of [elsewhere, 999999]) {
      const res = await call(server, 'GET', `/api/teams/${id}`, { auth: outsider.auth });
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('teams:read');
    }

    // Members and changes: team Admins of this team, not plain members.
    expect((await call(server, 'GET', `/api/teams/${team}/members`, { auth: member.auth })).status).toBe(403);
    expect((await call(server, 'GET', `/api/teams/${team}/members`, { auth: teamAdmin.auth })).status).toBe(200);
    expect((await call(server, 'PUT', `/api/teams/${team}`, { auth: member.auth, body: { name: 'renamed' } })).status).toBe(403);
    expect((await call(server, 'PUT', `/api/teams/${team}`, { auth: teamAdmin.auth, body: { name: 'access-team' } })).status).toBe(200);
    expect((await call(server, 'POST', `/api/teams/${team}/members`, { auth: teamAdmin.auth, body: { userId: outsider.id } })).status).toBe(200);
    expect((await call(server, 'POST', `/api/teams/${elsewhere}/members`, { auth: teamAdmin.auth, body: { userId: outsider.id } })).status).toBe(403);
    expect((await call(server, 'DELETE', `/api/teams/${elsewhere}`, { auth: teamAdmin.auth })).status).toBe(403);
    expect((await call(server, 'DELETE', `/api/teams/${team}`, { auth: teamAdmin.auth })).status).toBe(200);
  });

  it('keeps teams in their org: another org neither sees nor changes them', async () => {
    const team = await createTeam('org-one-team');
    const org = await call(server, 'POST', '/api/orgs', { body: { name: 'Team Org Two' } });
    const orgTwo = { 'X-Grafana-Org-Id': String(org.body.orgId) };
    expect((await call(server, 'GET', `/api/teams/${team}`, { headers: orgTwo })).status).toBe(404);
    expect((await call(server, 'PUT', `/api/teams/${team}`, { headers: orgTwo, body: { name: 'x' } })).status).toBe(404);
    expect((await call(server, 'DELETE', `/api/teams/${team}`, { headers: orgTwo })).status).toBe(404);
    expect((await call(server, 'GET', '/api/teams/search?query=org-one', { headers: orgTwo })).body.totalCount).toBe(0);
    // The same name is free in another org.
    expect((await call(server, 'POST', '/api/teams', { headers: orgTwo, body: { name: 'org-one-team' } })).status).toBe(200);
    // A user of org 1 only may join a team of org 2, as in the original (see the collection's scenario below).
    const loner = await createUser('org-one-only');
    const orgTwoTeam = (await call(server, 'GET', '/api/teams/search?name=org-one-team', { headers: orgTwo })).body.teams[0].id;
    expect((await call(server, 'POST', `/api/teams/${orgTwoTeam}/members`, { headers: orgTwo, body: { userId: loner.id } })).status).toBe(200);
    // An id no user has is still refused.
    const nobody = await call(server, 'POST', `/api/teams/${orgTwoTeam}/members`, { headers: orgTwo, body: { userId: 999999 } });
    expect([nobody.status, nobody.body]).toEqual([404, { message: 'user not found' }]);
  });
});

describe('clean-up', () => {
  it('removes memberships with the user, with its org membership, and teams with their org', async () => {
    const org = await call(server, 'POST', '/api/orgs', { body: { name: 'Doomed Team Org' } });
    const orgId = org.body.orgId as number;
    const headers = { 'X-Grafana-Org-Id': String(orgId) };
    const team = (await call(server, 'POST', '/api/teams', { headers, body: { name: 'doomed' } })).body.teamId;
    const dave = await createUser('cleanup-dave');
    const erin = await createUser('cleanup-erin');
    for (const login of ['cleanup-dave', 'cleanup-erin']) {
      expect((await call(server, 'POST', `/api/orgs/${orgId}/users`, { body: { loginOrEmail: login, role: 'Viewer' } })).status).toBe(200);
    }
    await call(server, 'PUT', `/api/teams/${team}/members`, { headers, body: { members: ['cleanup-dave', 'cleanup-erin'] } });
    expect((await call(server, 'GET', `/api/teams/${team}`, { headers })).body.memberCount).toBe(2);

    expect((await call(server, 'DELETE', `/api/admin/users/${dave.id}`)).status).toBe(200);
    expect((await call(server, 'GET', `/api/teams/${team}`, { headers })).body.memberCount).toBe(1);
    expect((await call(server, 'DELETE', `/api/orgs/${orgId}/users/${erin.id}`)).status).toBe(200);
    expect((await call(server, 'GET', `/api/teams/${team}`, { headers })).body.memberCount).toBe(0);

    expect((await call(server, 'DELETE', `/api/orgs/${orgId}`)).status).toBe(200);
    expect(await server.sql('select id from team where id = $1', [team])).toEqual([]);
    expect(await server.sql('select 1 from team_member where team_id = $1', [team])).toEqual([]);
  });
});

describe('loose bodies, as the original reads them', () => {
  it('answers missing, extra and mistyped keys as before: 400 for what it needs, the rest ignored', async () => {
    const team = await createTeam('loose-bodies');
    const user = await createUser('loose-member');
    const status = async (method: string, path: string, body?: unknown) => {
      const res = await call(server, method, path, body === undefined ? {} : { body });
      return [res.status, res.body.message];
    };
    expect(await status('POST', '/api/teams', {})).toEqual([400, 'bad request data']);
    expect(await status('POST', '/api/teams', { NAME: 'loose-upper', Email: 'x@example.com', extra: 1 })).toEqual([200, 'Team created']);
    expect(await status('PUT', `/api/teams/${team}`, { email: 'only@example.com' })).toEqual([400, 'bad request data']);
    expect(await status('PUT', '/api/teams/abc', { name: 'x' })).toEqual([400, 'teamId is invalid']);
    expect(await status('POST', `/api/teams/${team}/members`, {})).toEqual([400, 'bad request data']);
    expect(await status('POST', `/api/teams/${team}/members`, { userId: String(user.id) })).toEqual([400, 'bad request data']);
    expect(await status('POST', `/api/teams/${team}/members`, { userId: 0 })).toEqual([400, 'bad request data']);
    // The original's command reads the user's id only: a permission in the body makes no Admin.
    expect(await status('POST', `/api/teams/${team}/members`, { userId: user.id, permission: 4 })).toEqual([200, 'Member added to Team']);
    const members = (await call(server, 'GET', `/api/teams/${team}/members`)).body as Array<{ login: string; permission: number }>;
    expect(members.find((m) => m.login === 'loose-member')?.permission).toBe(0);
    // No permission: back to Member.
    expect(await status('PUT', `/api/teams/${team}/members/${user.id}`, { permission: 4 })).toEqual([200, 'Team member updated']);
    expect(await status('PUT', `/api/teams/${team}/members/${user.id}`, {})).toEqual([200, 'Team member updated']);
    expect((await call(server, 'GET', `/api/teams/${team}/members`)).body.find((m: { login: string }) => m.login === 'loose-member').permission).toBe(0);
    expect(await status('PUT', `/api/teams/${team}/members/${user.id}`, { permission: 2 })).toEqual([400, 'bad request data']);
    expect(await status('PUT', `/api/teams/${team}/members/x`, {})).toEqual([400, 'userId is invalid']);
    expect(await status('PUT', `/api/teams/${team}/members`, {})).toEqual([200, 'Team memberships have been updated']);
    expect(await status('GET', '/api/teams/99999')).toEqual([404, 'Team not found']);
    expect(await status('GET', '/api/teams/99999/members')).toEqual([404, 'Team not found']);
    expect(await status('DELETE', `/api/teams/${team}/members/99999`)).toEqual(await status('DELETE', `/api/teams/${team}/members/99998`));
  });
});

describe('GraphQL', () => {
  it('shows teams on the org and members on the team, and writes through mutations', async () => {
    const created = await gql(server, 'mutation { teamCreate(input: { name: "gql-team", email: "g@example.com" }) { team { id databaseId name memberCount } userErrors { message } } }');
    expect(created.body.data.teamCreate).toMatchObject({ team: { name: 'gql-team', memberCount: 1 }, userErrors: [] });
    const { id: teamId, databaseId } = created.body.data.teamCreate.team;
    const user = await createUser('gql-member');
    const userNode = (await gql(server, '{ allUsers(query: "gql-member") { nodes { id } } }')).body.data.allUsers.nodes[0].id;
    const added = await gql(server, 'mutation($team: ID!, $user: ID!) { teamMemberAdd(teamId: $team, input: { userId: $user }) { member { login } userErrors { message } } }', { team: teamId, user: userNode });
    expect(added.body.data.teamMemberAdd).toEqual({ member: { login: 'gql-member' }, userErrors: [] });
    const read = await gql(server, '{ currentOrganization { teams { nodes { name memberCount members { login permission } } } } }');
    expect(read.body.data.currentOrganization.teams.nodes).toContainEqual({ name: 'gql-team', memberCount: 2, members: [{ login: 'admin', permission: 4 }, { login: 'gql-member', permission: 0 }] });
    // The org's team by its REST id, the same object as the node.
    const byId = await gql(server, `{ currentOrganization { team(databaseId: ${databaseId}) { id orgId name } } }`);
    expect(byId.body.data.currentOrganization.team).toEqual({ id: teamId, orgId: 1, name: 'gql-team' });
    // A member who is no Admin of the team may not list its members.
    const denied = await gql(server, `{ currentOrganization { team(databaseId: ${databaseId}) { name members { login } } } }`, {}, user.auth);
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(denied.body.data.currentOrganization.team).toBeNull();
    const deleted = await gql(server, 'mutation($team: ID!) { teamDelete(id: $team) { deletedTeamId userErrors { message } } }', { team: teamId });
    expect(deleted.body.data.teamDelete).toEqual({ deletedTeamId: teamId, userErrors: [] });
    expect((await gql(server, `{ currentOrganization { team(databaseId: ${databaseId}) { name } } }`)).body.data.currentOrganization.team).toBeNull();
  });
});
