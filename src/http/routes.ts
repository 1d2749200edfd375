/**
 * THE route table: every endpoint the server answers, one row each, with who may call it, as the
 * original server's `pkg/api/api.go` writes it. The front door (src/http/front-door.ts) matches a row,
 * authenticates, authorizes from the row and dispatches; nothing else decides access.
 *
 * A REST row carries the GraphQL operation it runs, checked at start-up and compiled once: its path parameters
 * become the operation's variables of the same name (`Int` ones parsed, 400 "id is invalid"
 * otherwise), its JSON body becomes `$input` (`body: 'input'`) or is spread over the other
 * variables (`body: 'variables'`), the query-string parameters it reads (`query`) become the
 * variables they name, and the REST answer is the value of the single root field. The
 * field order of the selection is the order of the original server's JSON. Where to look next:
 * the root field's resolver (src/graphql/schema/<type>.ts), then its service (src/services/).
 */
import {
  anonymous, orgMember, orgRole, orgRoleOrServerAdmin, perField, serverAdmin, serverAdminFor, signedIn, signedInUser, type Access,
} from '../auth/access.ts';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS';

/** Endpoints served by their own handler rather than a GraphQL operation. */
export type Endpoint = 'health' | 'metrics' | 'openapi' | 'graphql' | 'proxy' | 'ds-query' | 'ds-resource' | 'not-found';

interface RouteBase {
  /** `ANY` matches every method. */
  method: Method | 'ANY';
  /** `:name` is one segment; a final `*` is the rest of the path (none or more segments). */
  path: string;
  access: Access;
}

export interface RestRoute extends RouteBase {
  kind: 'rest';
  /** One GraphQL operation (fragments from `FRAGMENTS` may be spread). */
  document: string;
  body?: 'input' | 'variables';
  /** Success status when it is not 200. */
  status?: number;
  /**
   * Query-string parameters read into variables (parameter -> variable), leniently as the
   * original's `c.QueryInt` / `c.QueryBool` read them: a value that does not parse is left out.
   */
  query?: Readonly<Record<string, string>>;
  /** For a route whose status depends on its result: the REST answer made of the operation's value. */
  answer?: ResultAnswer;
}

export interface ResultAnswer {
  /** The status answered for a result that is not a success (documented in OpenAPI), if any. */
  otherStatus?: number;
  shape(value: unknown): { status: number; body: unknown };
}

export interface EndpointRoute extends RouteBase {
  kind: 'endpoint';
  endpoint: Endpoint;
}

export type Route = RestRoute | EndpointRoute;

const rest = (method: Method, path: string, access: Access, document: string, options: Pick<RestRoute, 'body' | 'status' | 'query' | 'answer'> = {}): RestRoute =>
  ({ kind: 'rest', method, path, access, document, ...options });
const endpoint = (method: Method | 'ANY', path: string, access: Access, name: Endpoint): EndpointRoute =>
  ({ kind: 'endpoint', method, path, access, endpoint: name });

/** Fragments the REST documents share; their field order is the original server's. */
export const FRAGMENTS = `
fragment DataSourceFull on DataSource {
  id uid orgId name type typeLogoUrl access url password user database basicAuth basicAuthUser
  basicAuthPassword withCredentials isDefault jsonData secureJsonFields version readOnly
}
fragment DataSourceListItem on DataSource {
  id uid orgId name type typeName typeLogoUrl access url user database basicAuth isDefault jsonData readOnly
}
fragment ServiceAccountFields on ServiceAccount { id name login orgId isDisabled role tokens }
fragment UserProfileFields on UserProfile {
  id uid email name login theme orgId isGrafanaAdmin: isServiceAdmin isDisabled isExternal isExternallySynced
  isGrafanaAdminExternallySynced authLabels updatedAt createdAt avatarUrl
}
fragment UserSearchHitFields on UserSearchHit {
  id uid name login email avatarUrl isAdmin: isServiceAdmin isDisabled lastSeenAt lastSeenAtAge authLabels
}
fragment TeamFields on Team { id uid orgId name email avatarUrl memberCount permission }
fragment TeamMemberFields on TeamMember { orgId teamId teamUID userId userUID auth_module email name login avatarUrl labels permission }
fragment DataSourcePermissionFields on DataSourcePermission {
  id roleName isManaged isInherited isServiceAccount userId userLogin userAvatarUrl teamId teamAvatarUrl team builtInRole actions permission
}
fragment PreferencesFields on Preferences { homeDashboardUID timezone weekStart theme language queryHistory { homeTab } navbar { bookmarkUrls } }
fragment OrgDetails on Organization { id name address { address1 address2 city zipCode state country } }
fragment OrgMemberFields on OrganizationMember {
  orgId userId uid email name avatarUrl login role lastSeenAt created lastSeenAtAge isDisabled authLabels
  isExternallySynced isProvisioned
}
`;

