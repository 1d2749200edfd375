/**
 * THE route table: every endpoint the server answers, one row each, with who may call it, as the
 * original server's `pkg/api/api.go` writes it. The front door (src/http/front-door.ts) matches a row,
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
import { anonymous, orgMember, orgRole, perField, signedIn, signedInUser, type Access } from '../auth/access.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { RequestContext } from '../context.ts';
import { getSchema } from '../graphql/schema/index.ts';
import { USERS_READ } from '../graphql/schema/user/profile.ts';
import { prepareRestOperations, type Missing, type RestOperation, type RestSource } from '../rest/executor.ts';
import {
  DATA_SOURCE, DATA_SOURCE_DELETED, DATA_SOURCE_ID, DATA_SOURCE_DELETED_WITH_ID, DATA_SOURCE_LIST_ITEM, DATA_SOURCE_PERMISSION, dataSourceChange, dataSourceRefusal, healthCheck,
  LEGACY_SECRET_FIELDS, PERMISSION_INPUT_SCHEMA, PERMISSION_SET, permissionIds, permissionsSet,
} from '../rest/data-sources.ts';
import { ALERTS_PAUSED } from '../rest/alerts.ts';
import { message } from '../rest/messages.ts';
import { PREFERENCES_UPDATED, teamPreferencesMissing, viewerPreferencesRefusal, withoutNulls } from '../rest/preferences.ts';
import { SERVICE_ACCOUNT_PARAMS, SERVICE_ACCOUNT_UPDATED, serviceAccountRefusal, TOKEN_CREATED } from '../rest/service-accounts.ts';
import {
  ORG_BODY, ORG_CREATED, ORG_DETAILS, ORG_HIT, ORG_MEMBER_ADDED, ORG_MEMBER_BODY, ORG_MEMBER_FILTER, ORG_MEMBER_PARAMS, ORG_MEMBER_REMOVED, ORG_PARAMS, memberLimit, orgMembersRefusal, orgRefusal,
} from '../rest/organizations.ts';
import { ORG_ACCESS, orgCreator } from '../graphql/schema/organization/membership.ts';
import { onTeam, TEAM_BODY, TEAM_CREATED, TEAM_MEMBER_PARAMS, TEAM_MEMBERSHIPS_BODY, TEAM_PARAMS, teamMembersRefusal, teamRefusal } from '../rest/teams.ts';
import {
  PASSWORD_CHANGE_BODY, PASSWORD_CHANGE_PARAMS, USER_PERMISSIONS_BODY, USER_PERMISSIONS_PARAMS, SELF_ONLY, USER_CREATE_BODY, USER_CREATE_SCHEMA, USER_CREATED, USER_DELETED, USER_DISABLED, USER_ENABLED, USER_ORG_CHANGED, USER_PASSWORD_CHANGED, USER_PASSWORD_UPDATED, USER_PERMISSIONS_UPDATED, USER_UPDATED, USER_ID, USER_ORGS, USER_PROFILE, noOrgs, userNotFound,
} from '../rest/users.ts';
import { list, type JsonSchema, type Wire } from '../rest/wire.ts';
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
  /** The wire answer made of the value, where it is not the value as it is (src/rest/wire.ts). */
  shape?: Wire;
  /** What the OpenAPI document says of the row (its first sentence the summary), where its root field's description would not say it. */
  doc?: string;
  /**
   * What the OpenAPI document says of path parameters and body keys, where the graph's argument
   * would not say it: a description, or the REST schema of a value the row's variables rewrite.
   */
  params?: Readonly<Record<string, string | JsonSchema>>;
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
  id: databaseId uid orgId name type access url user database basicAuth basicAuthUser withCredentials isDefault jsonData secureJsonFields version readOnly
}
fragment DataSourceListItem on DataSource { id: databaseId uid orgId name type typeName access url user database basicAuth isDefault jsonData readOnly }
fragment ServiceAccountFields on ServiceAccount { id: databaseId name login orgId isDisabled role tokens: tokenCount }
fragment UserFields on User {
  id: databaseId uid email name login theme orgId isGrafanaAdmin: isServiceAdmin isDisabled updatedAt createdAt avatarUrl
}
fragment UserSearchHitFields on UserSearchHit {
  id uid name login email avatarUrl isAdmin: isServiceAdmin isDisabled lastSeenAt lastSeenAtAge authLabels
}
fragment TeamFields on Team { id: databaseId uid orgId name email avatarUrl memberCount permission }
fragment TeamMemberFields on TeamMember { orgId teamId teamUID userId userUID auth_module email name login avatarUrl labels permission }
fragment DataSourcePermissionFields on DataSourcePermission {
  id roleName isManaged isServiceAccount userId userLogin userAvatarUrl teamId teamAvatarUrl team builtInRole actions permission
}
fragment PreferencesFields on Preferences { homeDashboardUID timezone weekStart theme language queryHistory { homeTab } navbar { bookmarkUrls } }
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

/** Preferences answer only what is set: `{}` when nothing is, as the original's. */
const preferencesAnswer: ResultAnswer = { shape: (value) => ({ status: 200, body: withoutNulls(value) }) };

/** How the rules of the data source rows read in the OpenAPI document. */
const DS_RULE = {
  read: 'Org members of any role (`None` included) (datasources:read); the data source\'s permissions then require Query.',
  query: 'Org members of any role (`None` included) (datasources:query); the data source\'s permissions then require Query.',
  write: 'Org members of any role (`None` included) pass the gate (datasources:write); the data source\'s permissions then require Edit (Admins and Editors by default).',
  delete: 'Org members of any role (`None` included) pass the gate (datasources:delete); the data source\'s permissions then require Edit (Admins and Editors by default).',
};
const PERMISSIONS_RULE = {
  read: 'Org members of any role (`None` included) pass the gate (datasources.permissions:read); the data source\'s permissions then require Admin (org Admins by default).',
  write: 'Org members of any role (`None` included) pass the gate (datasources.permissions:write); the data source\'s permissions then require Admin (org Admins by default).',
};

/** How the data source rows' path parameters read in the OpenAPI document. */
const DS_PARAMS = { id: 'The data source\'s id.', uid: 'The data source\'s uid.', name: 'The data source\'s name.' };

