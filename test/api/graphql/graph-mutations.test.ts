import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../../support/server.ts';
import { subscribe } from '../../support/sse.ts';

/**
 * The graph's mutations over real HTTP and PostgreSQL: each answers the changed node as the
 * graph's queries read it (the same global id `node(id)` takes), or the deleted node's id, and
 * `userErrors` with REST's message word for word where REST answers 4xx; refusals of the caller
 * stay errors of the request.
 */
let server: TestServer;
const MAY = basic('mut-may', 'may-secret');
const NED = basic('mut-ned', 'ned-secret');

async function ok<T = any>(query: string, variables: Record<string, unknown> = {}, auth: string = ADMIN): Promise<T> {
  const res = await gql<T>(server, query, variables, auth);
  expect(res.body.errors).toBeUndefined();
  expect(res.status).toBe(200);
  return res.body.data!;
}

/** The error code a request answers with (the mutation refused as a whole). */
async function refused(query: string, variables: Record<string, unknown>, auth: string): Promise<string | undefined> {
  const res = await gql(server, query, variables, auth);
  expect(res.body.data?.[Object.keys(res.body.data ?? {})[0] ?? ''] ?? null).toBeNull();
  return res.body.errors?.[0]?.extensions?.code;
}

const nodeOf = async (id: string, selection: string, auth = ADMIN) => (await ok(`query($id: ID!) { node(id: $id) { ${selection} } }`, { id }, auth)).node;

let mainOrgId = '';

beforeAll(async () => {
  server = await startTestServer();
  for (const [login, password] of [['mut-may', 'may-secret'], ['mut-ned', 'ned-secret']]) {
    expect((await call(server, 'POST', '/api/admin/users', { body: { login, password, email: `${login}@mut.test` } })).status).toBe(200);
  }
  mainOrgId = (await ok('{ viewer { currentOrganization { id } } }')).viewer.currentOrganization.id;
});
afterAll(() => server.close());

const ORG = 'organization { id databaseId name } userErrors { message code }';
const MEMBER = 'member { id role login organization { name } } userErrors { message code }';

