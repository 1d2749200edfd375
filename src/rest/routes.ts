/**
 * THE route table: one line per documented REST path. Each names a GraphQL operation in
 * schema/rest-operations.graphql. Path parameters become the operation's variables of the same
 * name (`:id` is parsed as an integer, 400 "id is invalid" otherwise); a JSON body becomes `$input`
 * (`body: 'input'`) or is spread over the operation's variables (`body: 'variables'`).
 */
export type Access =
  /** Any authenticated caller; the resolvers check org roles. */
  | 'signed-in'
  /** Server administration: Basic authentication of a server admin only. */
  | 'server-admin';

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;
  operation: string;
  access: Access;
  body?: 'input' | 'variables';
  /** Success status when it is not 200. */
  status?: number;
}

const route = (method: RouteSpec['method'], path: string, operation: string, options: Partial<Pick<RouteSpec, 'access' | 'body' | 'status'>> = {}): RouteSpec =>
  ({ method, path, operation, access: options.access ?? 'signed-in', body: options.body, status: options.status });

const admin = { access: 'server-admin' } as const;

export const ROUTES: readonly RouteSpec[] = [
  // Data sources (spec 4.2, plus the uid forms of the original server)
  route('GET', '/api/datasources', 'ListDataSources'),
  route('POST', '/api/datasources', 'AddDataSource', { body: 'input' }),
  route('GET', '/api/datasources/:id', 'GetDataSourceById'),
  route('PUT', '/api/datasources/:id', 'UpdateDataSourceById', { body: 'input' }),
  route('DELETE', '/api/datasources/:id', 'DeleteDataSourceById'),
  route('GET', '/api/datasources/uid/:uid', 'GetDataSourceByUid'),
  route('PUT', '/api/datasources/uid/:uid', 'UpdateDataSourceByUid', { body: 'input' }),
  route('DELETE', '/api/datasources/uid/:uid', 'DeleteDataSourceByUid'),
  route('GET', '/api/datasources/name/:name', 'GetDataSourceByName'),
  route('DELETE', '/api/datasources/name/:name', 'DeleteDataSourceByName'),
  route('GET', '/api/datasources/id/:name', 'GetDataSourceIdByName'),

  // Server administration (spec 4.1): Basic authentication of a server admin only
  route('GET', '/api/admin/settings', 'AdminGetSettings', admin),
  route('GET', '/api/admin/stats', 'AdminGetStats', admin),
  route('POST', '/api/admin/users', 'AdminCreateUser', { ...admin, body: 'input' }),
  route('PUT', '/api/admin/users/:id/password', 'AdminUpdateUserPassword', { ...admin, body: 'variables' }),
  route('PUT', '/api/admin/users/:id/permissions', 'AdminUpdateUserPermissions', { ...admin, body: 'variables' }),
  route('DELETE', '/api/admin/users/:id', 'AdminDeleteUser', admin),
  route('POST', '/api/admin/pause-all-alerts', 'PauseAllAlerts', { ...admin, body: 'variables' }),

  // Tokens: legacy API keys and service accounts
  route('GET', '/api/auth/keys', 'ListApiKeys'),
  route('POST', '/api/auth/keys', 'CreateApiKey', { body: 'input' }),
  route('DELETE', '/api/auth/keys/:id', 'DeleteApiKey'),
  route('POST', '/api/serviceaccounts', 'CreateServiceAccount', { body: 'input', status: 201 }),
  route('GET', '/api/serviceaccounts/search', 'SearchServiceAccounts'),
  route('GET', '/api/serviceaccounts/:id', 'GetServiceAccount'),
  route('DELETE', '/api/serviceaccounts/:id', 'DeleteServiceAccount'),
  route('GET', '/api/serviceaccounts/:serviceAccountId/tokens', 'ListServiceAccountTokens'),
  route('POST', '/api/serviceaccounts/:serviceAccountId/tokens', 'CreateServiceAccountToken', { body: 'input' }),
  route('DELETE', '/api/serviceaccounts/:serviceAccountId/tokens/:tokenId', 'DeleteServiceAccountToken'),
];
