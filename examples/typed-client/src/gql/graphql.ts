/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** A new data source. Without a name, the first free of `<type>`, `<type>-1`, ... is used. */
export type CreateDataSourceInput = {
  access: string;
  basicAuth?: boolean | null | undefined;
  /** @deprecated Use `secureJsonData.basicAuthPassword`. */
  basicAuthPassword?: string | null | undefined;
  basicAuthUser?: string | null | undefined;
  database?: string | null | undefined;
  /** The org's first data source is the default whatever this says. */
  isDefault?: boolean | null | undefined;
  jsonData?: Record<string, unknown> | null | undefined;
  name?: string | null | undefined;
  /** @deprecated Use `secureJsonData.password`. */
  password?: string | null | undefined;
  /** Secrets (string values) to store encrypted; a key sent empty is removed, keys not sent are kept. */
  secureJsonData?: Record<string, unknown> | null | undefined;
  type: string;
  /** Up to 40 of `[a-zA-Z0-9-_]`; generated when empty. */
  uid?: string | null | undefined;
  /** Address of the store; `http://` is assumed when no scheme is given. */
  url?: string | null | undefined;
  user?: string | null | undefined;
  withCredentials?: boolean | null | undefined;
};

export type DataSourcesQueryVariables = Exact<{ [key: string]: never; }>;


export type DataSourcesQuery = { dataSources: Array<{ id: number, uid: string, name: string, type: string, url: string, isDefault: boolean, jsonData: Record<string, unknown> | null }> };

export type CreateDataSourceMutationVariables = Exact<{
  input: CreateDataSourceInput;
}>;


export type CreateDataSourceMutation = { createDataSource: { id: number, message: string, datasource: { uid: string, name: string, type: string, url: string } } };

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
    query DataSources {
  dataSources {
    id
    uid
    name
    type
    url
    isDefault
    jsonData
  }
}
    `) as unknown as TypedDocumentString<DataSourcesQuery, DataSourcesQueryVariables>;
export const CreateDataSourceDocument = new TypedDocumentString(`
    mutation CreateDataSource($input: CreateDataSourceInput!) {
  createDataSource(input: $input) {
    id
    message
    datasource {
      uid
      name
      type
      url
    }
  }
}
    `) as unknown as TypedDocumentString<CreateDataSourceMutation, CreateDataSourceMutationVariables>;