describe('organizations and their members', () => {
  it('creates, renames and deletes an org, answering its node, REST\'s 4xx as user errors', async () => {
    const created = (await ok(`mutation($input: OrganizationCreateInput!) { organizationCreate(input: $input) { ${ORG} } }`, { input: { name: 'Mut Org' } })).organizationCreate;
    expect(created).toEqual({ organization: { id: expect.any(String), databaseId: expect.any(Number), name: 'Mut Org' }, userErrors: [] });
    expect(await nodeOf(created.organization.id, '... on Organization { name }')).toEqual({ name: 'Mut Org' });
    const again = (await ok(`mutation { organizationCreate(input: { name: "Mut Org" }) { ${ORG} } }`)).organizationCreate;
    expect(again).toEqual({ organization: null, userErrors: [{ message: 'Organization name taken', code: 'CONFLICT' }] });

    const update = `mutation($id: ID!, $name: String!) { organizationUpdate(id: $id, input: { name: $name }) { ${ORG} } }`;
    expect((await ok(update, { id: created.organization.id, name: 'Mut Org 2' })).organizationUpdate.organization.name).toBe('Mut Org 2');
    // REST answers 400 here (409 on create), and says so word for word.
    expect((await ok(update, { id: created.organization.id, name: 'Main Org.' })).organizationUpdate)
      .toEqual({ organization: null, userErrors: [{ message: 'Organization name taken', code: 'BAD_REQUEST' }] });
    // May belongs to the main org only: changing another org is refused, as an error of the request.
    expect(await refused(update, { id: created.organization.id, name: 'x' }, MAY)).toBe('FORBIDDEN');

    const remove = 'mutation($id: ID!) { organizationDelete(id: $id) { deletedOrganizationId userErrors { message code } } }';
    expect((await ok(remove, { id: mainOrgId })).organizationDelete)
      .toEqual({ deletedOrganizationId: null, userErrors: [{ message: 'Can not delete org for current user', code: 'BAD_REQUEST' }] });
    expect((await ok(remove, { id: created.organization.id })).organizationDelete).toEqual({ deletedOrganizationId: created.organization.id, userErrors: [] });
    expect(await nodeOf(created.organization.id, 'id')).toBeNull();
    expect((await ok(remove, { id: created.organization.id })).organizationDelete.userErrors).toEqual([{ message: 'Failed to delete organization. ID not found', code: 'NOT_FOUND' }]);
    // A malformed id is the request's error, not a user error.
    expect(await refused(remove, { id: '!!' }, ADMIN)).toBe('BAD_REQUEST');
  });

  it('adds, re-roles and removes members of a given org and of the current one', async () => {
    const org = (await ok(`mutation { organizationCreate(input: { name: "Mut Members" }) { ${ORG} } }`)).organizationCreate.organization;
    const add = `mutation($org: ID!, $login: String!, $role: String!) { organizationMemberAdd(organizationId: $org, input: { loginOrEmail: $login, role: $role }) { ${MEMBER} } }`;
    const added = (await ok(add, { org: org.id, login: 'mut-may', role: 'Editor' })).organizationMemberAdd;
    expect(added).toEqual({ member: { id: expect.any(String), role: 'Editor', login: 'mut-may', organization: { name: 'Mut Members' } }, userErrors: [] });
    expect(await nodeOf(added.member.id, '... on OrganizationMember { role }')).toEqual({ role: 'Editor' });
    expect((await ok(add, { org: org.id, login: 'mut-may', role: 'Viewer' })).organizationMemberAdd)
      .toEqual({ member: null, userErrors: [{ message: 'User is already member of this organization', code: 'CONFLICT' }] });
    expect((await ok(add, { org: org.id, login: 'nobody', role: 'Viewer' })).organizationMemberAdd.userErrors).toEqual([{ message: 'User not found', code: 'NOT_FOUND' }]);
    expect((await ok(add, { org: org.id, login: 'mut-ned', role: 'Owner' })).organizationMemberAdd.userErrors).toEqual([{ message: 'Invalid role specified', code: 'BAD_REQUEST' }]);

    const update = `mutation($id: ID!, $role: String!) { organizationMemberUpdate(id: $id, input: { role: $role }) { ${MEMBER} } }`;
    expect((await ok(update, { id: added.member.id, role: 'Admin' })).organizationMemberUpdate.member.role).toBe('Admin');
    // The creator (the server admin) leaves; May is then the last Admin, who cannot be demoted.
    const members = (await nodeOf(org.id, '... on Organization { members { nodes { id login } } }')).members.nodes;
    const creator = members.find((m: { login: string }) => m.login === 'admin').id;
    const removal = 'mutation($id: ID!) { organizationMemberRemove(id: $id) { deletedMemberId deletedUserId userErrors { message code } } }';
    expect((await ok(removal, { id: creator })).organizationMemberRemove).toEqual({ deletedMemberId: creator, deletedUserId: null, userErrors: [] });
    expect((await ok(update, { id: added.member.id, role: 'Viewer' })).organizationMemberUpdate.userErrors)
      .toEqual([{ message: 'Cannot change role so that there is no organization admin left', code: 'BAD_REQUEST' }]);
    // May, the org's Admin, adds Ned there; Ned, a Viewer, may not change members.
    const nedThere = (await ok(add, { org: org.id, login: 'mut-ned', role: 'Viewer' }, MAY)).organizationMemberAdd.member;
    expect(await refused(update, { id: nedThere.id, role: 'Admin' }, NED)).toBe('FORBIDDEN');
    // Removed from an org that is not the one the request acts in, Ned stays a user.
    expect((await ok(removal, { id: nedThere.id }, MAY)).organizationMemberRemove).toEqual({ deletedMemberId: nedThere.id, deletedUserId: null, userErrors: [] });
    expect((await ok(removal, { id: added.member.id })).organizationMemberRemove.userErrors).toEqual([{ message: 'Cannot remove last organization admin', code: 'BAD_REQUEST' }]);

    // The current org, as DELETE /api/org/users/:userId: a user left in no org is deleted with it.
    const loner = await call(server, 'POST', '/api/admin/users', { body: { login: 'mut-loner', password: 'loner-secret' } });
    const lonerMember = (await ok(`{ viewer { currentOrganization { members(query: "mut-loner") { nodes { id userId } } } } }`)).viewer.currentOrganization.members.nodes[0];
    expect(lonerMember.userId).toBe(loner.body.id);
    const gone = (await ok(removal, { id: lonerMember.id })).organizationMemberRemove;
    expect(gone).toEqual({ deletedMemberId: lonerMember.id, deletedUserId: expect.any(String), userErrors: [] });
    expect(await nodeOf(gone.deletedUserId, 'id')).toBeNull();
    expect((await call(server, 'GET', `/api/users/${loner.body.id}`)).status).toBe(404);
  });

  it('reads back what the request changed, also a second time in one request and once compiled', async () => {
    const org = (await ok(`mutation { organizationCreate(input: { name: "Mut Twice" }) { ${ORG} } }`)).organizationCreate.organization;
    const twice = `mutation($id: ID!) {
      a: organizationUpdate(id: $id, input: { name: "Mut Twice A" }) { organization { name } }
      b: organizationUpdate(id: $id, input: { name: "Mut Twice B" }) { organization { name } } }`;
    // The second time the same document comes, it runs compiled (graphql-jit): mutations still one after the other.
    for (let i = 0; i < 2; i++) {
      expect(await ok(twice, { id: org.id })).toEqual({ a: { organization: { name: 'Mut Twice A' } }, b: { organization: { name: 'Mut Twice B' } } });
    }
  });
});

