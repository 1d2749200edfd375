/* eslint-disable */
import * as types from './graphql.ts';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query DataSources($first: Int, $after: String) {\n    viewer {\n      currentOrganization {\n        dataSources(first: $first, after: $after) {\n          totalCount\n          pageInfo { hasNextPage endCursor }\n          nodes { id databaseId uid name type url isDefault jsonData }\n        }\n      }\n    }\n  }\n": typeof types.DataSourcesDocument,
    "\n  mutation CreateDataSource($input: CreateDataSourceInput!) {\n    dataSourceCreate(input: $input) {\n      dataSource { id databaseId uid name type url }\n      userErrors { code message }\n    }\n  }\n": typeof types.CreateDataSourceDocument,
    "\n  query Viewer {\n    viewer {\n      id\n      login\n      name\n      isServiceAdmin\n      ... on User { email }\n      currentOrganization { databaseId }\n      organizations { edges { role node { databaseId name } } }\n    }\n  }\n": typeof types.ViewerDocument,
    "\n  query OrganizationMembers($orgId: ID!) {\n    node(id: $orgId) {\n      ... on Organization { members { nodes { id userId login role lastSeenAtAge } } }\n    }\n  }\n": typeof types.OrganizationMembersDocument,
    "\n  query DataSourceList($first: Int!, $after: String) {\n    viewer {\n      currentOrganization {\n        dataSources(first: $first, after: $after) {\n          pageInfo { hasNextPage endCursor }\n          nodes { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }\n        }\n      }\n    }\n  }\n": typeof types.DataSourceListDocument,
    "\n  mutation UpdateDataSource($id: ID!, $input: UpdateDataSourceInput!) {\n    dataSourceUpdate(id: $id, input: $input) {\n      dataSource { id name url version }\n      userErrors { code message }\n    }\n  }\n": typeof types.UpdateDataSourceDocument,
    "\n  subscription DataSourceChanged {\n    dataSourceChanged {\n      kind\n      dataSourceId\n      dataSource { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }\n    }\n  }\n": typeof types.DataSourceChangedDocument,
    "\n  subscription AlertsPaused {\n    alertsPausedChanged { paused }\n  }\n": typeof types.AlertsPausedDocument,
    "\n  query Series($id: ID!, $from: String!, $to: String!, $queries: [JSONObject!]!) {\n    node(id: $id) {\n      ... on DataSource {\n        name\n        query(from: $from, to: $to, queries: $queries) {\n          status\n          results { refId error frames { fields { name type displayName numbers } } }\n        }\n      }\n    }\n  }\n": typeof types.SeriesDocument,
    "\n  subscription LiveQuery($queries: [JSONObject!]!, $from: String!, $to: String!, $refresh: String!) {\n    liveQuery(queries: $queries, from: $from, to: $to, refresh: $refresh) {\n      refreshedAt\n      viewers\n      results {\n        refId kind status error errorSource\n        frames { refId length fields { name type displayName values nanos } }\n        appends { frame drop values nanos }\n      }\n    }\n  }\n": typeof types.LiveQueryDocument,
};
const documents: Documents = {
    "\n  query DataSources($first: Int, $after: String) {\n    viewer {\n      currentOrganization {\n        dataSources(first: $first, after: $after) {\n          totalCount\n          pageInfo { hasNextPage endCursor }\n          nodes { id databaseId uid name type url isDefault jsonData }\n        }\n      }\n    }\n  }\n": types.DataSourcesDocument,
    "\n  mutation CreateDataSource($input: CreateDataSourceInput!) {\n    dataSourceCreate(input: $input) {\n      dataSource { id databaseId uid name type url }\n      userErrors { code message }\n    }\n  }\n": types.CreateDataSourceDocument,
    "\n  query Viewer {\n    viewer {\n      id\n      login\n      name\n      isServiceAdmin\n      ... on User { email }\n      currentOrganization { databaseId }\n      organizations { edges { role node { databaseId name } } }\n    }\n  }\n": types.ViewerDocument,
    "\n  query OrganizationMembers($orgId: ID!) {\n    node(id: $orgId) {\n      ... on Organization { members { nodes { id userId login role lastSeenAtAge } } }\n    }\n  }\n": types.OrganizationMembersDocument,
    "\n  query DataSourceList($first: Int!, $after: String) {\n    viewer {\n      currentOrganization {\n        dataSources(first: $first, after: $after) {\n          pageInfo { hasNextPage endCursor }\n          nodes { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }\n        }\n      }\n    }\n  }\n": types.DataSourceListDocument,
    "\n  mutation UpdateDataSource($id: ID!, $input: UpdateDataSourceInput!) {\n    dataSourceUpdate(id: $id, input: $input) {\n      dataSource { id name url version }\n      userErrors { code message }\n    }\n  }\n": types.UpdateDataSourceDocument,
    "\n  subscription DataSourceChanged {\n    dataSourceChanged {\n      kind\n      dataSourceId\n      dataSource { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }\n    }\n  }\n": types.DataSourceChangedDocument,
    "\n  subscription AlertsPaused {\n    alertsPausedChanged { paused }\n  }\n": types.AlertsPausedDocument,
    "\n  query Series($id: ID!, $from: String!, $to: String!, $queries: [JSONObject!]!) {\n    node(id: $id) {\n      ... on DataSource {\n        name\n        query(from: $from, to: $to, queries: $queries) {\n          status\n          results { refId error frames { fields { name type displayName numbers } } }\n        }\n      }\n    }\n  }\n": types.SeriesDocument,
    "\n  subscription LiveQuery($queries: [JSONObject!]!, $from: String!, $to: String!, $refresh: String!) {\n    liveQuery(queries: $queries, from: $from, to: $to, refresh: $refresh) {\n      refreshedAt\n      viewers\n      results {\n        refId kind status error errorSource\n        frames { refId length fields { name type displayName values nanos } }\n        appends { frame drop values nanos }\n      }\n    }\n  }\n": types.LiveQueryDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DataSources($first: Int, $after: String) {\n    viewer {\n      currentOrganization {\n        dataSources(first: $first, after: $after) {\n          totalCount\n          pageInfo { hasNextPage endCursor }\n          nodes { id databaseId uid name type url isDefault jsonData }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').DataSourcesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateDataSource($input: CreateDataSourceInput!) {\n    dataSourceCreate(input: $input) {\n      dataSource { id databaseId uid name type url }\n      userErrors { code message }\n    }\n  }\n"): typeof import('./graphql.ts').CreateDataSourceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer {\n      id\n      login\n      name\n      isServiceAdmin\n      ... on User { email }\n      currentOrganization { databaseId }\n      organizations { edges { role node { databaseId name } } }\n    }\n  }\n"): typeof import('./graphql.ts').ViewerDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationMembers($orgId: ID!) {\n    node(id: $orgId) {\n      ... on Organization { members { nodes { id userId login role lastSeenAtAge } } }\n    }\n  }\n"): typeof import('./graphql.ts').OrganizationMembersDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DataSourceList($first: Int!, $after: String) {\n    viewer {\n      currentOrganization {\n        dataSources(first: $first, after: $after) {\n          pageInfo { hasNextPage endCursor }\n          nodes { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').DataSourceListDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateDataSource($id: ID!, $input: UpdateDataSourceInput!) {\n    dataSourceUpdate(id: $id, input: $input) {\n      dataSource { id name url version }\n      userErrors { code message }\n    }\n  }\n"): typeof import('./graphql.ts').UpdateDataSourceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription DataSourceChanged {\n    dataSourceChanged {\n      kind\n      dataSourceId\n      dataSource { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }\n    }\n  }\n"): typeof import('./graphql.ts').DataSourceChangedDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription AlertsPaused {\n    alertsPausedChanged { paused }\n  }\n"): typeof import('./graphql.ts').AlertsPausedDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Series($id: ID!, $from: String!, $to: String!, $queries: [JSONObject!]!) {\n    node(id: $id) {\n      ... on DataSource {\n        name\n        query(from: $from, to: $to, queries: $queries) {\n          status\n          results { refId error frames { fields { name type displayName numbers } } }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').SeriesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription LiveQuery($queries: [JSONObject!]!, $from: String!, $to: String!, $refresh: String!) {\n    liveQuery(queries: $queries, from: $from, to: $to, refresh: $refresh) {\n      refreshedAt\n      viewers\n      results {\n        refId kind status error errorSource\n        frames { refId length fields { name type displayName values nanos } }\n        appends { frame drop values nanos }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').LiveQueryDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
