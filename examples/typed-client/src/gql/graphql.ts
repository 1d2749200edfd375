/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** A new data source. Without a name, the first free of `<type>`, `<type>-1`, ... is used. */
export type CreateDataSourceInput = {
  /** `proxy` (calls go through the server) or `direct`. */
  access: string;
  /** Whether to send Basic authentication to the store. */
  basicAuth?: boolean | null | undefined;
  /** User name of Basic authentication. */
  basicAuthUser?: string | null | undefined;
  /** Database name, for kinds that take one. */
  database?: string | null | undefined;
  /** The org's first data source is the default whatever this says. */
  isDefault?: boolean | null | undefined;
  /** Kind-specific options. */
  jsonData?: Record<string, unknown> | null | undefined;
  /** Unique in the org; used in by-name paths. */
  name?: string | null | undefined;
  /** Secrets (string values) to store encrypted; a key sent empty is removed, keys not sent are kept. */
  secureJsonData?: Record<string, unknown> | null | undefined;
  /** Kind of store, e.g. `prometheus`, `loki`, `graphite`, `elasticsearch`. */
  type: string;
  /** Up to 40 of `[a-zA-Z0-9-_]`; generated when empty. */
  uid?: string | null | undefined;
  /** Address of the store; `http://` is assumed when no scheme is given. */
  url?: string | null | undefined;
  /** User name sent to the store, for kinds that take one. */
  user?: string | null | undefined;
  /** Whether browsers send cookies with direct calls. */
  withCredentials?: boolean | null | undefined;
};

/** The type of a frame field's values (the original's `FieldType`). */
export type DataFieldType =
  /** True or false. */
  | 'BOOLEAN'
  /** Indexes into `config.type.enum.text`. */
  | 'ENUM'
  /** Integers and floats. */
  | 'NUMBER'
  /** Any JSON value. */
  | 'OTHER'
  /** Text. */
  | 'STRING'
  /** Epoch milliseconds (see `nanos` for finer parts). */
  | 'TIME';

/** What happened to a data source. */
export type DataSourceChangeKind =
  /** It was added. */
  | 'CREATED'
  /** It was removed; `dataSource` is null. */
  | 'DELETED'
  /** Its fields changed, through any API, provisioning or SQL. */
  | 'UPDATED';

/** How a refId's answer changed since the subscriber's previous event. */
export type LiveQueryDeltaKind =
  /** Same frames, their windows moved: `appends` drops rows from the start of some frames and adds rows at their end. */
  | 'APPEND'
  /** The refId no longer answers. */
  | 'REMOVE'
  /** The whole answer follows (`status`, `error`, `errorSource`, `frames`): the first event, an error, or a change other than rows appended. */
  | 'REPLACE';

/** The whole data source: omitted flags become false and `user`, `database` and `jsonData` are cleared (`jsonData` to `{}`); an empty `url`, `basicAuthUser` or `uid` keeps the stored value. */
export type UpdateDataSourceInput = {
  /** `proxy` (calls go through the server) or `direct`. */
  access: string;
  /** Whether to send Basic authentication to the store. */
  basicAuth?: boolean | null | undefined;
  /** User name of Basic authentication. */
  basicAuthUser?: string | null | undefined;
  /** Database name, for kinds that take one. */
  database?: string | null | undefined;
  /** Whether it becomes the org's default (another default stops being one). */
  isDefault?: boolean | null | undefined;
  /** Kind-specific options. */
  jsonData?: Record<string, unknown> | null | undefined;
  /** Unique in the org; used in by-name paths. */
  name: string;
  /** Secrets (string values) to store encrypted; a key sent empty is removed, keys not sent are kept. */
  secureJsonData?: Record<string, unknown> | null | undefined;
  /** Kind of store, e.g. `prometheus`, `loki`, `graphite`, `elasticsearch`. */
  type: string;
  /** A new uid, up to 40 of `[a-zA-Z0-9-_]`; empty keeps it. */
  uid?: string | null | undefined;
  /** Address of the store; `http://` is assumed when no scheme is given. */
  url?: string | null | undefined;
  /** User name sent to the store, for kinds that take one. */
  user?: string | null | undefined;
  /** The version read; a stale one is refused. 0 or absent skips the check. */
  version?: number | null | undefined;
  /** Whether browsers send cookies with direct calls. */
  withCredentials?: boolean | null | undefined;
};

export type DataSourcesQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type DataSourcesQuery = { viewer:
    | { currentOrganization: { dataSources: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ id: string, databaseId: number, uid: string, name: string, type: string, url: string, isDefault: boolean, jsonData: Record<string, unknown> }> } | null } | null }
    | { currentOrganization: { dataSources: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ id: string, databaseId: number, uid: string, name: string, type: string, url: string, isDefault: boolean, jsonData: Record<string, unknown> }> } | null } | null }
   | null };

export type CreateDataSourceMutationVariables = Exact<{
  input: CreateDataSourceInput;
}>;