const USER = 'user { id databaseId login name isDisabled isServiceAdmin } userErrors { message code }';

describe('users', () => {
  it('lets server admins create, change and delete users, answering their nodes', async () => {
    const create = `mutation($input: UserCreateInput!) { userCreate(input: $input) { ${USER} } }`;
    const created = (await ok(create, { input: { login: 'mut-una', password: 'una-secret', name: 'Una' } })).userCreate;
    expect(created).toEqual({ user: { id: expect.any(String), databaseId: expect.any(Number), login: 'mut-una', name: 'Una', isDisabled: false, isServiceAdmin: false }, userErrors: [] });
    expect((await ok(create, { input: { login: 'mut-una', password: 'una-secret' } })).userCreate.userErrors)
      .toEqual([{ message: 'User with email \'\' or username \'mut-una\' already exists', code: 'PRECONDITION_FAILED' }]);
    // Another type's id names no org: refused as an unknown org, not read as the default one.
    expect((await ok(create, { input: { login: 'mut-other', password: 'x-secret', organizationId: created.user.id } })).userCreate.userErrors)
      .toEqual([{ message: 'organization not found', code: 'BAD_REQUEST' }]);
    const id = created.user.id;

    const updated = (await ok(`mutation($id: ID!) { userUpdate(id: $id, input: { login: "mut-una2", name: "Una Two" }) { ${USER} } }`, { id })).userUpdate;
    expect(updated.user).toMatchObject({ id, login: 'mut-una2', name: 'Una Two' });
    expect((await ok(`mutation($id: ID!) { userUpdate(id: $id, input: { login: "mut-may" }) { ${USER} } }`, { id })).userUpdate.userErrors)
      .toEqual([{ message: 'Update would result in user login conflict', code: 'CONFLICT' }]);

    expect((await ok(`mutation($id: ID!) { userDisable(id: $id) { ${USER} } }`, { id })).userDisable.user.isDisabled).toBe(true);
    expect((await call(server, 'GET', '/api/user', { auth: basic('mut-una2', 'una-secret') })).status).toBe(401);
    expect((await ok(`mutation($id: ID!) { userEnable(id: $id) { ${USER} } }`, { id })).userEnable.user.isDisabled).toBe(false);
    expect((await ok(`mutation($id: ID!) { userPasswordUpdate(id: $id, input: { password: "x" }) { ${USER} } }`, { id })).userPasswordUpdate.userErrors)
      .toEqual([{ message: 'New password too short', code: 'BAD_REQUEST' }]);
    expect((await ok(`mutation($id: ID!) { userPasswordUpdate(id: $id, input: { password: "una-new-secret" }) { ${USER} } }`, { id })).userPasswordUpdate.userErrors).toEqual([]);
    expect((await call(server, 'GET', '/api/user', { auth: basic('mut-una2', 'una-new-secret') })).status).toBe(200);
    expect((await ok(`mutation($id: ID!) { userPermissionsUpdate(id: $id, input: { isServiceAdmin: true }) { ${USER} } }`, { id })).userPermissionsUpdate.user.isServiceAdmin).toBe(true);
    // May is no server admin: refused as a whole.
    expect(await refused(`mutation($id: ID!) { userPermissionsUpdate(id: $id, input: { isServiceAdmin: false }) { ${USER} } }`, { id }, MAY)).toBe('FORBIDDEN');

    const remove = 'mutation($id: ID!) { userDelete(id: $id) { deletedUserId userErrors { message code } } }';
    expect((await ok(remove, { id })).userDelete).toEqual({ deletedUserId: id, userErrors: [] });
    expect((await ok(remove, { id })).userDelete).toEqual({ deletedUserId: null, userErrors: [{ message: 'user not found', code: 'NOT_FOUND' }] });
  });

  it('lets a signed-in user change itself, a wrong old password being a user error, and refuses tokens', async () => {
    const me = (await ok(`mutation { viewerUpdate(input: { login: "mut-ned", name: "Ned" }) { ${USER} } }`, {}, NED)).viewerUpdate;
    expect(me.user).toMatchObject({ login: 'mut-ned', name: 'Ned' });
    expect(await nodeOf(me.user.id, '... on User { name }', NED)).toEqual({ name: 'Ned' });

    const change = `mutation($old: String!, $new: String!) { viewerPasswordChange(input: { oldPassword: $old, newPassword: $new }) { ${USER} } }`;
    expect((await ok(change, { old: 'wrong', new: 'ned-new-secret' }, NED)).viewerPasswordChange)
      .toEqual({ user: null, userErrors: [{ message: 'Invalid old password', code: 'UNAUTHENTICATED' }] });
    expect((await ok(change, { old: 'ned-secret', new: 'ned-new-secret' }, NED)).viewerPasswordChange.userErrors).toEqual([]);
    const ned = basic('mut-ned', 'ned-new-secret');
    expect((await call(server, 'GET', '/api/user', { auth: ned })).status).toBe(200);

    const other = (await ok(`mutation { organizationCreate(input: { name: "Mut Ned's" }) { ${ORG} } }`)).organizationCreate.organization;
    const switchTo = 'mutation($id: ID!) { viewerOrganizationSwitch(organizationId: $id) { user { id } userErrors { message code } } }';
    expect((await ok(switchTo, { id: other.id }, ned)).viewerOrganizationSwitch.userErrors).toEqual([{ message: 'Not a valid organization', code: 'UNAUTHENTICATED' }]);
    await ok(`mutation($org: ID!) { organizationMemberAdd(organizationId: $org, input: { loginOrEmail: "mut-ned", role: "Viewer" }) { ${MEMBER} } }`, { org: other.id });
    expect((await ok(switchTo, { id: other.id }, ned)).viewerOrganizationSwitch.userErrors).toEqual([]);
    expect((await call(server, 'GET', '/api/user', { auth: ned })).body.orgId).toBe(other.databaseId);

    // Back as he was, for the tests that follow.
    await ok(switchTo, { id: mainOrgId }, ned);
    await ok(change, { old: 'ned-new-secret', new: 'ned-secret' }, ned);

    const sa = await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'mut-viewer-sa', role: 'Admin' } });
    const key = (await call(server, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { body: { name: 'mut-viewer-token' } })).body.key;
    expect(await refused(`mutation { viewerUpdate(input: { login: "x" }) { ${USER} } }`, {}, `Bearer ${key}`)).toBe('FORBIDDEN');
  });
});

