/**
 * THE route table: every endpoint the server answers, one row each, with who may call it, as the
 * original server's `pkg/api/api.go` writes it. The front door (src/http/server.ts) matches a row,
 * authenticates, authorizes from the row and dispatches; nothing else decides access.
 *
 * A REST row is a document over the graph, checked at start-up and compiled once: its path
 * parameters become the operation's variables of the same name (`Int` ones parsed, 400 "id is
 * invalid" otherwise; `ids` ones made the global ids the graph takes), its JSON body becomes
 * `$input` (`body: 'input'`) or is spread over the other variables (`body: 'variables'`), the
 * query-string parameters it reads (`query`) become the variables they name, and the REST answer
 * is made of the value at `at` (the single root field's by default), shaped by the row where the
 * wire has what the graph has not (`shape`: envelopes, legacy constant fields, Go maps' sorted
 * keys). Who may call it is read from the graph's fields it runs (src/rest/access.ts), not written
 * here, but for a row's own `gate`. Where to look next: the fields' resolvers
 * (src/graphql/schema/<entity>), then their services (src/services/).
 */
import { anonymous, orgMember, perField, signedIn, type Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import { getSchema } from '../graphql/schema/index.ts';
import { checkRestOperations, type Missing, type RestOperation } from '../rest/executor.ts';
import type { VariableMapping } from '../rest/variables.ts';

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

export interface RestRoute extends RouteBase, VariableMapping {
  kind: 'rest';
  /** One GraphQL operation (fragments from `FRAGMENTS` may be spread). */
  document: string;
  /** Dotted response keys to the value the answer is made of; the single root field's by default. */
  at?: string;
  /** Success status when it is not 200. */
  status?: number;
  /**
   * Query-string parameters read into variables (parameter -> variable), leniently as the
   * original's `c.QueryInt` / `c.QueryBool` read them: a value that does not parse is left out.
   */
  query?: Readonly<Record<string, string>>;
  /** Variables made from the others (and the request) after the path, body and query are read. */
  variables?: (values: Record<string, unknown>, ctx: RequestContext) => Record<string, unknown>;
  /** What the row answers where the graph answers null on the way to `at` (404 by default). */
  missing?: Missing;
  /** The wire answer made of the value, where it is not the value as it is. */
  shape?: (value: unknown, variables: Record<string, unknown>) => unknown;
  /** For a route whose status depends on its result: the REST answer made of the operation's value. */
  result?: ResultAnswer;
  /** The door's rule where the original's route admits fewer callers than the graph's fields. */
  gate?: Access;
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

type RestOptions = Omit<RestRoute, 'kind' | 'method' | 'path' | 'access' | 'document'>;

/** A REST row; its `access` is its operation's, read when first asked for (the schema is built by then). */
const rest = (method: Method, path: string, document: string, options: RestOptions = {}): RestRoute => {
  const row = { kind: 'rest', method, path, document, ...options } as RestRoute;
  Object.defineProperty(row, 'access', { enumerable: true, get: () => restOperation(row).access });
  return row;
};
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

/** Every member passes these gates; each data source's own permissions decide in the service (Query). */
const dsQuery = orgMember('datasources:query');
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
  rest('GET', '/api/datasources', `query ListDataSources { dataSources { ...DataSourceListItem } }`),
  rest('POST', '/api/datasources', `mutation AddDataSource($input: CreateDataSourceInput!) {
    createDataSource(input: $input) { datasource { ...DataSourceFull } id message name } }`, { body: 'input' }),
  rest('GET', '/api/datasources/:id', `query GetDataSourceById($id: Int!) { dataSource(id: $id) { ...DataSourceFull } }`),
  rest('PUT', '/api/datasources/:id', `mutation UpdateDataSourceById($id: Int!, $input: UpdateDataSourceInput!) {
    updateDataSource(id: $id, input: $input) { datasource { ...DataSourceFull } id message name } }`, { body: 'input' }),
  rest('DELETE', '/api/datasources/:id', `mutation DeleteDataSourceById($id: Int!) { deleteDataSource(id: $id) { message } }`),
  rest('GET', '/api/datasources/uid/:uid', `query GetDataSourceByUid($uid: String!) { dataSourceByUid(uid: $uid) { ...DataSourceFull } }`),
  rest('PUT', '/api/datasources/uid/:uid', `mutation UpdateDataSourceByUid($uid: String!, $input: UpdateDataSourceInput!) {
    updateDataSourceByUid(uid: $uid, input: $input) { datasource { ...DataSourceFull } id message name } }`, { body: 'input' }),
  rest('DELETE', '/api/datasources/uid/:uid', `mutation DeleteDataSourceByUid($uid: String!) { deleteDataSourceByUid(uid: $uid) { id message } }`),
  rest('GET', '/api/datasources/name/:name', `query GetDataSourceByName($name: String!) { dataSourceByName(name: $name) { ...DataSourceFull } }`),
  rest('DELETE', '/api/datasources/name/:name', `mutation DeleteDataSourceByName($name: String!) { deleteDataSourceByName(name: $name) { id message } }`),
  rest('GET', '/api/datasources/id/:name', `query GetDataSourceIdByName($name: String!) { dataSourceIdByName(name: $name) { id } }`),
  // Each kind's own check, sent through the proxy's connections (the original registers ANY).
  rest('GET', '/api/datasources/uid/:uid/health', `query CheckDataSourceHealthByUid($uid: String!) {
    dataSourceHealthByUid(uid: $uid) { details message status } }`, { result: healthAnswer }),
  rest('GET', '/api/datasources/:id/health', `query CheckDataSourceHealthById($id: Int!) {
    dataSourceHealth(id: $id) { details message status } }`, { result: healthAnswer }),
  // Queries (the original's "Query a data source"). Not a GraphQL document like the REST rows: the
  // answer is the SDK's frame JSON, written straight from the frames by the query service that
  // the graph's query fields also call (no GraphQL result tree of every value in between).
  endpoint('POST', '/api/ds/query', dsQuery, 'ds-query'),
  // Data source resources: any method, the rest of the path to the data source's kind.
  endpoint('ANY', '/api/datasources/uid/:uid/resources/*', dsQuery, 'ds-resource'),
  endpoint('ANY', '/api/datasources/:id/resources/*', dsQuery, 'ds-resource'),
  // The data source proxy: any method, the rest of the path and the query go to the data source.
  endpoint('ANY', '/api/datasources/proxy/uid/:uid/*', dsQuery, 'proxy'),
  endpoint('ANY', '/api/datasources/proxy/:id/*', dsQuery, 'proxy'),

  // Who may query, edit or administer each data source (the original's access-control routes)
  rest('GET', '/api/access-control/datasources/description', `query GetDataSourcePermissionsDescription {
    dataSourcePermissionsDescription { assignments permissions } }`),
  rest('GET', '/api/access-control/datasources/:uid', `query GetDataSourcePermissions($uid: String!) {
    dataSourcePermissions(uid: $uid) { ...DataSourcePermissionFields } }`),
  rest('POST', '/api/access-control/datasources/:uid', `mutation SetDataSourcePermissions($uid: String!, $permissions: [DataSourcePermissionInput!]) {
    setDataSourcePermissions(uid: $uid, permissions: $permissions) { message } }`, { body: 'variables' }),
  rest('POST', '/api/access-control/datasources/:uid/users/:userId', `mutation SetDataSourceUserPermission($uid: String!, $userId: Int!, $permission: String) {
    setDataSourceUserPermission(uid: $uid, userId: $userId, permission: $permission) { message } }`, { body: 'variables' }),
  rest('POST', '/api/access-control/datasources/:uid/teams/:teamId', `mutation SetDataSourceTeamPermission($uid: String!, $teamId: Int!, $permission: String) {
    setDataSourceTeamPermission(uid: $uid, teamId: $teamId, permission: $permission) { message } }`, { body: 'variables' }),
  rest('POST', '/api/access-control/datasources/:uid/builtInRoles/:builtInRole', `mutation SetDataSourceBuiltInRolePermission($uid: String!, $builtInRole: String!, $permission: String) {
    setDataSourceBuiltInRolePermission(uid: $uid, builtInRole: $builtInRole, permission: $permission) { message } }`, { body: 'variables' }),

  // Teams of the org the request acts in. The create answer is a Go map: keys sorted.
  rest('GET', '/api/teams/search', `query SearchTeams($query: String, $name: String, $page: Int, $perPage: Int) {
    teamSearch(query: $query, name: $name, page: $page, perPage: $perPage) { totalCount teams { ...TeamFields } page perPage } }`,
  { query: { query: 'query', name: 'name', page: 'page', perpage: 'perPage' } }),
  rest('POST', '/api/teams', `mutation CreateTeam($name: String, $email: String) {
    createTeam(name: $name, email: $email) { message teamId uid } }`, { body: 'variables' }),
  rest('GET', '/api/teams/:teamId', `query GetTeamById($teamId: Int!) { team(teamId: $teamId) { ...TeamFields } }`),
  rest('PUT', '/api/teams/:teamId', `mutation UpdateTeam($teamId: Int!, $name: String, $email: String) {
    updateTeam(teamId: $teamId, name: $name, email: $email) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/teams/:teamId', `mutation DeleteTeamById($teamId: Int!) { deleteTeam(teamId: $teamId) { message } }`),
  rest('GET', '/api/teams/:teamId/members', `query GetTeamMembers($teamId: Int!) {
    teamMembers(teamId: $teamId) { ...TeamMemberFields } }`),
  rest('POST', '/api/teams/:teamId/members', `mutation AddTeamMember($teamId: Int!, $userId: Int) {
    addTeamMember(teamId: $teamId, userId: $userId) { message } }`, { body: 'variables' }),
  rest('PUT', '/api/teams/:teamId/members', `mutation SetTeamMemberships($teamId: Int!, $members: [String!], $admins: [String!]) {
    setTeamMemberships(teamId: $teamId, members: $members, admins: $admins) { message } }`, { body: 'variables' }),
  rest('PUT', '/api/teams/:teamId/members/:userId', `mutation UpdateTeamMember($teamId: Int!, $userId: Int!, $permission: Int) {
    updateTeamMember(teamId: $teamId, userId: $userId, permission: $permission) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/teams/:teamId/members/:userId', `mutation RemoveTeamMember($teamId: Int!, $userId: Int!) {
    removeTeamMember(teamId: $teamId, userId: $userId) { message } }`),
  // The original looks no team up here: an org Admin gets `{}` (and "Preferences updated") for any id.
  rest('GET', '/api/teams/:teamId/preferences', `query GetTeamPreferences($teamId: Int!) {
    teamPreferences(teamId: $teamId) { ...PreferencesFields } }`, { result: preferencesAnswer }),
  rest('PUT', '/api/teams/:teamId/preferences', `mutation UpdateTeamPreferences($teamId: Int!, $input: PreferencesInput!) {
    updateTeamPreferences(teamId: $teamId, input: $input) { message } }`, { body: 'input' }),

  // What front ends and client libraries start from (grafana-client reads buildInfo.version)
  rest('GET', '/api/frontend/settings', `query GetFrontendSettings {
    frontendSettings {
      defaultDatasource datasources minRefreshInterval appUrl appSubUrl allowOrgCreate authProxyEnabled ldapEnabled
      autoAssignOrg verifyEmailEnabled rbacEnabled disableLoginForm disableUserSignUp
      buildInfo { hideVersion version versionString commit commitShort buildstamp edition latestVersion hasUpdate env }
      licenseInfo { expiry stateInfo licenseUrl edition enabledFeatures }
      featureToggles anonymousEnabled
    } }`),

  // Server administration (spec 4.1): Basic authentication of a server admin only
  rest('GET', '/api/admin/settings', `query AdminGetSettings { adminSettings }`),
  rest('GET', '/api/admin/stats', `query AdminGetStats {
    adminStats {
      user_count: userCount org_count: orgCount dashboard_count: dashboardCount db_snapshot_count: dbSnapshotCount
      db_tag_count: dbTagCount data_source_count: dataSourceCount playlist_count: playlistCount
      starred_db_count: starredDbCount service_admin_count: serviceAdminCount
      orgs: orgCount dashboards: dashboardCount snapshots: dbSnapshotCount tags: dbTagCount datasources: dataSourceCount
      playlists: playlistCount stars: starCount alerts: alertCount users: userCount admins: adminCount editors: editorCount
      viewers: viewerCount activeUsers activeAdmins activeEditors activeViewers activeSessions dailyActiveUsers
      dailyActiveAdmins dailyActiveEditors dailyActiveViewers dailyActiveSessions monthlyActiveUsers activeDevices
    } }`),
  rest('POST', '/api/admin/users', `mutation AdminCreateUser($input: AdminCreateUserInput!) {
    adminCreateUser(input: $input) { id message } }`, { body: 'input' }),
  rest('PUT', '/api/admin/users/:id/password', `mutation AdminUpdateUserPassword($id: Int!, $password: String!) {
    adminUpdateUserPassword(id: $id, password: $password) { message } }`, { body: 'variables' }),
  rest('PUT', '/api/admin/users/:id/permissions', `mutation AdminUpdateUserPermissions($id: Int!, $isServiceAdmin: Boolean, $isGrafanaAdmin: Boolean) {
    adminUpdateUserPermissions(id: $id, isServiceAdmin: $isServiceAdmin, isGrafanaAdmin: $isGrafanaAdmin) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/admin/users/:id', `mutation AdminDeleteUser($id: Int!) { adminDeleteUser(id: $id) { message } }`),
  rest('POST', '/api/admin/pause-all-alerts', `mutation PauseAllAlerts($paused: Boolean) {
    pauseAllAlerts(paused: $paused) { state message alertsAffected } }`, { body: 'variables' }),
  rest('POST', '/api/admin/provisioning/datasources/reload', `mutation ReloadDataSourceProvisioning {
    reloadDataSourceProvisioning { message } }`),

  // Legacy API keys
  rest('GET', '/api/auth/keys', `query ListApiKeys { apiKeys { id name role expiration } }`),
  rest('POST', '/api/auth/keys', `mutation CreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) { id name key } }`, { body: 'input' }),
  rest('DELETE', '/api/auth/keys/:id', `mutation DeleteApiKey($id: Int!) { deleteApiKey(id: $id) { message } }`),

  // Service accounts and their tokens
  rest('POST', '/api/serviceaccounts', `mutation CreateServiceAccount($input: CreateServiceAccountInput!) {
    createServiceAccount(input: $input) { ...ServiceAccountFields } }`, { body: 'input', status: 201 }),
  rest('GET', '/api/serviceaccounts/search', `query SearchServiceAccounts($query: String, $page: Int, $perPage: Int, $disabled: Boolean, $expiredTokens: Boolean) {
    serviceAccountSearch(query: $query, page: $page, perPage: $perPage, disabled: $disabled, expiredTokens: $expiredTokens) {
      totalCount serviceAccounts { ...ServiceAccountFields } page perPage } }`,
  { query: { query: 'query', page: 'page', perpage: 'perPage', disabled: 'disabled', expiredTokens: 'expiredTokens' } }),
  rest('GET', '/api/serviceaccounts/:id', `query GetServiceAccount($id: Int!) { serviceAccount(id: $id) { ...ServiceAccountFields } }`),
  // A Go map in the original: keys sorted.
  rest('PATCH', '/api/serviceaccounts/:id', `mutation UpdateServiceAccount($id: Int!, $input: UpdateServiceAccountInput!) {
    updateServiceAccount(id: $id, input: $input) {
      id message name serviceaccount { id name login orgId isDisabled createdAt updatedAt role teams } } }`, { body: 'input' }),
  rest('DELETE', '/api/serviceaccounts/:id', `mutation DeleteServiceAccount($id: Int!) {
    deleteServiceAccount(id: $id) { message } }`),
  rest('GET', '/api/serviceaccounts/:serviceAccountId/tokens', `query ListServiceAccountTokens($serviceAccountId: Int!) {
    serviceAccountTokens(serviceAccountId: $serviceAccountId) {
      id name created lastUsedAt expiration secondsUntilExpiration hasExpired isRevoked } }`),
  rest('POST', '/api/serviceaccounts/:serviceAccountId/tokens', `mutation CreateServiceAccountToken($serviceAccountId: Int!, $input: CreateServiceAccountTokenInput!) {
    createServiceAccountToken(serviceAccountId: $serviceAccountId, input: $input) { id name key } }`, { body: 'input' }),
  rest('DELETE', '/api/serviceaccounts/:serviceAccountId/tokens/:tokenId', `mutation DeleteServiceAccountToken($serviceAccountId: Int!, $tokenId: Int!) {
    deleteServiceAccountToken(serviceAccountId: $serviceAccountId, tokenId: $tokenId) { message } }`),

  // Users: server admins; the signed-in user's own routes (users only: tokens act for an org)
  rest('GET', '/api/users', `query SearchUsers($query: String, $page: Int, $perPage: Int) {
    users(query: $query, page: $page, perPage: $perPage) { ...UserSearchHitFields } }`, paged),
  rest('GET', '/api/users/search', `query SearchUsersWithPaging($query: String, $page: Int, $perPage: Int) {
    userSearch(query: $query, page: $page, perPage: $perPage) { totalCount users { ...UserSearchHitFields } page perPage } }`, paged),
  rest('GET', '/api/users/lookup', `query GetUserByLoginOrEmail($loginOrEmail: String) {
    userByLoginOrEmail(loginOrEmail: $loginOrEmail) { ...UserProfileFields } }`, { query: { loginOrEmail: 'loginOrEmail' } }),
  rest('GET', '/api/users/:id', `query GetUserById($id: Int!) { user(id: $id) { ...UserProfileFields } }`),
  rest('PUT', '/api/users/:id', `mutation UpdateUser($id: Int!, $input: UpdateUserInput!) {
    updateUser(id: $id, input: $input) { message } }`, { body: 'input' }),
  rest('GET', '/api/users/:id/orgs', `query GetUserOrgList($id: Int!) { userOrganizations(id: $id) { orgId name role } }`),
  // The user's teams in the org the request acts in, as the original lists them.
  rest('GET', '/api/users/:id/teams', `query GetUserTeams($id: Int!) { userTeams(id: $id) { ...TeamFields } }`),
  rest('POST', '/api/users/:id/using/:orgId', `mutation UpdateUserActiveOrg($id: Int!, $orgId: Int!) {
    switchUserOrganization(id: $id, orgId: $orgId) { message } }`),
  rest('GET', '/api/user', `query GetSignedInUser { viewerProfile { ...UserProfileFields } }`),
  rest('PUT', '/api/user', `mutation UpdateSignedInUser($input: UpdateUserInput!) { updateViewer(input: $input) { message } }`, { body: 'input' }),
  rest('PUT', '/api/user/password', `mutation ChangeUserPassword($oldPassword: String, $newPassword: String, $confirmNew: String) {
    changeViewerPassword(oldPassword: $oldPassword, newPassword: $newPassword, confirmNew: $confirmNew) { message } }`, { body: 'variables' }),
  rest('GET', '/api/user/teams', `query GetSignedInUserTeamList { viewerTeams { ...TeamFields } }`),
  rest('GET', '/api/user/orgs', `query GetSignedInUserOrgList { viewerOrganizations { orgId name role } }`),
  rest('POST', '/api/user/using/:id', `mutation UserSetUsingOrg($id: Int!) { switchViewerOrganization(orgId: $id) { message } }`),
  // Preferences of the caller (a user or a service account) in the org the request acts in.
  rest('GET', '/api/user/preferences', `query GetUserPreferences { viewerPreferences { ...PreferencesFields } }`, { result: preferencesAnswer }),
  rest('PUT', '/api/user/preferences', `mutation UpdateUserPreferences($input: PreferencesInput!) {
    updateViewerPreferences(input: $input) { message } }`, { body: 'input' }),
  rest('PATCH', '/api/user/preferences', `mutation PatchUserPreferences($input: PreferencesInput!) {
    patchViewerPreferences(input: $input) { message } }`, { body: 'input' }),
  rest('POST', '/api/admin/users/:id/disable', `mutation AdminDisableUser($id: Int!) { adminDisableUser(id: $id) { message } }`),
  rest('POST', '/api/admin/users/:id/enable', `mutation AdminEnableUser($id: Int!) { adminEnableUser(id: $id) { message } }`),

  // Orgs: server admins; routes on an org by id admit any caller and check the role held in that
  // org (it depends on the data). Create and member-add answers are Go maps: keys sorted.
  // Server admins, or any signed-in user with [users] allow_org_create (the resolver reads the setting)
  rest('POST', '/api/orgs', `mutation CreateOrg($name: String) { createOrganization(name: $name) { message orgId } }`, { body: 'variables' }),
  rest('GET', '/api/orgs', `query SearchOrgs($query: String, $name: String, $page: Int, $perPage: Int) {
    organizations(query: $query, name: $name, page: $page, perPage: $perPage) { id name } }`, { query: { query: 'query', name: 'name', page: 'page', perpage: 'perPage' } }),
  rest('GET', '/api/orgs/name/:name', `query GetOrgByName($name: String!) { organizationByName(name: $name) { ...OrgDetails } }`),
  rest('GET', '/api/orgs/:orgId', `query GetOrgById($orgId: Int!) { organization(id: $orgId) { ...OrgDetails } }`),
  rest('PUT', '/api/orgs/:orgId', `mutation UpdateOrg($orgId: Int!, $name: String) {
    updateOrganization(id: $orgId, name: $name) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/orgs/:orgId', `mutation DeleteOrgById($orgId: Int!) { deleteOrganization(id: $orgId) { message } }`),
  rest('GET', '/api/orgs/:orgId/users', `query GetOrgUsers($orgId: Int!) { organizationMembers(orgId: $orgId) { ...OrgMemberFields } }`),
  rest('POST', '/api/orgs/:orgId/users', `mutation AddOrgUser($orgId: Int!, $loginOrEmail: String, $role: String) {
    addOrganizationMember(orgId: $orgId, loginOrEmail: $loginOrEmail, role: $role) { message userId } }`, { body: 'variables' }),
  rest('PATCH', '/api/orgs/:orgId/users/:userId', `mutation UpdateOrgUser($orgId: Int!, $userId: Int!, $role: String) {
    updateOrganizationMember(orgId: $orgId, userId: $userId, role: $role) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/orgs/:orgId/users/:userId', `mutation RemoveOrgUser($orgId: Int!, $userId: Int!) {
    removeOrganizationMember(orgId: $orgId, userId: $userId) { message } }`),

  // The org the request acts in (X-Grafana-Org-Id, or the user's current org)
  rest('GET', '/api/org', `query GetCurrentOrg { currentOrganization { ...OrgDetails } }`),
  rest('PUT', '/api/org', `mutation UpdateCurrentOrg($name: String) { updateCurrentOrganization(name: $name) { message } }`, { body: 'variables' }),
  rest('GET', '/api/org/users', `query GetOrgUsersForCurrentOrg($query: String, $limit: Int) {
    currentOrganizationMembers(query: $query, limit: $limit) { ...OrgMemberFields } }`, { query: { query: 'query', limit: 'limit' } }),
  rest('POST', '/api/org/users', `mutation AddOrgUserToCurrentOrg($loginOrEmail: String, $role: String) {
    addCurrentOrganizationMember(loginOrEmail: $loginOrEmail, role: $role) { message userId } }`, { body: 'variables' }),
  rest('GET', '/api/org/users/lookup', `query GetOrgUsersForCurrentOrgLookup($query: String, $limit: Int) {
    currentOrganizationMembers(query: $query, limit: $limit) { userId login avatarUrl } }`, { query: { query: 'query', limit: 'limit' } }),
  rest('PATCH', '/api/org/users/:userId', `mutation UpdateOrgUserForCurrentOrg($userId: Int!, $role: String) {
    updateCurrentOrganizationMember(userId: $userId, role: $role) { message } }`, { body: 'variables' }),
  rest('DELETE', '/api/org/users/:userId', `mutation RemoveOrgUserForCurrentOrg($userId: Int!) {
    removeCurrentOrganizationMember(userId: $userId) { message } }`),
  rest('GET', '/api/org/preferences', `query GetOrgPreferences {
    currentOrganizationPreferences { ...PreferencesFields } }`, { result: preferencesAnswer }),
  rest('PUT', '/api/org/preferences', `mutation UpdateOrgPreferences($input: PreferencesInput!) {
    updateCurrentOrganizationPreferences(input: $input) { message } }`, { body: 'input' }),
  rest('PATCH', '/api/org/preferences', `mutation PatchOrgPreferences($input: PreferencesInput!) {
    patchCurrentOrganizationPreferences(input: $input) { message } }`, { body: 'input' }),

  // Anything else under /api is unknown to signed-in callers (as the original, credentials come first)
  endpoint('ANY', '/api/*', signedIn, 'not-found'),
];

let operations: Map<RestRoute, RestOperation> | null = null;

/**
 * Every REST row's operation, checked together when first asked for (the front door asks at
 * start-up, so a wrong row fails start-up naming itself).
 */
export function restOperations(): Map<RestRoute, RestOperation> {
  if (!operations) {
    const rows = ROUTES.filter((route): route is RestRoute => route.kind === 'rest');
    const checked = checkRestOperations(getSchema(), rows.map((row) => ({ source: row.document, at: row.at, currentOrg: row.currentOrg, gate: row.gate })), FRAGMENTS);
    operations = new Map(rows.map((row, i) => [row, checked[i]!]));
  }
  return operations;
}

export function restOperation(row: RestRoute): RestOperation {
  const op = restOperations().get(row);
  if (!op) throw new Error(`${row.method} ${row.path} is not a row of the route table`);
  return op;
}