export type CreateDataSourceMutation = { dataSourceCreate: { dataSource: { id: string, databaseId: number, uid: string, name: string, type: string, url: string } | null, userErrors: Array<{ code: string, message: string }> } };

export type ViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ViewerQuery = { viewer:
    | { id: string, login: string, name: string, isServiceAdmin: boolean, currentOrganization: { databaseId: number } | null, organizations: { edges: Array<{ role: string, node: { databaseId: number, name: string } }> } | null }
    | { email: string, id: string, login: string, name: string, isServiceAdmin: boolean, currentOrganization: { databaseId: number } | null, organizations: { edges: Array<{ role: string, node: { databaseId: number, name: string } }> } | null }
   | null };

export type OrganizationMembersQueryVariables = Exact<{
  orgId: string | number;
}>;


export type OrganizationMembersQuery = { node:
    | { members: { nodes: Array<{ id: string, userId: number, login: string, role: string, lastSeenAtAge: string }> } | null }
    | Record<PropertyKey, never>
   | null };

export type DataSourceListQueryVariables = Exact<{
  first: number;
  after?: string | null | undefined;
}>;


export type DataSourceListQuery = { viewer:
    | { currentOrganization: { dataSources: { pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ id: string, uid: string, name: string, type: string, access: string, url: string, isDefault: boolean, version: number, basicAuth: boolean, basicAuthUser: string, withCredentials: boolean, user: string, database: string, jsonData: Record<string, unknown>, readOnly: boolean }> } | null } | null }
    | { currentOrganization: { dataSources: { pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ id: string, uid: string, name: string, type: string, access: string, url: string, isDefault: boolean, version: number, basicAuth: boolean, basicAuthUser: string, withCredentials: boolean, user: string, database: string, jsonData: Record<string, unknown>, readOnly: boolean }> } | null } | null }
   | null };

export type UpdateDataSourceMutationVariables = Exact<{
  id: string | number;
  input: UpdateDataSourceInput;
}>;


export type UpdateDataSourceMutation = { dataSourceUpdate: { dataSource: { id: string, name: string, url: string, version: number } | null, userErrors: Array<{ code: string, message: string }> } };

export type DataSourceChangedSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type DataSourceChangedSubscription = { dataSourceChanged: { kind: DataSourceChangeKind, dataSourceId: string, dataSource: { id: string, uid: string, name: string, type: string, access: string, url: string, isDefault: boolean, version: number, basicAuth: boolean, basicAuthUser: string, withCredentials: boolean, user: string, database: string, jsonData: Record<string, unknown>, readOnly: boolean } | null } };

export type AlertsPausedSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type AlertsPausedSubscription = { alertsPausedChanged: { paused: boolean } };

export type SeriesQueryVariables = Exact<{
  id: string | number;
  from: string;
  to: string;
  queries: Array<Record<string, unknown>> | Record<string, unknown>;
}>;


export type SeriesQuery = { node:
    | { name: string, query: { status: number, results: Array<{ refId: string, error: string | null, frames: Array<{ fields: Array<{ name: string, type: DataFieldType, displayName: string | null, numbers: Array<number | null> | null }> }> }> } }
    | Record<PropertyKey, never>
   | null };

export type LiveQuerySubscriptionVariables = Exact<{
  queries: Array<Record<string, unknown>> | Record<string, unknown>;
  from: string;
  to: string;
  refresh: string;
}>;