const ACCOUNT = 'serviceAccount { id databaseId name role isDisabled tokenCount } userErrors { message code }';

describe('service accounts and their tokens', () => {
  it('creates, changes, disables and deletes accounts and tokens, the secret shown once', async () => {
    const created = (await ok(`mutation { serviceAccountCreate(input: { name: "mut-sa", role: "Editor" }) { ${ACCOUNT} } }`)).serviceAccountCreate;
    expect(created).toEqual({ serviceAccount: { id: expect.any(String), databaseId: expect.any(Number), name: 'mut-sa', role: 'Editor', isDisabled: false, tokenCount: 0 }, userErrors: [] });
    expect((await ok(`mutation { serviceAccountCreate(input: { name: "mut-sa" }) { ${ACCOUNT} } }`)).serviceAccountCreate.userErrors)
      .toEqual([{ message: 'Failed to create service account', code: 'BAD_REQUEST' }]);
    const id = created.serviceAccount.id;
    expect((await ok(`mutation($id: ID!) { serviceAccountUpdate(id: $id, input: { name: "mut-sa-2", role: "Viewer" }) { ${ACCOUNT} } }`, { id })).serviceAccountUpdate.serviceAccount)
      .toMatchObject({ id, name: 'mut-sa-2', role: 'Viewer' });

    const tokenCreate = `mutation($id: ID!, $name: String!) { serviceAccountTokenCreate(serviceAccountId: $id, input: { name: $name }) {
      token { id name serviceAccount { id } } key serviceAccount { tokenCount } userErrors { message code } } }`;
    const made = (await ok(tokenCreate, { id, name: 'mut-token' })).serviceAccountTokenCreate;
    expect(made).toEqual({ token: { id: expect.any(String), name: 'mut-token', serviceAccount: { id } }, key: expect.stringMatching(/^glsa_/), serviceAccount: { tokenCount: 1 }, userErrors: [] });
    expect(await nodeOf(made.token.id, '... on ServiceAccountToken { name }')).toEqual({ name: 'mut-token' });
    expect((await ok(tokenCreate, { id, name: 'mut-token' })).serviceAccountTokenCreate)
      .toEqual({ token: null, key: null, serviceAccount: null, userErrors: [{ message: 'service account token with given name already exists in the organization', code: 'CONFLICT' }] });
    const bearer = `Bearer ${made.key}`;
    expect((await call(server, 'GET', '/api/datasources', { auth: bearer })).status).toBe(200);

    expect((await ok(`mutation($id: ID!) { serviceAccountDisable(id: $id) { ${ACCOUNT} } }`, { id })).serviceAccountDisable.serviceAccount.isDisabled).toBe(true);
    expect((await call(server, 'GET', '/api/datasources', { auth: bearer })).status).toBe(401);
    expect((await ok(`mutation($id: ID!) { serviceAccountEnable(id: $id) { ${ACCOUNT} } }`, { id })).serviceAccountEnable.serviceAccount.isDisabled).toBe(false);

    const tokenDelete = 'mutation($id: ID!) { serviceAccountTokenDelete(id: $id) { deletedServiceAccountTokenId serviceAccount { tokenCount } userErrors { message code } } }';
    expect((await ok(tokenDelete, { id: made.token.id })).serviceAccountTokenDelete).toEqual({ deletedServiceAccountTokenId: made.token.id, serviceAccount: { tokenCount: 0 }, userErrors: [] });
    expect((await call(server, 'GET', '/api/datasources', { auth: bearer })).status).toBe(401);
    expect((await ok(tokenDelete, { id: made.token.id })).serviceAccountTokenDelete.userErrors).toEqual([{ message: 'Failed to delete service account token', code: 'NOT_FOUND' }]);

    // Another org's account is not found in the org the request acts in, as REST answers.
    const other = (await ok(`mutation { organizationCreate(input: { name: "Mut SA Org" }) { ${ORG} } }`)).organizationCreate.organization;
    const otherSa = await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'mut-other-sa' }, headers: { 'x-grafana-org-id': String(other.databaseId) } });
    const otherId = (await ok('{ viewer { organizations { nodes { databaseId serviceAccounts(query: "mut-other-sa") { nodes { id databaseId } } } } } }'))
      .viewer.organizations.nodes.find((o: { databaseId: number }) => o.databaseId === other.databaseId).serviceAccounts.nodes[0];
    expect(otherId.databaseId).toBe(otherSa.body.id);
    expect((await ok('mutation($id: ID!) { serviceAccountDelete(id: $id) { deletedServiceAccountId userErrors { message code } } }', { id: otherId.id })).serviceAccountDelete)
      .toEqual({ deletedServiceAccountId: null, userErrors: [{ message: 'Failed to retrieve service account', code: 'NOT_FOUND' }] });

    expect(await refused(`mutation($id: ID!) { serviceAccountDelete(id: $id) { deletedServiceAccountId } }`, { id }, MAY)).toBe('FORBIDDEN');
    expect((await ok('mutation($id: ID!) { serviceAccountDelete(id: $id) { deletedServiceAccountId userErrors { message code } } }', { id })).serviceAccountDelete)
      .toEqual({ deletedServiceAccountId: id, userErrors: [] });
    expect(await nodeOf(id, 'id')).toBeNull();
  });
});

