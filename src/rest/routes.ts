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
}

const route = (method: RouteSpec['method'], path: string, operation: string, options: Partial<Pick<RouteSpec, 'access' | 'body'>> = {}): RouteSpec =>
  ({ method, path, operation, access: options.access ?? 'signed-in', body: options.body });

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

  // Tokens
  route('POST', '/api/auth/keys', 'CreateApiKey', { body: 'input' }),
];
