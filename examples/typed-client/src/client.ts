import { graphql } from './gql/index.ts';
import type { DataSourcesQuery as DataSourcesResult, TypedDocumentString } from './gql/graphql.ts';

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
  /** The server's base URL, e.g. `http://localhost:3000`; for a page served beside the server, `location.origin`. */
  url: string;
  /** A full Authorization header value: `Bearer <service account token>` or `Basic <base64>`. */
  authorization: string;
  /**
   * Send each document's hash instead of its text (`documentId`), for servers that run only
   * trusted documents (`[graphql] trusted_documents`, fed with src/gql/persisted-documents.json).
   */
  persisted?: boolean;
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
      body: requestBody(options, document, variables),
    });
    const body = (await response.json()) as { data?: unknown; errors?: GraphQLRequestError['errors'] };
    if (!response.ok || body.errors?.length || body.data == null) throw new GraphQLRequestError(response.status, body.errors ?? []);
    return body.data as never;
  };
}

function requestBody(options: ClientOptions, document: { __meta__?: Record<string, unknown> }, variables: unknown): string {
  const hash = (document.__meta__ as { hash?: string } | undefined)?.hash;
  if (options.persisted && hash) return JSON.stringify({ documentId: hash, variables });
  return JSON.stringify({ query: document.toString(), variables });
}

export interface SubscriptionHandlers<R> {
  /** The server accepted the subscription: changes from now on will arrive. */
  open?(): void;
  next(data: R): void;
  /** The stream could not open, or ended with an error (then it is over). */
  error?(error: GraphQLRequestError): void;
  /** The server ended the stream without an error. */
  complete?(): void;
}

/**
 * Runs a subscription over Server-Sent Events (the graphql-sse protocol's distinct connections
 * mode: one POST per subscription, `event: next` per result, `event: complete` at the end), typed
 * by its document like any other call. Returns the function that stops it.
 */
export function subscribe<R, V>(options: ClientOptions, document: TypedDocumentString<R, V>, variables: V, handlers: SubscriptionHandlers<R>): () => void {
  const abort = new AbortController();
  const run = async () => {
    const response = await fetch(new URL('/graphql', options.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: options.authorization },
      body: requestBody(options, document, variables),
      signal: abort.signal,
    });
    if (!response.ok || !response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const body = (await response.json().catch(() => ({}))) as { errors?: GraphQLRequestError['errors'] };
      throw new GraphQLRequestError(response.status, body.errors ?? []);
    }
    handlers.open?.();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return handlers.complete?.();
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: ?(.*)$/m.exec(message)?.[1];
        const data = message.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n');
        if (event === 'complete') {
          abort.abort();
          return handlers.complete?.();
        }
        if (event !== 'next' || !data) continue; // `:` lines are keep-alive comments
        const result = JSON.parse(data) as { data?: R | null; errors?: GraphQLRequestError['errors'] };
        if (result.errors?.length || result.data == null) {
          abort.abort();
          return handlers.error?.(new GraphQLRequestError(response.status, result.errors ?? []));
        }
        handlers.next(result.data);
      }
    }
  };
  run().catch((error: unknown) => {
    if (abort.signal.aborted) return;
    handlers.error?.(error instanceof GraphQLRequestError ? error : new GraphQLRequestError(0, [{ message: String(error) }]));
  });
  return () => abort.abort();
}

export const DataSourcesQuery = graphql(`
  query DataSources($first: Int, $after: String) {
    viewer {
      currentOrganization {
        dataSources(first: $first, after: $after) {
          totalCount
          pageInfo { hasNextPage endCursor }
          nodes { id databaseId uid name type url isDefault jsonData }
        }
      }
    }
  }
`);

/** The graph's mutations answer the changed node, or `userErrors` (REST's 4xx, word for word) and a null node. */
export const CreateDataSourceMutation = graphql(`
  mutation CreateDataSource($input: CreateDataSourceInput!) {
    dataSourceCreate(input: $input) {
      dataSource { id databaseId uid name type url }
      userErrors { code message }
    }
  }
`);

type DataSourcePage = NonNullable<NonNullable<NonNullable<DataSourcesResult['viewer']>['currentOrganization']>['dataSources']>;

/** The caller's org's data sources, fully typed from the server's schema, one page after another. */
export async function listDataSources(client: Client): Promise<DataSourcePage['nodes']> {
  const all: DataSourcePage['nodes'] = [];
  let after: string | null = null;
  for (;;) {
    const result: DataSourcesResult = await client(DataSourcesQuery, { first: 1000, after });
    const page: DataSourcePage | null | undefined = result.viewer?.currentOrganization?.dataSources;
    if (!page) return all;
    all.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) return all;
    after = page.pageInfo.endCursor ?? null;
  }
}

export const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      id
      login
      name
      isServiceAdmin
      ... on User { email }
      currentOrganization { databaseId }
      organizations { edges { role node { databaseId name } } }
    }
  }
`);

export const OrganizationMembersQuery = graphql(`
  query OrganizationMembers($orgId: ID!) {
    node(id: $orgId) {
      ... on Organization { members { nodes { id userId login role lastSeenAtAge } } }
    }
  }
`);

/** Who is calling (a user, or a token's service account) with its orgs and its role in each. */
export async function whoAmI(client: Client) {
  const { viewer } = await client(ViewerQuery);
  if (!viewer) return null;
  const { organizations, currentOrganization, ...rest } = viewer;
  return {
    ...rest,
    orgId: currentOrganization?.databaseId ?? null,
    organizations: organizations?.edges.map((e) => ({ orgId: e.node.databaseId, name: e.node.name, role: e.role })) ?? [],
  };
}