const TEAM = 'team { id name email memberCount members { login permission organizationMemberId } } userErrors { message code }';

describe('teams and their members', () => {
  it('creates, changes and deletes teams and memberships, by node ids, as REST decides who may', async () => {
    const created = (await ok(`mutation { teamCreate(input: { name: "mut-team", email: "team@mut.test" }) { ${TEAM} } }`)).teamCreate;
    // Its creator is its Admin, as in the original since v9.
    expect(created).toEqual({ team: { id: expect.any(String), name: 'mut-team', email: 'team@mut.test', memberCount: 1, members: [{ login: 'admin', permission: 4, organizationMemberId: expect.any(String) }] }, userErrors: [] });
    expect((await ok(`mutation { teamCreate(input: { name: "MUT-TEAM" }) { ${TEAM} } }`)).teamCreate.userErrors).toEqual([{ message: 'Team name taken', code: 'CONFLICT' }]);
    const teamId = created.team.id;
    const members = (await ok('{ viewer { currentOrganization { members { nodes { id login } } } } }')).viewer.currentOrganization.members.nodes;
    const memberId = (login: string) => members.find((m: { login: string }) => m.login === login).id;
    const mayId = memberId('mut-may');
    const nedId = memberId('mut-ned');

    // By an org membership's id (what org Admins list), with the member's permission.
    const add = `mutation($team: ID!, $user: ID!, $permission: Int) { teamMemberAdd(teamId: $team, input: { userId: $user, permission: $permission }) {
      team { memberCount } member { login permission organizationMemberId } userErrors { message code } } }`;
    expect((await ok(add, { team: teamId, user: mayId, permission: 4 })).teamMemberAdd)
      .toEqual({ team: { memberCount: 2 }, member: { login: 'mut-may', permission: 4, organizationMemberId: mayId }, userErrors: [] });
    expect((await ok(add, { team: teamId, user: mayId })).teamMemberAdd.userErrors).toEqual([{ message: 'User is already added to this team', code: 'BAD_REQUEST' }]);
    // May, an Admin of the team but a Viewer of the org, adds Ned by his user's id (she may see her own, not his: an id he gave her).
    const nedUser = (await ok('{ viewer { id } }', {}, NED)).viewer.id;
    expect((await ok(add, { team: teamId, user: nedUser }, MAY)).teamMemberAdd.member).toEqual({ login: 'mut-ned', permission: 0, organizationMemberId: nedId });
    // Ned, a mere member, may not change the team: refused as a whole, as REST's 403.
    const update = `mutation($id: ID!, $name: String!) { teamUpdate(id: $id, input: { name: $name }) { ${TEAM} } }`;
    expect(await refused(update, { id: teamId, name: 'x' }, NED)).toBe('FORBIDDEN');
    expect((await ok(update, { id: teamId, name: 'mut-team-2' }, MAY)).teamUpdate.team).toMatchObject({ name: 'mut-team-2', email: '', memberCount: 3 });

    const setPermission = `mutation($team: ID!, $user: ID!, $permission: Int!) { teamMemberUpdate(teamId: $team, userId: $user, input: { permission: $permission }) {
      member { login permission } userErrors { message code } } }`;
    expect((await ok(setPermission, { team: teamId, user: nedId, permission: 4 })).teamMemberUpdate).toEqual({ member: { login: 'mut-ned', permission: 4 }, userErrors: [] });
    expect((await ok(setPermission, { team: teamId, user: nedId, permission: 2 })).teamMemberUpdate.userErrors).toEqual([{ message: 'bad request data', code: 'BAD_REQUEST' }]);

    const removeMember = `mutation($team: ID!, $user: ID!) { teamMemberRemove(teamId: $team, userId: $user) { ${TEAM} } }`;
    expect((await ok(removeMember, { team: teamId, user: nedId })).teamMemberRemove.team.members.map((m: { login: string }) => m.login)).toEqual(['admin', 'mut-may']);
    expect((await ok(removeMember, { team: teamId, user: nedId })).teamMemberRemove.userErrors).toEqual([{ message: 'Team member not found', code: 'NOT_FOUND' }]);

    const set = `mutation($team: ID!, $members: [String!], $admins: [String!]) { teamMembersSet(teamId: $team, input: { members: $members, admins: $admins }) { ${TEAM} } }`;
    expect((await ok(set, { team: teamId, members: ['mut-ned'], admins: ['admin'] })).teamMembersSet.team.members.map((m: { login: string; permission: number }) => [m.login, m.permission]))
      .toEqual([['admin', 4], ['mut-ned', 0]]);
    expect((await ok(set, { team: teamId, members: ['nobody'] })).teamMembersSet.userErrors).toEqual([{ message: 'user not found', code: 'NOT_FOUND' }]);

    const remove = 'mutation($id: ID!) { teamDelete(id: $id) { deletedTeamId userErrors { message code } } }';
    expect((await ok(remove, { id: teamId })).teamDelete).toEqual({ deletedTeamId: teamId, userErrors: [] });
    expect(await nodeOf(teamId, 'id')).toBeNull();
    expect((await ok(remove, { id: teamId })).teamDelete.userErrors).toEqual([{ message: 'Failed to delete Team. ID not found', code: 'NOT_FOUND' }]);
  });
});