/**
 * A health check answers 200 when its status is OK and 400 otherwise, with the same body; a Go map
 * in the original, so its keys are sorted, and `details` appears only when the check reports some.
 */
const healthAnswer: ResultAnswer = {
  otherStatus: 400,
  shape(value) {
    const { details, message, status } = value as { details: unknown; message: string; status: string };
    return { status: status === 'OK' ? 200 : 400, body: details === null || details === undefined ? { message, status } : { details, message, status } };
  },
};

/** Go's `omitempty`: what is not set (null) is left out of the answer, at every depth. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value) || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
}

/** Preferences answer only what is set: `{}` when nothing is, as the original's. */
const preferencesAnswer: ResultAnswer = { shape: (value) => ({ status: 200, body: withoutNulls(value) }) };

const dsRead = orgMember('datasources:read');
const dsQuery = orgMember('datasources:query');
// Every member passes these gates; each data source's own permissions decide in the service (Edit).
const dsWrite = orgMember('datasources:write');
const dsDelete = orgMember('datasources:delete');
const dsPermissionsRead = orgMember('datasources.permissions:read');
const dsPermissionsWrite = orgMember('datasources.permissions:write');
// Teams: every member passes the gate; org Admins, team Admins and members are told apart by the service.
const teamsRead = orgMember('teams:read');
const teamMembersWrite = orgMember('teams.permissions:write');
const saRead = orgRole('Admin', 'serviceaccounts:read');
const saWrite = orgRole('Admin', 'serviceaccounts:write');
const usersRead = serverAdminFor('users:read');
const orgsRead = serverAdminFor('orgs:read');
/** Rows on an org named by id: the role held in that org is checked by the resolver (it depends on the data). */
const orgById = signedIn;
const orgUsersRead = orgRoleOrServerAdmin('Admin', 'org.users:read');
/** The original's paging parameters, read by the resolvers. */
const paged = { query: { query: 'query', page: 'page', perpage: 'perPage' } };