/** The body of `POST /api/access-control/datasources/:uid`, with the numeric ids REST takes. */
const PERMISSIONS_BODY: JsonSchema = {
  type: 'array', items: { 'x-component': ['DataSourcePermissionInput', PERMISSION_INPUT_SCHEMA] }, description: 'The grants to set; those not listed stay as they are.',
};

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
  rest('GET', '/api/datasources', `query ListDataSources { currentOrganization { dataSources { nodes { ...DataSourceListItem } } } }`, {
    at: 'currentOrganization.dataSources.nodes', shape: list(DATA_SOURCE_LIST_ITEM),
    doc: 'The caller\'s org\'s data sources, ordered by name case-insensitively, as `GET /api/datasources`. Org members of any role (`None` included) (datasources:read); those whose permissions grant the caller Query.',
  }),
  rest('POST', '/api/datasources', `mutation AddDataSource($input: CreateDataSourceInput!) {
    dataSourceCreate(input: $input) { dataSource { ...DataSourceFull } userErrors { code message } } }`, {
    body: 'input', legacyInput: LEGACY_SECRET_FIELDS, shape: dataSourceChange(MESSAGES.dataSource.added),
    doc: 'Creates a data source in the caller\'s org, as `POST /api/datasources`. Org Admins (datasources:create).',
  }),
  rest('GET', '/api/datasources/:id', `query GetDataSourceById($id: Int!) { currentOrganization { dataSource(databaseId: $id) { ...DataSourceFull } } }`, {
    at: 'currentOrganization.dataSource', missing: dataSourceRefusal('read', (v) => ({ id: v.id as number })), shape: DATA_SOURCE,
    doc: `A data source of the caller's org by id, as \`GET /api/datasources/:id\`. ${DS_RULE.read}`,
    params: { id: DS_PARAMS.id },
  }),
  rest('PUT', '/api/datasources/:id', `mutation UpdateDataSourceById($id: ID!, $input: UpdateDataSourceInput!) {
    dataSourceUpdate(id: $id, input: $input) { dataSource { ...DataSourceFull } userErrors { code message } } }`, {
    body: 'input', ids: { id: 'DataSource' }, legacyInput: LEGACY_SECRET_FIELDS, shape: dataSourceChange(MESSAGES.dataSource.updated),
    doc: `Replaces a data source of the caller's org, as \`PUT /api/datasources/:id\`. ${DS_RULE.write}`,
    params: { id: DS_PARAMS.id },
  }),
  rest('DELETE', '/api/datasources/:id', `mutation DeleteDataSourceById($id: ID!) { dataSourceDelete(id: $id) { deletedDataSourceId userErrors { code message } } }`, {
    ids: { id: 'DataSource' }, shape: DATA_SOURCE_DELETED,
    doc: `Deletes a data source of the caller's org, as \`DELETE /api/datasources/:id\`. ${DS_RULE.delete}`,
    params: { id: DS_PARAMS.id },
  }),
  rest('GET', '/api/datasources/uid/:uid', `query GetDataSourceByUid($uid: String!) { currentOrganization { dataSource(uid: $uid) { ...DataSourceFull } } }`, {
    at: 'currentOrganization.dataSource', missing: dataSourceRefusal('read', (v) => ({ uid: v.uid as string })), shape: DATA_SOURCE,
    doc: `A data source of the caller's org by uid, as \`GET /api/datasources/uid/:uid\`. ${DS_RULE.read}`,
    params: { uid: DS_PARAMS.uid },
  }),
  rest('PUT', '/api/datasources/uid/:uid', `mutation UpdateDataSourceByUid($uid: String!, $input: UpdateDataSourceInput!) {
    dataSourceUpdate(uid: $uid, input: $input) { dataSource { ...DataSourceFull } userErrors { code message } } }`, {
    body: 'input', legacyInput: LEGACY_SECRET_FIELDS, shape: dataSourceChange(MESSAGES.dataSource.updated),
    doc: `Replaces a data source of the caller's org, as \`PUT /api/datasources/uid/:uid\`. ${DS_RULE.write}`,
    params: { uid: DS_PARAMS.uid },
  }),
  rest('DELETE', '/api/datasources/uid/:uid', `mutation DeleteDataSourceByUid($uid: String!) { dataSourceDelete(uid: $uid) { deletedDataSourceId userErrors { code message } } }`, {
    shape: DATA_SOURCE_DELETED_WITH_ID,
    doc: `Deletes a data source of the caller's org, as \`DELETE /api/datasources/uid/:uid\`. ${DS_RULE.delete}`,
    params: { uid: DS_PARAMS.uid },
  }),
  rest('GET', '/api/datasources/name/:name', `query GetDataSourceByName($name: String!) { currentOrganization { dataSource(name: $name) { ...DataSourceFull } } }`, {
    at: 'currentOrganization.dataSource', missing: dataSourceRefusal('read', (v) => ({ name: v.name as string })), shape: DATA_SOURCE,
    doc: `A data source of the caller's org by name, as \`GET /api/datasources/name/:name\`. ${DS_RULE.read}`,
    params: { name: DS_PARAMS.name },
  }),
  rest('DELETE', '/api/datasources/name/:name', `mutation DeleteDataSourceByName($name: String!) { dataSourceDelete(name: $name) { deletedDataSourceId userErrors { code message } } }`, {
    shape: DATA_SOURCE_DELETED_WITH_ID,
    doc: `Deletes a data source of the caller's org, as \`DELETE /api/datasources/name/:name\`. ${DS_RULE.delete}`,
    params: { name: DS_PARAMS.name },
  }),
  // The original admits Viewers and up here, not every member as its other reads do.
  rest('GET', '/api/datasources/id/:name', `query GetDataSourceIdByName($name: String!) { currentOrganization { dataSource(name: $name) { id: databaseId } } }`, {
    at: 'currentOrganization.dataSource', shape: DATA_SOURCE_ID, gate: orgRole('Viewer', 'datasources:id:read'), missing: dataSourceRefusal('read', (v) => ({ name: v.name as string })),
    doc: 'The id of a data source of the caller\'s org by name, as `GET /api/datasources/id/:name`. Org Viewers and up (datasources:id:read); the data source\'s permissions then require Query.',
    params: { name: DS_PARAMS.name },
  }),
  // Each kind's own check, sent through the proxy's connections (the original registers ANY).
  rest('GET', '/api/datasources/uid/:uid/health', `query CheckDataSourceHealthByUid($uid: String!) {
    currentOrganization { dataSource(uid: $uid) { health { details message status } } } }`, {
    at: 'currentOrganization.dataSource.health', result: healthAnswer, missing: healthCheck((v) => ({ uid: v.uid as string })),
    doc: `As \`GET /api/datasources/:id/health\`, by uid. ${DS_RULE.query}`,
    params: { uid: DS_PARAMS.uid },
  }),
  rest('GET', '/api/datasources/:id/health', `query CheckDataSourceHealthById($id: Int!) {
    currentOrganization { dataSource(databaseId: $id) { health { details message status } } } }`, {
    at: 'currentOrganization.dataSource.health', result: healthAnswer, missing: healthCheck((v) => ({ id: v.id as number })),
    doc: `Runs the data source's health check: its kind's own probe, sent through the data source proxy (its egress policy, the data source's credentials and headers, its timeout), as \`GET /api/datasources/:id/health\`. ${DS_RULE.query}`,
    params: { id: DS_PARAMS.id },
  }),
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
    currentOrganization { dataSource(uid: $uid) { permissions { ...DataSourcePermissionFields } } } }`, {
    at: 'currentOrganization.dataSource.permissions', missing: dataSourceRefusal('admin', (v) => ({ uid: v.uid as string })), shape: list(DATA_SOURCE_PERMISSION),
    doc: `Who may query, edit or administer a data source, as \`GET /api/access-control/datasources/:uid\`. ${PERMISSIONS_RULE.read}`,
    params: { uid: DS_PARAMS.uid },
  }),
  rest('POST', '/api/access-control/datasources/:uid', `mutation SetDataSourcePermissions($uid: String!, $permissions: [DataSourcePermissionInput!]) {
    dataSourcePermissionsSet(uid: $uid, input: { permissions: $permissions }) { userErrors { code message } } }`, {
    body: 'variables', variables: permissionIds, shape: permissionsSet(MESSAGES.permission.allUpdated),
    doc: `Sets several grants on a data source at once, as \`POST /api/access-control/datasources/:uid\`. ${PERMISSIONS_RULE.write}`,
    params: { uid: DS_PARAMS.uid, permissions: PERMISSIONS_BODY },
  }),
  rest('POST', '/api/access-control/datasources/:uid/users/:userId', `mutation SetDataSourceUserPermission($uid: String!, $userId: ID!, $permission: String) {
    dataSourcePermissionSet(uid: $uid, input: { userId: $userId, permission: $permission }) { userErrors { code message } } }`, {
    body: 'variables', ids: { userId: 'User' }, shape: PERMISSION_SET,
    doc: `Grants a user a level on a data source, or removes its grant, as \`POST /api/access-control/datasources/:uid/users/:userId\`. ${PERMISSIONS_RULE.write}`,
    params: { uid: DS_PARAMS.uid, userId: 'A user (or service account) of the org.', permission: '`Query`, `Edit` or `Admin`; empty removes the grant.' },
  }),
  rest('POST', '/api/access-control/datasources/:uid/teams/:teamId', `mutation SetDataSourceTeamPermission($uid: String!, $teamId: ID!, $permission: String) {
    dataSourcePermissionSet(uid: $uid, input: { teamId: $teamId, permission: $permission }) { userErrors { code message } } }`, {
    body: 'variables', ids: { teamId: 'Team' }, shape: PERMISSION_SET,
    doc: `Grants a team a level on a data source, or removes its grant, as \`POST /api/access-control/datasources/:uid/teams/:teamId\`. ${PERMISSIONS_RULE.write}`,
    params: { uid: DS_PARAMS.uid, teamId: 'A team of the org.', permission: '`Query`, `Edit` or `Admin`; empty removes the grant.' },
  }),
  rest('POST', '/api/access-control/datasources/:uid/builtInRoles/:builtInRole', `mutation SetDataSourceBuiltInRolePermission($uid: String!, $builtInRole: String!, $permission: String) {
    dataSourcePermissionSet(uid: $uid, input: { builtInRole: $builtInRole, permission: $permission }) { userErrors { code message } } }`, {
    body: 'variables', shape: PERMISSION_SET,
    doc: `Grants an org role a level on a data source, or removes its grant, as \`POST /api/access-control/datasources/:uid/builtInRoles/:builtInRole\`. ${PERMISSIONS_RULE.write}`,
    params: { uid: DS_PARAMS.uid, builtInRole: '`Viewer`, `Editor` or `Admin`.', permission: '`Query`, `Edit` or `Admin`; empty removes the grant.' },
  }),

  // Teams of the org the request acts in. The create answer is a Go map: keys sorted.
  rest('GET', '/api/teams/search', `query SearchTeams($query: String, $name: String, $page: Int, $perPage: Int) {
    teamSearch(query: $query, name: $name, page: $page, perPage: $perPage) { totalCount teams { ...TeamFields } page perPage } }`,
  { query: { query: 'query', name: 'name', page: 'page', perpage: 'perPage' } }),
  rest('POST', '/api/teams', `mutation CreateTeam($name: String!, $email: String) {
    teamCreate(input: { name: $name, email: $email }) { team { id: databaseId uid } userErrors { code message } } }`, { body: 'variables', shape: TEAM_CREATED, params: TEAM_BODY }),
  rest('GET', '/api/teams/:teamId', `query GetTeamById($teamId: Int!) { currentOrganization { team(databaseId: $teamId) { ...TeamFields } } }`, {
    at: 'currentOrganization.team', missing: teamRefusal, params: TEAM_PARAMS,
    doc: `A team of the org by id, as \`GET /api/teams/:teamId\`. ${onTeam('teams:read', 'members')}`,
  }),
  rest('PUT', '/api/teams/:teamId', `mutation UpdateTeam($teamId: ID!, $name: String!, $email: String) {
    teamUpdate(id: $teamId, input: { name: $name, email: $email }) { userErrors { code message } } }`, {
    body: 'variables', ids: { teamId: 'Team' }, shape: message(MESSAGES.team.updated), params: { ...TEAM_PARAMS, ...TEAM_BODY },
  }),
  rest('DELETE', '/api/teams/:teamId', `mutation DeleteTeamById($teamId: ID!) { teamDelete(id: $teamId) { userErrors { code message } } }`, {
    ids: { teamId: 'Team' }, shape: message(MESSAGES.team.deleted), params: TEAM_PARAMS,
  }),
  rest('GET', '/api/teams/:teamId/members', `query GetTeamMembers($teamId: Int!) {
    currentOrganization { team(databaseId: $teamId) { members { ...TeamMemberFields } } } }`, {
    at: 'currentOrganization.team.members', missing: teamMembersRefusal, params: TEAM_PARAMS,
    doc: `A team's members by login, as \`GET /api/teams/:teamId/members\`. ${onTeam('teams.permissions:read', 'Admins')}`,
  }),
  // The original's command takes the user's id only: a \`permission\` in the body is not read.
  rest('POST', '/api/teams/:teamId/members', `mutation AddTeamMember($teamId: ID!, $userId: ID!) {
    teamMemberAdd(teamId: $teamId, input: { userId: $userId }) { userErrors { code message } } }`, {
    body: 'variables', ids: { teamId: 'Team', userId: 'User' }, shape: message(MESSAGES.team.memberAdded),
    params: { ...TEAM_PARAMS, userId: { type: 'integer', format: 'int32', description: 'An existing user, of any org.' } },
  }),
  rest('PUT', '/api/teams/:teamId/members', `mutation SetTeamMemberships($teamId: ID!, $members: [String!], $admins: [String!]) {
    teamMembersSet(teamId: $teamId, input: { members: $members, admins: $admins }) { userErrors { code message } } }`, {
    body: 'variables', ids: { teamId: 'Team' }, shape: message(MESSAGES.team.membershipsUpdated), params: { ...TEAM_PARAMS, ...TEAM_MEMBERSHIPS_BODY },
  }),
  rest('PUT', '/api/teams/:teamId/members/:userId', `mutation UpdateTeamMember($teamId: ID!, $userId: ID!, $permission: Int) {
    teamMemberUpdate(teamId: $teamId, userId: $userId, input: { permission: $permission }) { userErrors { code message } } }`, {
    body: 'variables', ids: { teamId: 'Team', userId: 'User' }, shape: message(MESSAGES.team.memberUpdated), params: TEAM_MEMBER_PARAMS,
  }),
  rest('DELETE', '/api/teams/:teamId/members/:userId', `mutation RemoveTeamMember($teamId: ID!, $userId: ID!) {
    teamMemberRemove(teamId: $teamId, userId: $userId) { userErrors { code message } } }`, {
    ids: { teamId: 'Team', userId: 'User' }, shape: message(MESSAGES.team.memberRemoved), params: TEAM_MEMBER_PARAMS,
  }),
  // The original looks no team up here: an org Admin gets `{}` (and "Preferences updated") for any id.
  rest('GET', '/api/teams/:teamId/preferences', `query GetTeamPreferences($teamId: Int!) {
    currentOrganization { team(databaseId: $teamId) { preferences { ...PreferencesFields } } } }`, {
    at: 'currentOrganization.team.preferences', missing: teamPreferencesMissing('read', {}), result: preferencesAnswer, params: TEAM_PARAMS,
    doc: 'A team\'s preferences, as `GET /api/teams/:teamId/preferences`. Org members of any role (`None` included) pass the gate (teams:read); '
      + 'then org Admins (who get none for a team the org does not have, as the original answers) and the team\'s members.',
  }),
  rest('PUT', '/api/teams/:teamId/preferences', `mutation UpdateTeamPreferences($teamId: ID!, $input: PreferencesInput!) {
    teamPreferencesUpdate(teamId: $teamId, input: $input, replace: true) { preferences { __typename } } }`, {
    body: 'input', ids: { teamId: 'Team' }, at: 'teamPreferencesUpdate.preferences', missing: teamPreferencesMissing('admin', {}), shape: PREFERENCES_UPDATED, params: TEAM_PARAMS,
    doc: 'Replaces a team\'s preferences, as `PUT /api/teams/:teamId/preferences`. Org members of any role (`None` included) pass the gate (teams:write); then org Admins '
      + '(a team the org does not have is answered as the original does, and nothing is kept) and the team\'s Admins.',
  }),

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
  rest('POST', '/api/admin/users', `mutation AdminCreateUser($input: UserCreateInput!) {
    userCreate(input: $input) { user { id: databaseId } userErrors { code message } } }`, {
    body: 'input', legacyInput: USER_CREATE_BODY, shape: USER_CREATED, params: { input: USER_CREATE_SCHEMA },
    doc: 'Creates a global user in the default (or given) org with the auto-assign role, as `POST /api/admin/users`. Server admins only (Basic credentials).',
  }),
  rest('PUT', '/api/admin/users/:id/password', `mutation AdminUpdateUserPassword($id: ID!, $password: String!) {
    userPasswordUpdate(id: $id, input: { password: $password }) { userErrors { code message } } }`, {
    body: 'variables', ids: { id: 'User' }, shape: USER_PASSWORD_UPDATED, params: { id: USER_ID, password: 'The new password, at least 4 characters.' },
    doc: 'Sets a user\'s password, as `PUT /api/admin/users/:id/password`; the old one stops working at once on every instance. Server admins only (Basic credentials).',
  }),
  // The flag's default never applies: the body's `isServiceAdmin` or `isGrafanaAdmin` is read into it, or the row answers 400.
  rest('PUT', '/api/admin/users/:id/permissions', `mutation AdminUpdateUserPermissions($id: ID!, $isServiceAdmin: Boolean = false) {
    userPermissionsUpdate(id: $id, input: { isServiceAdmin: $isServiceAdmin }) { userErrors { code message } } }`, {
    body: 'variables', ids: { id: 'User' }, legacyInput: USER_PERMISSIONS_BODY, shape: USER_PERMISSIONS_UPDATED, params: { id: USER_ID, ...USER_PERMISSIONS_PARAMS },
    doc: 'Grants or revokes the server-admin permission, as `PUT /api/admin/users/:id/permissions`. The last server admin cannot be demoted. Server admins only (Basic credentials).',
  }),
  rest('DELETE', '/api/admin/users/:id', `mutation AdminDeleteUser($id: ID!) { userDelete(id: $id) { deletedUserId userErrors { code message } } }`, {
    ids: { id: 'User' }, shape: USER_DELETED, params: { id: USER_ID },
    doc: 'Deletes a user with its memberships and stars, as `DELETE /api/admin/users/:id`. Server admins only (Basic credentials).',
  }),
  rest('POST', '/api/admin/pause-all-alerts', `mutation PauseAllAlerts($paused: Boolean) {
    alertsPause(paused: $paused) { paused alertsAffected userErrors { code message } } }`, { body: 'variables', shape: ALERTS_PAUSED }),
  rest('POST', '/api/admin/provisioning/datasources/reload', `mutation ReloadDataSourceProvisioning {
    dataSourceProvisioningReload { userErrors { code message } } }`, { shape: message(MESSAGES.provisioning.reloaded) }),

  // Legacy API keys
  rest('GET', '/api/auth/keys', `query ListApiKeys { apiKeys { id name role expiration } }`),
  rest('POST', '/api/auth/keys', `mutation CreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) { id name key } }`, { body: 'input' }),
  rest('DELETE', '/api/auth/keys/:id', `mutation DeleteApiKey($id: Int!) { apiKeyDelete(id: $id) { userErrors { code message } } }`, {
    shape: message(MESSAGES.apiKey.deleted),
  }),

  // Service accounts and their tokens
  rest('POST', '/api/serviceaccounts', `mutation CreateServiceAccount($input: CreateServiceAccountInput!) {
    serviceAccountCreate(input: $input) { serviceAccount { ...ServiceAccountFields } userErrors { code message } } }`, {
    body: 'input', status: 201, at: 'serviceAccountCreate.serviceAccount',
  }),
  rest('GET', '/api/serviceaccounts/search', `query SearchServiceAccounts($query: String, $page: Int, $perPage: Int, $disabled: Boolean, $expiredTokens: Boolean) {
    serviceAccountSearch(query: $query, page: $page, perPage: $perPage, disabled: $disabled, expiredTokens: $expiredTokens) {
      totalCount serviceAccounts { ...ServiceAccountFields } page perPage } }`,
  { query: { query: 'query', page: 'page', perpage: 'perPage', disabled: 'disabled', expiredTokens: 'expiredTokens' } }),
  rest('GET', '/api/serviceaccounts/:id', `query GetServiceAccount($id: Int!) { currentOrganization { serviceAccount(databaseId: $id) { ...ServiceAccountFields } } }`, {
    at: 'currentOrganization.serviceAccount', missing: serviceAccountRefusal('id'), params: SERVICE_ACCOUNT_PARAMS,
    doc: 'One service account of the caller\'s org, as `GET /api/serviceaccounts/:id`. Org Admins (serviceaccounts:read).',
  }),
  rest('PATCH', '/api/serviceaccounts/:id', `mutation UpdateServiceAccount($id: ID!, $input: UpdateServiceAccountInput!) {
    serviceAccountUpdate(id: $id, input: $input) {
      serviceAccount { id: databaseId name login orgId isDisabled createdAt updatedAt role } userErrors { code message } } }`, {
    body: 'input', ids: { id: 'ServiceAccount' }, shape: SERVICE_ACCOUNT_UPDATED, params: SERVICE_ACCOUNT_PARAMS,
  }),
  rest('DELETE', '/api/serviceaccounts/:id', `mutation DeleteServiceAccount($id: ID!) {
    serviceAccountDelete(id: $id) { userErrors { code message } } }`, {
    ids: { id: 'ServiceAccount' }, shape: message(MESSAGES.serviceAccount.deleted), params: SERVICE_ACCOUNT_PARAMS,
  }),
  rest('GET', '/api/serviceaccounts/:serviceAccountId/tokens', `query ListServiceAccountTokens($serviceAccountId: Int!) {
    currentOrganization { serviceAccount(databaseId: $serviceAccountId) { tokens { nodes {
      id: databaseId name created lastUsedAt expiration secondsUntilExpiration hasExpired isRevoked } } } } }`, {
    at: 'currentOrganization.serviceAccount.tokens.nodes', missing: serviceAccountRefusal('serviceAccountId'), params: SERVICE_ACCOUNT_PARAMS,
    doc: 'The tokens of a service account, by name, as `GET /api/serviceaccounts/:id/tokens`. Org Admins (serviceaccounts:read).',
  }),
  rest('POST', '/api/serviceaccounts/:serviceAccountId/tokens', `mutation CreateServiceAccountToken($serviceAccountId: ID!, $input: CreateServiceAccountTokenInput!) {
    serviceAccountTokenCreate(serviceAccountId: $serviceAccountId, input: $input) { token { id: databaseId name } key userErrors { code message } } }`, {
    body: 'input', ids: { serviceAccountId: 'ServiceAccount' }, shape: TOKEN_CREATED, params: SERVICE_ACCOUNT_PARAMS,
  }),
  rest('DELETE', '/api/serviceaccounts/:serviceAccountId/tokens/:tokenId', `mutation DeleteServiceAccountToken($serviceAccountId: ID!, $tokenId: ID!) {
    serviceAccountTokenDelete(id: $tokenId, serviceAccountId: $serviceAccountId) { userErrors { code message } } }`, {
    ids: { serviceAccountId: 'ServiceAccount', tokenId: 'ServiceAccountToken' }, shape: message(MESSAGES.serviceAccount.tokenDeleted), params: SERVICE_ACCOUNT_PARAMS,
  }),

  // Users: server admins; the signed-in user's own routes (users only: tokens act for an org)
  rest('GET', '/api/users', `query SearchUsers($query: String, $page: Int, $perPage: Int) {
    users(query: $query, page: $page, perPage: $perPage) { ...UserSearchHitFields } }`, paged),
  rest('GET', '/api/users/search', `query SearchUsersWithPaging($query: String, $page: Int, $perPage: Int) {
    userSearch(query: $query, page: $page, perPage: $perPage) { totalCount users { ...UserSearchHitFields } page perPage } }`, paged),
  rest('GET', '/api/users/lookup', `query GetUserByLoginOrEmail($loginOrEmail: String) {
    userByLoginOrEmail(loginOrEmail: $loginOrEmail) { ...UserFields } }`, { query: { loginOrEmail: 'loginOrEmail' }, shape: USER_PROFILE }),
  rest('GET', '/api/users/:id', `query GetUserById($id: ID!) { node(id: $id) { ... on User { ...UserFields } } }`, {
    ids: { id: 'User' }, gate: USERS_READ, missing: userNotFound, shape: USER_PROFILE, params: { id: USER_ID },
    doc: 'A user by id, as `GET /api/users/:id`. Server admins only (users:read).',
  }),
  rest('PUT', '/api/users/:id', `mutation UpdateUser($id: ID!, $input: UpdateUserInput!) {
    userUpdate(id: $id, input: $input) { userErrors { code message } } }`, {
    body: 'input', ids: { id: 'User' }, shape: USER_UPDATED, params: { id: USER_ID },
    doc: 'Changes a user\'s name, e-mail, login and theme, as `PUT /api/users/:id`. Server admins only (users:write).',
  }),
  rest('GET', '/api/users/:id/orgs', `query GetUserOrgList($id: ID!) {
    node(id: $id) { ... on User { organizations { edges { role node { orgId: databaseId name } } } } } }`, {
    ids: { id: 'User' }, gate: USERS_READ, at: 'node.organizations.edges', missing: noOrgs, shape: USER_ORGS, params: { id: USER_ID },
    doc: 'The orgs a user belongs to, by name, as `GET /api/users/:id/orgs`. Server admins only (users:read).',
  }),
  // The user's teams in the org the request acts in, as the original lists them.
  rest('GET', '/api/users/:id/teams', `query GetUserTeams($id: Int!) { userTeams(id: $id) { ...TeamFields } }`),
  rest('POST', '/api/users/:id/using/:orgId', `mutation UpdateUserActiveOrg($id: ID!, $orgId: ID!) {
    userOrganizationSwitch(id: $id, organizationId: $orgId) { userErrors { code message } } }`, {
    ids: { id: 'User', orgId: 'Organization' }, shape: USER_ORG_CHANGED, params: { id: USER_ID, orgId: 'One of the user\'s orgs.' },
    doc: 'Makes an org of a user the one its later requests act in when they name none, as `POST /api/users/:id/using/:orgId`; 401 `Not a valid organization` '
      + 'when the user is not a member of it (or does not exist). Server admins only (users:write).',
  }),
  rest('GET', '/api/user', `query GetSignedInUser { viewer { ... on User { ...UserFields } } }`, {
    gate: signedInUser, shape: USER_PROFILE,
    doc: 'The signed-in user, as `GET /api/user`. Signed-in users (Basic credentials; tokens are refused).',
  }),
  rest('PUT', '/api/user', `mutation UpdateSignedInUser($input: UpdateUserInput!) { viewerUpdate(input: $input) { userErrors { code message } } }`, {
    body: 'input', shape: USER_UPDATED,
    doc: `Changes the signed-in user's own name, e-mail, login and theme, as \`PUT /api/user\`. ${SELF_ONLY}`,
  }),
  rest('PUT', '/api/user/password', `mutation ChangeUserPassword($oldPassword: String = "", $newPassword: String = "") {
    viewerPasswordChange(input: { oldPassword: $oldPassword, newPassword: $newPassword }) { userErrors { code message } } }`, {
    body: 'variables', legacyInput: PASSWORD_CHANGE_BODY, shape: USER_PASSWORD_CHANGED, params: PASSWORD_CHANGE_PARAMS,
    doc: `Changes the signed-in user's password, as \`PUT /api/user/password\`; the old one stops working on every instance at once. ${SELF_ONLY}`,
  }),
  rest('GET', '/api/user/teams', `query GetSignedInUserTeamList($orgId: ID!) {
    viewer { ... on User { teams(organizationId: $orgId) { nodes { ...TeamFields } } } } }`, {
    currentOrg: ['orgId'], gate: signedInUser, at: 'viewer.teams.nodes',
    doc: `The signed-in user's teams in the org it acts in, as \`GET /api/user/teams\`. ${SELF_ONLY}`,
  }),
  rest('GET', '/api/user/orgs', `query GetSignedInUserOrgList { viewer { ... on User { organizations { edges { role node { orgId: databaseId name } } } } } }`, {
    gate: signedInUser, at: 'viewer.organizations.edges', shape: USER_ORGS,
    doc: `The signed-in user's orgs, by name, as \`GET /api/user/orgs\`. ${SELF_ONLY}`,
  }),
  rest('POST', '/api/user/using/:id', `mutation UserSetUsingOrg($id: ID!) { viewerOrganizationSwitch(organizationId: $id) { userErrors { code message } } }`, {
    ids: { id: 'Organization' }, shape: USER_ORG_CHANGED, params: { id: 'One of the signed-in user\'s orgs.' },
    doc: `Makes an org of the signed-in user the one its later requests act in when they name none, as \`POST /api/user/using/:id\`. ${SELF_ONLY}`,
  }),
  // Preferences of the caller (a user or a service account) in the org the request acts in.
  rest('GET', '/api/user/preferences', `query GetUserPreferences { viewer { preferences { ...PreferencesFields } } }`, {
    at: 'viewer.preferences', missing: viewerPreferencesRefusal, result: preferencesAnswer,
    doc: 'The signed-in user\'s (or service account\'s) preferences in the org the request acts in, as `GET /api/user/preferences`. Any signed-in caller; a legacy API key is 401 `Not a valid identity`.',
  }),
  rest('PUT', '/api/user/preferences', `mutation UpdateUserPreferences($input: PreferencesInput!) {
    viewerPreferencesUpdate(input: $input, replace: true) { userErrors { code message } } }`, {
    body: 'input', shape: PREFERENCES_UPDATED,
    doc: 'Replaces the signed-in caller\'s preferences in the org the request acts in, as `PUT /api/user/preferences`. Any signed-in caller; a legacy API key is 401 `Not a valid identity`.',
  }),
  rest('PATCH', '/api/user/preferences', `mutation PatchUserPreferences($input: PreferencesInput!) {
    viewerPreferencesUpdate(input: $input) { userErrors { code message } } }`, {
    body: 'input', shape: PREFERENCES_UPDATED,
    doc: 'Changes some of the signed-in caller\'s preferences in the org the request acts in, as `PATCH /api/user/preferences`. Any signed-in caller; a legacy API key is 401 `Not a valid identity`.',
  }),
  rest('POST', '/api/admin/users/:id/disable', `mutation AdminDisableUser($id: ID!) { userDisable(id: $id) { userErrors { code message } } }`, {
    ids: { id: 'User' }, shape: USER_DISABLED, params: { id: USER_ID },
    doc: 'Disables a user, as `POST /api/admin/users/:id/disable`: its credentials are refused (401) on every instance from the next request on. '
      + 'The last enabled server admin cannot be disabled. Server admins only (Basic credentials).',
  }),
  rest('POST', '/api/admin/users/:id/enable', `mutation AdminEnableUser($id: ID!) { userEnable(id: $id) { userErrors { code message } } }`, {
    ids: { id: 'User' }, shape: USER_ENABLED, params: { id: USER_ID },
  }),

  // Orgs: server admins; routes on an org by id admit any caller and check the role held in that
  // org (it depends on the data). Create and member-add answers are Go maps: keys sorted.
  // Server admins, or any signed-in user with [users] allow_org_create (the resolver reads the setting)
  rest('POST', '/api/orgs', `mutation CreateOrg($name: String!) {
    organizationCreate(input: { name: $name }) { organization { id: databaseId } userErrors { code message } } }`, {
    // The creator rule (the field's own) runs before the body's variables are coerced: the original refuses before it binds.
    body: 'variables', shape: ORG_CREATED, params: ORG_BODY, variables: (variables, ctx) => (orgCreator(ctx), variables),
    doc: 'Creates an org with the caller as its Admin, as `POST /api/orgs`. Any signed-in caller passes the gate; then server admins, or every user when `[users] allow_org_create` is on (orgs:create).',
  }),
  rest('GET', '/api/orgs', `query SearchOrgs($query: String, $name: String, $page: Int, $perPage: Int) {
    organizations(query: $query, name: $name, page: $page, perPage: $perPage) { id: databaseId name } }`, {
    query: { query: 'query', name: 'name', page: 'page', perpage: 'perPage' }, shape: list(ORG_HIT),
  }),
  rest('GET', '/api/orgs/name/:name', `query GetOrgByName($name: String!) { organizationByName(name: $name) { id: databaseId name } }`, { shape: ORG_DETAILS }),
  rest('GET', '/api/orgs/:orgId', `query GetOrgById($orgId: ID!) { node(id: $orgId) { ... on Organization { id: databaseId name } } }`, {
    ids: { orgId: 'Organization' }, missing: orgRefusal, shape: ORG_DETAILS, params: ORG_PARAMS,
    doc: 'An org by id, as `GET /api/orgs/:orgId`. Any signed-in caller passes the gate; then its members and server admins (orgs:read).',
  }),
  rest('PUT', '/api/orgs/:orgId', `mutation UpdateOrg($orgId: ID!, $name: String!) {
    organizationUpdate(id: $orgId, input: { name: $name }) { userErrors { code message } } }`, {
    body: 'variables', ids: { orgId: 'Organization' }, shape: message(MESSAGES.org.updated), params: { ...ORG_PARAMS, ...ORG_BODY },
    doc: 'Renames an org, as `PUT /api/orgs/:orgId`. Its Admins and server admins (orgs:write).',
  }),
  rest('DELETE', '/api/orgs/:orgId', `mutation DeleteOrgById($orgId: ID!) { organizationDelete(id: $orgId) { userErrors { code message } } }`, {
    ids: { orgId: 'Organization' }, shape: message(MESSAGES.org.deleted), params: ORG_PARAMS,
    doc: 'Deletes an org with its data sources, tokens, service accounts and memberships, as `DELETE /api/orgs/:orgId`; every instance forgets them at once. Not the org the request acts in. Server admins only (orgs:delete).',
  }),
  rest('GET', '/api/orgs/:orgId/users', `query GetOrgUsers($orgId: ID!) {
    node(id: $orgId) { ... on Organization { members { nodes { ...OrgMemberFields } } } } }`, {
    at: 'node.members.nodes', ids: { orgId: 'Organization' }, missing: orgMembersRefusal, params: ORG_PARAMS,
    doc: 'An org\'s members by login, as `GET /api/orgs/:orgId/users`. Any signed-in caller passes the gate; then its Admins and server admins (org.users:read).',
  }),
  rest('POST', '/api/orgs/:orgId/users', `mutation AddOrgUser($orgId: ID!, $loginOrEmail: String!, $role: String!) {
    organizationMemberAdd(organizationId: $orgId, input: { loginOrEmail: $loginOrEmail, role: $role }) { member { userId } userErrors { code message } } }`, {
    body: 'variables', ids: { orgId: 'Organization' }, shape: ORG_MEMBER_ADDED, params: { ...ORG_PARAMS, ...ORG_MEMBER_BODY },
    doc: 'Adds an existing user to an org, as `POST /api/orgs/:orgId/users`. Its Admins and server admins (org.users:add).',
  }),
  rest('PATCH', '/api/orgs/:orgId/users/:userId', `mutation UpdateOrgUser($id: ID!, $role: String!) {
    organizationMemberUpdate(id: $id, input: { role: $role }) { userErrors { code message } } }`, {
    body: 'variables', membership: 'id', shape: message(MESSAGES.orgUser.updated), params: { ...ORG_MEMBER_PARAMS, role: ORG_MEMBER_BODY.role },
    doc: 'Changes a member\'s role, as `PATCH /api/orgs/:orgId/users/:userId`; the org\'s last Admin cannot be demoted. Its Admins and server admins (org.users:write).',
  }),
  rest('DELETE', '/api/orgs/:orgId/users/:userId', `mutation RemoveOrgUser($id: ID!) {
    organizationMemberRemove(id: $id, deleteOrphanedUser: false) { userErrors { code message } } }`, {
    membership: 'id', shape: message(MESSAGES.orgUser.removed), params: ORG_MEMBER_PARAMS,
    doc: 'Removes a member from an org, as `DELETE /api/orgs/:orgId/users/:userId`; the org\'s last Admin cannot be removed. Its Admins and server admins (org.users:remove).',
  }),

  // The org the request acts in (X-Grafana-Org-Id, or the user's current org)
  rest('GET', '/api/org', `query GetCurrentOrg { currentOrganization { id: databaseId name } }`, {
    shape: ORG_DETAILS,
    doc: 'The org the request acts in (`X-Grafana-Org-Id`, or the user\'s current org), as `GET /api/org`. Org Viewers and up, and server admins (orgs:read).',
  }),
  rest('PUT', '/api/org', `mutation UpdateCurrentOrg($id: ID!, $name: String!) {
    organizationUpdate(id: $id, input: { name: $name }) { userErrors { code message } } }`, {
    body: 'variables', currentOrg: ['id'], shape: message(MESSAGES.org.updated), params: ORG_BODY,
    doc: 'Renames the org the request acts in, as `PUT /api/org`. Org Admins and server admins (orgs:write).',
  }),
  rest('GET', '/api/org/users', `query GetOrgUsersForCurrentOrg($query: String, $limit: Int) {
    currentOrganization { members(query: $query, first: $limit) { nodes { ...OrgMemberFields } } } }`, {
    at: 'currentOrganization.members.nodes', query: { query: 'query', limit: 'limit' }, variables: memberLimit, gate: ORG_ACCESS.membersRead, missing: orgMembersRefusal, params: ORG_MEMBER_FILTER,
    doc: 'The members of the org the request acts in, by login, as `GET /api/org/users`. Org Admins and server admins (org.users:read).',
  }),
  rest('POST', '/api/org/users', `mutation AddOrgUserToCurrentOrg($id: ID!, $loginOrEmail: String!, $role: String!) {
    organizationMemberAdd(organizationId: $id, input: { loginOrEmail: $loginOrEmail, role: $role }) { member { userId } userErrors { code message } } }`, {
    body: 'variables', currentOrg: ['id'], shape: ORG_MEMBER_ADDED, params: ORG_MEMBER_BODY,
    doc: 'Adds an existing user to the org the request acts in, as `POST /api/org/users`. Org Admins and server admins (org.users:add).',
  }),
  rest('GET', '/api/org/users/lookup', `query GetOrgUsersForCurrentOrgLookup($query: String, $limit: Int) {
    currentOrganization { members(query: $query, first: $limit) { nodes { userId login avatarUrl } } } }`, {
    at: 'currentOrganization.members.nodes', query: { query: 'query', limit: 'limit' }, variables: memberLimit, gate: ORG_ACCESS.membersRead, missing: orgMembersRefusal, params: ORG_MEMBER_FILTER,
    doc: 'The members of the org the request acts in, by login, as `GET /api/org/users/lookup`. Org Admins and server admins (org.users:read).',
  }),
  rest('PATCH', '/api/org/users/:userId', `mutation UpdateOrgUserForCurrentOrg($id: ID!, $role: String!) {
    organizationMemberUpdate(id: $id, input: { role: $role }) { userErrors { code message } } }`, {
    body: 'variables', membership: 'id', shape: message(MESSAGES.orgUser.updated),
    params: { userId: ORG_MEMBER_PARAMS.userId, role: ORG_MEMBER_BODY.role },
    doc: 'Changes a member\'s role in the org the request acts in, as `PATCH /api/org/users/:userId`; its last Admin cannot be demoted. Org Admins and server admins (org.users:write).',
  }),
  rest('DELETE', '/api/org/users/:userId', `mutation RemoveOrgUserForCurrentOrg($id: ID!) {
    organizationMemberRemove(id: $id, deleteOrphanedUser: true) { deletedUserId userErrors { code message } } }`, {
    membership: 'id', shape: ORG_MEMBER_REMOVED, params: { userId: ORG_MEMBER_PARAMS.userId },
    doc: 'Removes a member from the org the request acts in, as `DELETE /api/org/users/:userId`; a user left in no org is deleted, as by the original server, unless it is a server admin (then only the membership goes). '
      + 'Org Admins and server admins (org.users:remove).',
  }),
  rest('GET', '/api/org/preferences', `query GetOrgPreferences { currentOrganization { preferences { ...PreferencesFields } } }`, {
    at: 'currentOrganization.preferences', result: preferencesAnswer,
    doc: 'The preferences of the org the request acts in, as `GET /api/org/preferences`. Org Admins (orgs.preferences:read).',
  }),
  rest('PUT', '/api/org/preferences', `mutation UpdateOrgPreferences($org: ID!, $input: PreferencesInput!) {
    organizationPreferencesUpdate(id: $org, input: $input, replace: true) { userErrors { code message } } }`, {
    body: 'input', currentOrg: ['org'], shape: PREFERENCES_UPDATED,
    doc: 'Replaces the preferences of the org the request acts in, as `PUT /api/org/preferences`. Org Admins (orgs.preferences:write).',
  }),
  rest('PATCH', '/api/org/preferences', `mutation PatchOrgPreferences($org: ID!, $input: PreferencesInput!) {
    organizationPreferencesUpdate(id: $org, input: $input) { userErrors { code message } } }`, {
    body: 'input', currentOrg: ['org'], shape: PREFERENCES_UPDATED,
    doc: 'Changes some of the preferences of the org the request acts in, as `PATCH /api/org/preferences`. Org Admins (orgs.preferences:write).',
  }),

  // Anything else under /api is unknown to signed-in callers (as the original, credentials come first)
  endpoint('ANY', '/api/*', signedIn, 'not-found'),
];