describe('subscriptions', () => {
  it('carry the nodes the mutations change, and the global id of those removed', async () => {
    const stream = await subscribe(server, 'subscription { orgMembersChanged { kind nodeId member { id role } } }');
    try {
      expect(stream.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await call(server, 'POST', '/api/admin/users', { body: { login: 'mut-sub', password: 'sub-secret' } });
      const added = (await stream.next(5000)).data.data.orgMembersChanged;
      expect(added).toEqual({ kind: 'ADDED', nodeId: added.member.id, member: { id: expect.any(String), role: 'Viewer' } });
      const changed = (await ok('mutation($id: ID!) { organizationMemberUpdate(id: $id, input: { role: "Editor" }) { member { id role } } }', { id: added.nodeId })).organizationMemberUpdate;
      expect((await stream.next(5000)).data.data.orgMembersChanged).toEqual({ kind: 'UPDATED', nodeId: changed.member.id, member: changed.member });
      const removed = (await ok('mutation($id: ID!) { organizationMemberRemove(id: $id) { deletedMemberId } }', { id: added.nodeId })).organizationMemberRemove;
      expect((await stream.next(5000)).data.data.orgMembersChanged).toEqual({ kind: 'REMOVED', nodeId: removed.deletedMemberId, member: null });
    } finally {
      stream.close();
    }
  });

  it('carry a changed data source as the node the graph reads, keyed by the same global id', async () => {
    const stream = await subscribe(server, 'subscription { dataSourceChanged { kind dataSourceId dataSource { id databaseId name url } } }');
    try {
      expect(stream.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const created = (await call(server, 'POST', '/api/datasources', { body: { name: 'mut-sub-ds', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9' } })).body;
      const event = (await stream.next(5000)).data.data.dataSourceChanged;
      const read = (await ok('{ viewer { currentOrganization { dataSource(name: "mut-sub-ds") { id databaseId name url } } } }')).viewer.currentOrganization.dataSource;
      expect(read).toEqual({ id: expect.any(String), databaseId: created.id, name: 'mut-sub-ds', url: 'http://127.0.0.1:9' });
      expect(event).toEqual({ kind: 'CREATED', dataSourceId: read.id, dataSource: read });
    } finally {
      stream.close();
    }
  });
});
