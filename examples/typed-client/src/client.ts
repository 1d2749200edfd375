import { graphql } from './gql/index.ts';
import type { TypedDocumentString } from './gql/graphql.ts';

/** What the server said when an operation failed; `status` is the HTTP status. */
export class GraphQLRequestError extends Error {
  readonly status: number;
  readonly errors: ReadonlyArray<{ message: string; extensions?: { code?: string } }>;

  constructor(status: number, errors: GraphQLRequestError['errors']) {
    super(errors.map((e) => e.message).join('; ') || `HTTP ${status}`);
    this.name = 'GraphQLRequestError';
    this.status = status;
    this.errors = errors;
  }
}

export interface ClientOptions {
  /** The server's base URL, e.g. `http://localhost:3000`. */
  url: string;
  /** A full Authorization header value: `Bearer <service account token>` or `Basic <base64>`. */
  authorization: string;
}

/** Variables are required exactly when the operation declares some. */
type VariablesArgument<V> = [V] extends [Record<string, never>] ? [] : [variables: V];

export type Client = <R, V>(document: TypedDocumentString<R, V>, ...variables: VariablesArgument<V>) => Promise<R>;

/** A typed `fetch` wrapper: the document decides the result type and the variables' type. */
export function createClient(options: ClientOptions): Client {
  const endpoint = new URL('/graphql', options.url);
  return async (document, ...[variables]) => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        authorization: options.authorization,
      },
      body: JSON.stringify({ query: document.toString(), variables }),
    });
    const body = (await response.json()) as { data?: unknown; errors?: GraphQLRequestError['errors'] };
    if (!response.ok || body.errors?.length || body.data == null) throw new GraphQLRequestError(response.status, body.errors ?? []);
    return body.data as never;
  };
}

export const DataSourcesQuery = graphql(`
  query DataSources {
    dataSources { id uid name type url isDefault jsonData }
  }
`);

export const CreateDataSourceMutation = graphql(`
  mutation CreateDataSource($input: CreateDataSourceInput!) {
    createDataSource(input: $input) { id message datasource { uid name type url } }
  }
`);

/** The caller's org's data sources, fully typed from the server's schema. */
export async function listDataSources(client: Client) {
  const { dataSources } = await client(DataSourcesQuery);
  return dataSources;
}