let operations: Map<RestRoute, RestOperation> | null = null;

/**
 * Every REST row's operation, prepared together when first asked for (the front door asks at
 * start-up, so a row whose answer or door rule cannot be read fails start-up naming itself; each
 * is validated before it compiles, and the suite validates them all).
 */
export function restOperations(): Map<RestRoute, RestOperation> {
  if (!operations) {
    const rows = ROUTES.filter((route): route is RestRoute => route.kind === 'rest');
    const checked = prepareRestOperations(getSchema(), rows.map(restSource), FRAGMENTS);
    operations = new Map(rows.map((row, i) => [row, checked[i]!]));
  }
  return operations;
}

/** What the REST layer checks and compiles of a row. */
export function restSource(row: RestRoute): RestSource {
  // A membership on a path without `:orgId` names the org the request acts in, as `currentOrg` does.
  const currentOrg = row.membership && !row.path.includes(':orgId') ? [...(row.currentOrg ?? []), row.membership] : row.currentOrg;
  return { source: row.document, at: row.at, currentOrg, gate: row.gate, shape: row.shape };
}

export function restOperation(row: RestRoute): RestOperation {
  const op = restOperations().get(row);
  if (!op) throw new Error(`${row.method} ${row.path} is not a row of the route table`);
  return op;
}