export type LiveQuerySubscription = { liveQuery: { refreshedAt: number, viewers: number, results: Array<{ refId: string, kind: LiveQueryDeltaKind, status: number | null, error: string | null, errorSource: string | null, frames: Array<{ refId: string | null, length: number, fields: Array<{ name: string, type: DataFieldType, displayName: string | null, values: Array<unknown>, nanos: Array<number> | null }> }> | null, appends: Array<{ frame: number, drop: number, values: unknown, nanos: unknown }> | null }> } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const DataSourcesDocument = new TypedDocumentString(`
    query DataSources($first: Int, $after: String) {
  viewer {
    currentOrganization {
      dataSources(first: $first, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          id
          databaseId
          uid
          name
          type
          url
          isDefault
          jsonData
        }
      }
    }
  }
}
    `, {"hash":"sha256:26ab0888c807192f687601b994de96b3da2523e4e92e3746ddad05766bed3cd8"}) as unknown as TypedDocumentString<DataSourcesQuery, DataSourcesQueryVariables>;
export const CreateDataSourceDocument = new TypedDocumentString(`
    mutation CreateDataSource($input: CreateDataSourceInput!) {
  dataSourceCreate(input: $input) {
    dataSource {
      id
      databaseId
      uid
      name
      type
      url
    }
    userErrors {
      code
      message
    }
  }
}
    `, {"hash":"sha256:85c04aa5736a56243ec18474828a303253810a08f129cbcb8329a7c22331025e"}) as unknown as TypedDocumentString<CreateDataSourceMutation, CreateDataSourceMutationVariables>;
export const ViewerDocument = new TypedDocumentString(`
    query Viewer {
  viewer {
    id
    login
    name
    isServiceAdmin
    ... on User {
      email
    }
    currentOrganization {
      databaseId
    }
    organizations {
      edges {
        role
        node {
          databaseId
          name
        }
      }
    }
  }
}
    `, {"hash":"sha256:056060ac5dbb8b5a3e23f073f5bd476f98cf825d2420021c0185b5181ae32b63"}) as unknown as TypedDocumentString<ViewerQuery, ViewerQueryVariables>;
export const OrganizationMembersDocument = new TypedDocumentString(`
    query OrganizationMembers($orgId: ID!) {
  node(id: $orgId) {
    ... on Organization {
      members {
        nodes {
          id
          userId
          login
          role
          lastSeenAtAge
        }
      }
    }
  }
}
    `, {"hash":"sha256:d64f49d93a46c0b0c2539d3350fbc56ebf6c514a508fc3cc5d101ff92aeb8530"}) as unknown as TypedDocumentString<OrganizationMembersQuery, OrganizationMembersQueryVariables>;
export const DataSourceListDocument = new TypedDocumentString(`
    query DataSourceList($first: Int!, $after: String) {
  viewer {
    currentOrganization {
      dataSources(first: $first, after: $after) {
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          id
          uid
          name
          type
          access
          url
          isDefault
          version
          basicAuth
          basicAuthUser
          withCredentials
          user
          database
          jsonData
          readOnly
        }
      }
    }
  }
}
    `, {"hash":"sha256:fd1dc7d906f7f06d99886cd4cd6ddb8ce0a5e4ab6b7523f67a532acb11e6283d"}) as unknown as TypedDocumentString<DataSourceListQuery, DataSourceListQueryVariables>;
export const UpdateDataSourceDocument = new TypedDocumentString(`
    mutation UpdateDataSource($id: ID!, $input: UpdateDataSourceInput!) {
  dataSourceUpdate(id: $id, input: $input) {
    dataSource {
      id
      name
      url
      version
    }
    userErrors {
      code
      message
    }
  }
}
    `, {"hash":"sha256:f5059fd2a8efda67b8993ac8ad3844df59995b06baa79233f0f5092d0c650a1a"}) as unknown as TypedDocumentString<UpdateDataSourceMutation, UpdateDataSourceMutationVariables>;
export const DataSourceChangedDocument = new TypedDocumentString(`
    subscription DataSourceChanged {
  dataSourceChanged {
    kind
    dataSourceId
    dataSource {
      id
      uid
      name
      type
      access
      url
      isDefault
      version
      basicAuth
      basicAuthUser
      withCredentials
      user
      database
      jsonData
      readOnly
    }
  }
}
    `, {"hash":"sha256:df85f62ba019e99a254cdadb9f935a7945d70dac56ba8451df677b0e5058b3b6"}) as unknown as TypedDocumentString<DataSourceChangedSubscription, DataSourceChangedSubscriptionVariables>;
export const AlertsPausedDocument = new TypedDocumentString(`
    subscription AlertsPaused {
  alertsPausedChanged {
    paused
  }
}
    `, {"hash":"sha256:73b2a76020da209c9221198a97b620789da78cc0242332020d3df89096fa6aa0"}) as unknown as TypedDocumentString<AlertsPausedSubscription, AlertsPausedSubscriptionVariables>;
export const SeriesDocument = new TypedDocumentString(`
    query Series($id: ID!, $from: String!, $to: String!, $queries: [JSONObject!]!) {
  node(id: $id) {
    ... on DataSource {
      name
      query(from: $from, to: $to, queries: $queries) {
        status
        results {
          refId
          error
          frames {
            fields {
              name
              type
              displayName
              numbers
            }
          }
        }
      }
    }
  }
}
    `, {"hash":"sha256:844c8ee4a1e7f8502614de2a1e6003a4aafa455ee63be1b34ea189b794ca8c6d"}) as unknown as TypedDocumentString<SeriesQuery, SeriesQueryVariables>;
export const LiveQueryDocument = new TypedDocumentString(`
    subscription LiveQuery($queries: [JSONObject!]!, $from: String!, $to: String!, $refresh: String!) {
  liveQuery(queries: $queries, from: $from, to: $to, refresh: $refresh) {
    refreshedAt
    viewers
    results {
      refId
      kind
      status
      error
      errorSource
      frames {
        refId
        length
        fields {
          name
          type
          displayName
          values
          nanos
        }
      }
      appends {
        frame
        drop
        values
        nanos
      }
    }
  }
}
    `, {"hash":"sha256:f576ba88f0b4b62cb900f7542cf9280699b6ab7c9e08caad28f1403035d062cb"}) as unknown as TypedDocumentString<LiveQuerySubscription, LiveQuerySubscriptionVariables>;