export const ROUTES: readonly Route[] = [
  // The server itself: health for load balancers, metrics for Prometheus, this API's description
  endpoint('GET', '/api/health', anonymous, 'health'),
  endpoint('HEAD', '/api/health', anonymous, 'health'),
  endpoint('GET', '/metrics', anonymous, 'metrics'),
  endpoint('GET', '/api/openapi.json', anonymous, 'openapi'),
  endpoint('ANY', '/graphql', perField, 'graphql'),

  // Data sources (spec 4.2, plus the uid forms of the original server). Create and update answers
  // are Go maps in the original, so their keys are sorted.
  rest('GET', '/api/datasources', dsRead, `query ListDataSources { dataSources { ...DataSourceListItem } }`),
  rest('POST', '/api/datasources', orgRole('Admin', 'datasources:create'), `mutation AddDataSource($input: CreateDataSourceInput!) {
    createDataSource(input: $input) { datasource { ...DataSourceFull } id message name } }`, { body: 'input' }),
  rest('GET', '/api/datasources/:id', dsRead, `query GetDataSourceById($id: Int!) { dataSource(id: $id) { ...DataSourceFull } }`),
  rest('PUT', '/api/datasources/:id', dsWrite, `mutation UpdateDataSourceById($id: Int!, $input: UpdateDataSourceInput!) {
    updateDataSource(id: $id, input: $input) { datasource { ...DataSourceFull } id message name } }`, { body: 'input' }),
  rest('DELETE', '/api/datasources/:id', dsDelete, `mutation DeleteDataSourceById($id: Int!) { deleteDataSource(id: $id) { message } }`),
  rest('GET', '/api/datasources/uid/:uid', dsRead, `query GetDataSourceByUid($uid: String!) { dataSourceByUid(uid: $uid) { ...DataSourceFull } }`),
  rest('PUT', '/api/datasources/uid/:uid', dsWrite, `mutation UpdateDataSourceByUid($uid: String!, $input: UpdateDataSourceInput!) {
    updateDataSourceByUid(uid: $uid, input: $input) { datasource { ...DataSourceFull } id message name } }`, { body: 'input' }),
  rest('DELETE', '/api/datasources/uid/:uid', dsDelete, `mutation DeleteDataSourceByUid($uid: String!) { deleteDataSourceByUid(uid: $uid) { id message } }`),
  rest('GET', '/api/datasources/name/:name', dsRead, `query GetDataSourceByName($name: String!) { dataSourceByName(name: $name) { ...DataSourceFull } }`),
  rest('DELETE', '/api/datasources/name/:name', dsDelete, `mutation DeleteDataSourceByName($name: String!) { deleteDataSourceByName(name: $name) { id message } }`),
  rest('GET', '/api/datasources/id/:name', orgRole('Viewer', 'datasources:id:read'), `query GetDataSourceIdByName($name: String!) { dataSourceIdByName(name: $name) { id } }`),
  // Each kind's own check, sent through the proxy's connections (the original registers ANY).
  rest('GET', '/api/datasources/uid/:uid/health', dsQuery, `query CheckDataSourceHealthByUid($uid: String!) {
    dataSourceHealthByUid(uid: $uid) { details message status } }`, { answer: healthAnswer }),
  rest('GET', '/api/datasources/:id/health', dsQuery, `query CheckDataSourceHealthById($id: Int!) {
    dataSourceHealth(id: $id) { details message status } }`, { answer: healthAnswer }),
  // Queries (the original's "Query a data source"). Not a GraphQL document like the REST rows: the
  // answer is the SDK's frame JSON, written straight from the frames by the query service that
  // the graph's query fields also call (no GraphQL result tree of every value in between).
  endpoint('POST', '/api/ds/query', dsQuery, 'ds-query'),
  // Data source resources: any method, the rest of the path to the data source's kind.
  endpoint('ANY', '/api/datasources/uid/:uid/resources/*', dsQuery, 'ds-resource'),
  endpoint('ANY', '/api/datasources/:id/resources/*', dsQuery, 'ds-resource'),
  // The data source proxy: any method, the rest of the path and the query go to the data source.
  endpoint('ANY', '/api/datasources/proxy/uid/:uid/*', orgMember('datasources:query'), 'proxy'),
  endpoint('ANY', '/api/datasources/proxy/:id/*', orgMember('datasources:query'), 'proxy'),

  // Who may query, edit or administer each data source (the original's access-control routes)
  rest('GET', '/api/access-control/datasources/description', dsPermissionsRead, `query GetDataSourcePermissionsDescription {
    dataSourcePermissionsDescription { assignments permissions } }`),
  rest('GET', '/api/access-control/datasources/:uid', dsPermissionsRead, `query GetDataSourcePermissions($uid: String!) {
    dataSourcePermissions(uid: $uid) { ...DataSourcePermissionFields } }`),
  rest('POST', '/api/access-control/datasources/:uid', dsPermissionsWrite, `mutation SetDataSourcePermissions($uid: String!, $permissions: [DataSourcePermissionInput!]) {
    setDataSourcePermissions(uid: $uid, permissions: $permissions) { message } }`, { body: 'variables' }),
  rest('POST', '/api/access-control/datasources/:uid/users/:userId', dsPermissionsWrite, `mutation SetDataSourceUserPermission($uid: String!, $userId: Int!, $permission: String) {
    setDataSourceUserPermission(uid: $uid, userId: $userId, permission: $permission) { message } }`, { body: 'variables' }),
  rest('POST', '/api/access-control/datasources/:uid/teams/:teamId', dsPermissionsWrite, `mutation SetDataSourceTeamPermission($uid: String!, $teamId: Int!, $permission: String) {
    setDataSourceTeamPermission(uid: $uid, teamId: $teamId, permission: $permission) { message } }`, { body: 'variables' }),
  rest('POST', '/api/access-control/datasources/:uid/builtInRoles/:builtInRole', dsPermissionsWrite, `mutation SetDataSourceBuiltInRolePermission($uid: String!, $builtInRole: String!, $permission: String) {
    setDataSourceBuiltInRolePermission(uid: $uid, builtInRole: $builtInRole, permission: $permission) { message } }`, { body: 'variables' }),

  // Teams of the org the request acts in. The create answer is a Go map: keys sorted.
  rest('GET', '/api/teams/search', teamsRead, `query SearchTeams($query: String, $name: String, $page: Int, $perPage: Int) {
    teamSearch(query: $query, name: $name, page: $page, perPage: $perPage) { totalCount teams { ...TeamFields } page perPage } }`,
  { query: { query: 'query', name: 'name', page: 'page', perpage: 'perPage' } }),
  rest('POST', '/api/teams', orgRole('Admin', 'teams:create'), `mutation CreateTeam($name: String, $email: String) {
    createTeam(name: $name, email: $email) { message teamId uid } }`, { body: 'variables' }),
  rest('GET', '/api/teams/:teamId', teamsRead, `query GetTeamById($teamId: Int!) { team(teamId: $teamId) { ...TeamFields } }`),
  rest('PUT', '/api/teams/:teamId', orgMember('teams:write'), `mutation UpdateTeam($teamId: Int!, $name: String, $email: String) {
    updateTeam(teamId: $teamId, name: $name, email: $email) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/teams/:teamId', orgMember('teams:delete'), `mutation DeleteTeamById($teamId: Int!) { deleteTeam(teamId: $teamId) { message } }`),
  rest('GET', '/api/teams/:teamId/members', orgMember('teams.permissions:read'), `query GetTeamMembers($teamId: Int!) {
    teamMembers(teamId: $teamId) { ...TeamMemberFields } }`),
  rest('POST', '/api/teams/:teamId/members', teamMembersWrite, `mutation AddTeamMember($teamId: Int!, $userId: Int) {
    addTeamMember(teamId: $teamId, userId: $userId) { message } }`, { body: 'variables' }),
  rest('PUT', '/api/teams/:teamId/members', teamMembersWrite, `mutation SetTeamMemberships($teamId: Int!, $members: [String!], $admins: [String!]) {
    setTeamMemberships(teamId: $teamId, members: $members, admins: $admins) { message } }`, { body: 'variables' }),
  rest('PUT', '/api/teams/:teamId/members/:userId', teamMembersWrite, `mutation UpdateTeamMember($teamId: Int!, $userId: Int!, $permission: Int) {
    updateTeamMember(teamId: $teamId, userId: $userId, permission: $permission) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/teams/:teamId/members/:userId', teamMembersWrite, `mutation RemoveTeamMember($teamId: Int!, $userId: Int!) {
    removeTeamMember(teamId: $teamId, userId: $userId) { message } }`),
  // The original looks no team up here: an org Admin gets `{}` (and "Preferences updated") for any id.
  rest('GET', '/api/teams/:teamId/preferences', teamsRead, `query GetTeamPreferences($teamId: Int!) {
    teamPreferences(teamId: $teamId) { ...PreferencesFields } }`, { answer: preferencesAnswer }),
  rest('PUT', '/api/teams/:teamId/preferences', orgMember('teams:write'), `mutation UpdateTeamPreferences($teamId: Int!, $input: PreferencesInput!) {
    updateTeamPreferences(teamId: $teamId, input: $input) { message } }`, { body: 'input' }),

  // What front ends and client libraries start from (grafana-client reads buildInfo.version)
  rest('GET', '/api/frontend/settings', signedIn, `query GetFrontendSettings {
    frontendSettings {
      defaultDatasource datasources minRefreshInterval appUrl appSubUrl allowOrgCreate authProxyEnabled ldapEnabled
      autoAssignOrg verifyEmailEnabled rbacEnabled disableLoginForm disableUserSignUp
      buildInfo { hideVersion version versionString commit commitShort buildstamp edition latestVersion hasUpdate env }
      licenseInfo { expiry stateInfo licenseUrl edition enabledFeatures }
      featureToggles anonymousEnabled
    } }`),

  // Server administration (spec 4.1): Basic authentication of a server admin only
  rest('GET', '/api/admin/settings', serverAdmin, `query AdminGetSettings { adminSettings }`),
  rest('GET', '/api/admin/stats', serverAdmin, `query AdminGetStats {
    adminStats {
      user_count: userCount org_count: orgCount dashboard_count: dashboardCount db_snapshot_count: dbSnapshotCount
      db_tag_count: dbTagCount data_source_count: dataSourceCount playlist_count: playlistCount
      starred_db_count: starredDbCount service_admin_count: serviceAdminCount
      orgs: orgCount dashboards: dashboardCount snapshots: dbSnapshotCount tags: dbTagCount datasources: dataSourceCount
      playlists: playlistCount stars: starCount alerts: alertCount users: userCount admins: adminCount editors: editorCount
      viewers: viewerCount activeUsers activeAdmins activeEditors activeViewers activeSessions dailyActiveUsers
      dailyActiveAdmins dailyActiveEditors dailyActiveViewers dailyActiveSessions monthlyActiveUsers activeDevices
    } }`),
  rest('POST', '/api/admin/users', serverAdmin, `mutation AdminCreateUser($input: AdminCreateUserInput!) {
    adminCreateUser(input: $input) { id message } }`, { body: 'input' }),
  rest('PUT', '/api/admin/users/:id/password', serverAdmin, `mutation AdminUpdateUserPassword($id: Int!, $password: String!) {
    adminUpdateUserPassword(id: $id, password: $password) { message } }`, { body: 'variables' }),
  rest('PUT', '/api/admin/users/:id/permissions', serverAdmin, `mutation AdminUpdateUserPermissions($id: Int!, $isServiceAdmin: Boolean, $isGrafanaAdmin: Boolean) {
    adminUpdateUserPermissions(id: $id, isServiceAdmin: $isServiceAdmin, isGrafanaAdmin: $isGrafanaAdmin) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/admin/users/:id', serverAdmin, `mutation AdminDeleteUser($id: Int!) { adminDeleteUser(id: $id) { message } }`),
  rest('POST', '/api/admin/pause-all-alerts', serverAdmin, `mutation PauseAllAlerts($paused: Boolean) {
    pauseAllAlerts(paused: $paused) { state message alertsAffected } }`, { body: 'variables' }),
  rest('POST', '/api/admin/provisioning/datasources/reload', serverAdmin, `mutation ReloadDataSourceProvisioning {
    reloadDataSourceProvisioning { message } }`),

  // Legacy API keys
  rest('GET', '/api/auth/keys', orgRole('Admin', 'apikeys:read'), `query ListApiKeys { apiKeys { id name role expiration } }`),
  rest('POST', '/api/auth/keys', orgRole('Admin', 'apikeys:create'), `mutation CreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) { id name key } }`, { body: 'input' }),
  rest('DELETE', '/api/auth/keys/:id', orgRole('Admin', 'apikeys:delete'), `mutation DeleteApiKey($id: Int!) { deleteApiKey(id: $id) { message } }`),

  // Service accounts and their tokens
  rest('POST', '/api/serviceaccounts', orgRole('Admin', 'serviceaccounts:create'), `mutation CreateServiceAccount($input: CreateServiceAccountInput!) {
    createServiceAccount(input: $input) { ...ServiceAccountFields } }`, { body: 'input', status: 201 }),
  rest('GET', '/api/serviceaccounts/search', saRead, `query SearchServiceAccounts($query: String, $page: Int, $perPage: Int, $disabled: Boolean, $expiredTokens: Boolean) {
    serviceAccountSearch(query: $query, page: $page, perPage: $perPage, disabled: $disabled, expiredTokens: $expiredTokens) {
      totalCount serviceAccounts { ...ServiceAccountFields } page perPage } }`,
  { query: { query: 'query', page: 'page', perpage: 'perPage', disabled: 'disabled', expiredTokens: 'expiredTokens' } }),
  rest('GET', '/api/serviceaccounts/:id', saRead, `query GetServiceAccount($id: Int!) { serviceAccount(id: $id) { ...ServiceAccountFields } }`),
  // A Go map in the original: keys sorted.
  rest('PATCH', '/api/serviceaccounts/:id', saWrite, `mutation UpdateServiceAccount($id: Int!, $input: UpdateServiceAccountInput!) {
    updateServiceAccount(id: $id, input: $input) {
      id message name serviceaccount { id name login orgId isDisabled createdAt updatedAt role teams } } }`, { body: 'input' }),
  rest('DELETE', '/api/serviceaccounts/:id', orgRole('Admin', 'serviceaccounts:delete'), `mutation DeleteServiceAccount($id: Int!) {
    deleteServiceAccount(id: $id) { message } }`),
  rest('GET', '/api/serviceaccounts/:serviceAccountId/tokens', saRead, `query ListServiceAccountTokens($serviceAccountId: Int!) {
    serviceAccountTokens(serviceAccountId: $serviceAccountId) {
      id name created lastUsedAt expiration secondsUntilExpiration hasExpired isRevoked } }`),
  rest('POST', '/api/serviceaccounts/:serviceAccountId/tokens', saWrite, `mutation CreateServiceAccountToken($serviceAccountId: Int!, $input: CreateServiceAccountTokenInput!) {
    createServiceAccountToken(serviceAccountId: $serviceAccountId, input: $input) { id name key } }`, { body: 'input' }),
  rest('DELETE', '/api/serviceaccounts/:serviceAccountId/tokens/:tokenId', saWrite, `mutation DeleteServiceAccountToken($serviceAccountId: Int!, $tokenId: Int!) {
    deleteServiceAccountToken(serviceAccountId: $serviceAccountId, tokenId: $tokenId) { message } }`),

  // Users: server admins; the signed-in user's own routes (users only: tokens act for an org)
  rest('GET', '/api/users', usersRead, `query SearchUsers($query: String, $page: Int, $perPage: Int) {
    users(query: $query, page: $page, perPage: $perPage) { ...UserSearchHitFields } }`, paged),
  rest('GET', '/api/users/search', usersRead, `query SearchUsersWithPaging($query: String, $page: Int, $perPage: Int) {
    userSearch(query: $query, page: $page, perPage: $perPage) { totalCount users { ...UserSearchHitFields } page perPage } }`, paged),
  rest('GET', '/api/users/lookup', usersRead, `query GetUserByLoginOrEmail($loginOrEmail: String) {
    userByLoginOrEmail(loginOrEmail: $loginOrEmail) { ...UserProfileFields } }`, { query: { loginOrEmail: 'loginOrEmail' } }),
  rest('GET', '/api/users/:id', usersRead, `query GetUserById($id: Int!) { user(id: $id) { ...UserProfileFields } }`),
  rest('PUT', '/api/users/:id', serverAdminFor('users:write'), `mutation UpdateUser($id: Int!, $input: UpdateUserInput!) {
    updateUser(id: $id, input: $input) { message } }`, { body: 'input' }),
  rest('GET', '/api/users/:id/orgs', usersRead, `query GetUserOrgList($id: Int!) { userOrganizations(id: $id) { orgId name role } }`),
  // The user's teams in the org the request acts in, as the original lists them.
  rest('GET', '/api/users/:id/teams', usersRead, `query GetUserTeams($id: Int!) { userTeams(id: $id) { ...TeamFields } }`),
  rest('POST', '/api/users/:id/using/:orgId', serverAdminFor('users:write'), `mutation UpdateUserActiveOrg($id: Int!, $orgId: Int!) {
    switchUserOrganization(id: $id, orgId: $orgId) { message } }`),
  rest('GET', '/api/user', signedInUser, `query GetSignedInUser { viewerProfile { ...UserProfileFields } }`),
  rest('PUT', '/api/user', signedInUser, `mutation UpdateSignedInUser($input: UpdateUserInput!) { updateViewer(input: $input) { message } }`, { body: 'input' }),
  rest('PUT', '/api/user/password', signedInUser, `mutation ChangeUserPassword($oldPassword: String, $newPassword: String, $confirmNew: String) {
    changeViewerPassword(oldPassword: $oldPassword, newPassword: $newPassword, confirmNew: $confirmNew) { message } }`, { body: 'variables' }),
  rest('GET', '/api/user/teams', signedInUser, `query GetSignedInUserTeamList { viewerTeams { ...TeamFields } }`),
  rest('GET', '/api/user/orgs', signedInUser, `query GetSignedInUserOrgList { viewerOrganizations { orgId name role } }`),
  rest('POST', '/api/user/using/:id', signedInUser, `mutation UserSetUsingOrg($id: Int!) { switchViewerOrganization(orgId: $id) { message } }`),
  // Preferences of the caller (a user or a service account) in the org the request acts in.
  rest('GET', '/api/user/preferences', signedIn, `query GetUserPreferences { viewerPreferences { ...PreferencesFields } }`, { answer: preferencesAnswer }),
  rest('PUT', '/api/user/preferences', signedIn, `mutation UpdateUserPreferences($input: PreferencesInput!) {
    updateViewerPreferences(input: $input) { message } }`, { body: 'input' }),
  rest('PATCH', '/api/user/preferences', signedIn, `mutation PatchUserPreferences($input: PreferencesInput!) {
    patchViewerPreferences(input: $input) { message } }`, { body: 'input' }),
  rest('POST', '/api/admin/users/:id/disable', serverAdmin, `mutation AdminDisableUser($id: Int!) { adminDisableUser(id: $id) { message } }`),
  rest('POST', '/api/admin/users/:id/enable', serverAdmin, `mutation AdminEnableUser($id: Int!) { adminEnableUser(id: $id) { message } }`),

  // Orgs: server admins; routes on an org by id admit any caller and check the role held in that
  // org (it depends on the data). Create and member-add answers are Go maps: keys sorted.
  // Server admins, or any signed-in user with [users] allow_org_create (the resolver reads the setting)
  rest('POST', '/api/orgs', signedIn, `mutation CreateOrg($name: String) { createOrganization(name: $name) { message orgId } }`, { body: 'variables' }),
  rest('GET', '/api/orgs', orgsRead, `query SearchOrgs($query: String, $name: String, $page: Int, $perPage: Int) {
    organizations(query: $query, name: $name, page: $page, perPage: $perPage) { id name } }`, { query: { query: 'query', name: 'name', page: 'page', perpage: 'perPage' } }),
  rest('GET', '/api/orgs/name/:name', orgsRead, `query GetOrgByName($name: String!) { organizationByName(name: $name) { ...OrgDetails } }`),
  rest('GET', '/api/orgs/:orgId', orgById, `query GetOrgById($orgId: Int!) { organization(id: $orgId) { ...OrgDetails } }`),
  rest('PUT', '/api/orgs/:orgId', orgById, `mutation UpdateOrg($orgId: Int!, $name: String) {
    updateOrganization(id: $orgId, name: $name) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/orgs/:orgId', serverAdminFor('orgs:delete'), `mutation DeleteOrgById($orgId: Int!) { deleteOrganization(id: $orgId) { message } }`),
  rest('GET', '/api/orgs/:orgId/users', orgById, `query GetOrgUsers($orgId: Int!) { organizationMembers(orgId: $orgId) { ...OrgMemberFields } }`),
  rest('POST', '/api/orgs/:orgId/users', orgById, `mutation AddOrgUser($orgId: Int!, $loginOrEmail: String, $role: String) {
    addOrganizationMember(orgId: $orgId, loginOrEmail: $loginOrEmail, role: $role) { message userId } }`, { body: 'variables' }),
  rest('PATCH', '/api/orgs/:orgId/users/:userId', orgById, `mutation UpdateOrgUser($orgId: Int!, $userId: Int!, $role: String) {
    updateOrganizationMember(orgId: $orgId, userId: $userId, role: $role) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/orgs/:orgId/users/:userId', orgById, `mutation RemoveOrgUser($orgId: Int!, $userId: Int!) {
    removeOrganizationMember(orgId: $orgId, userId: $userId) { message } }`),

  // The org the request acts in (X-Grafana-Org-Id, or the user's current org)
  rest('GET', '/api/org', orgRoleOrServerAdmin('Viewer', 'orgs:read'), `query GetCurrentOrg { currentOrganization { ...OrgDetails } }`),
  rest('PUT', '/api/org', orgRoleOrServerAdmin('Admin', 'orgs:write'), `mutation UpdateCurrentOrg($name: String) { updateCurrentOrganization(name: $name) { message } }`, { body: 'variables' }),
  rest('GET', '/api/org/users', orgUsersRead, `query GetOrgUsersForCurrentOrg($query: String, $limit: Int) {
    currentOrganizationMembers(query: $query, limit: $limit) { ...OrgMemberFields } }`, { query: { query: 'query', limit: 'limit' } }),
  rest('POST', '/api/org/users', orgRoleOrServerAdmin('Admin', 'org.users:add'), `mutation AddOrgUserToCurrentOrg($loginOrEmail: String, $role: String) {
    addCurrentOrganizationMember(loginOrEmail: $loginOrEmail, role: $role) { message userId } }`, { body: 'variables' }),
  rest('GET', '/api/org/users/lookup', orgUsersRead, `query GetOrgUsersForCurrentOrgLookup($query: String, $limit: Int) {
    currentOrganizationMembers(query: $query, limit: $limit) { userId login avatarUrl } }`, { query: { query: 'query', limit: 'limit' } }),
  rest('PATCH', '/api/org/users/:userId', orgRoleOrServerAdmin('Admin', 'org.users:write'), `mutation UpdateOrgUserForCurrentOrg($userId: Int!, $role: String) {
    updateCurrentOrganizationMember(userId: $userId, role: $role) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/org/users/:userId', orgRoleOrServerAdmin('Admin', 'org.users:remove'), `mutation RemoveOrgUserForCurrentOrg($userId: Int!) {
    removeCurrentOrganizationMember(userId: $userId) { message } }`),
  rest('GET', '/api/org/preferences', orgRole('Admin', 'orgs.preferences:read'), `query GetOrgPreferences {
    currentOrganizationPreferences { ...PreferencesFields } }`, { answer: preferencesAnswer }),
  rest('PUT', '/api/org/preferences', orgRole('Admin', 'orgs.preferences:write'), `mutation UpdateOrgPreferences($input: PreferencesInput!) {
    updateCurrentOrganizationPreferences(input: $input) { message } }`, { body: 'input' }),
  rest('PATCH', '/api/org/preferences', orgRole('Admin', 'orgs.preferences:write'), `mutation PatchOrgPreferences($input: PreferencesInput!) {
    patchCurrentOrganizationPreferences(input: $input) { message } }`, { body: 'input' }),

  // Anything else under /api is unknown to signed-in callers (as the original, credentials come first)
  endpoint('ANY', '/api/*', signedIn, 'not-found'),
];
