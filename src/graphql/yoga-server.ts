import type { IncomingMessage } from 'node:http';
import { createServerAdapter, sendNodeResponse } from '@whatwg-node/server';
import { YogaServer, type Plugin } from 'graphql-yoga';
import type { RequestContext } from '../context.ts';
import type { Logger } from '../logging/logger.ts';
import type { Settings } from '../config/settings.ts';
import { useJsonErrorBodies } from './error-bodies.ts';
import { useRequestErrorStatus } from './request-errors.ts';
import { maskError, useMaskedErrorLog } from './errors.ts';
import { useCompiledExecution } from './compiled-execution.ts';
import { useRequestedNodesLimit } from './requested-nodes.ts';
import { CSRF_HEADER, protectionPlugins } from './protection.ts';
import { getPublicSchema } from './schema/index.ts';
import { trustedDocumentsPlugins } from './trusted-documents-plugins.ts';
import { useValidationCache } from './validation-cache.ts';
import { useOperationTracing } from './tracing.ts';
import { DirectPath, directParams, yogaPlugins } from './direct-path.ts';
import type { GraphQLHandler, GraphQLHandlerOptions } from './handler.ts';

/** What GraphiQL opens on: the graph's three ways in (the caller, a connection, a node by id), ready to run. */
export const GRAPHIQL_EXAMPLE = `# Who is calling, and the org the request acts in with a page of its data sources.
# Send credentials in Headers: {"Authorization": "Basic ..."} (or "Bearer <token>").
query Overview {
  viewer {
    id
    login
    currentOrganization {
      name
      dataSources(first: 10) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { id databaseId name type url }
      }
    }
  }
}

# Any object again by its global id (an \`id\` from above).
query Node($id: ID!) {
  node(id: $id) {
    id
    ... on DataSource { name health { status message } }
  }
}
`;

/** `/graphql`: GraphiQL on GET from a browser, queries and mutations over GET/POST, subscriptions over Server-Sent Events. */
export function createYogaHandler(settings: Settings, log: Logger, options: GraphQLHandlerOptions = {}): GraphQLHandler & { servesDirectly: boolean } {
  const config = settings.graphql;
  const trusted = options.trustedDocuments ? trustedDocumentsPlugins(config.trustedDocuments, options.trustedDocuments) : [];
  const plugins: Plugin[] = [...trusted, ...protectionPlugins(config), useMaskedErrorLog(log), useJsonErrorBodies(), useRequestErrorStatus(), useRequestedNodesLimit(), useCompiledExecution(onCompiled(log)), useValidationCache()];
  // After compiled execution, whose way of running the operation it wraps.
  if (options.tracing) plugins.push(useOperationTracing(options.tracing));
  const endpoint = '/graphql';
  const server = new YogaServer<RequestContext, Record<string, never>>({
    schema: getPublicSchema(),
    graphqlEndpoint: endpoint,
    graphiql: config.graphiql
      ? {
          title: 'dashgate GraphQL',
          defaultQuery: GRAPHIQL_EXAMPLE,
          // Queries go out as GET, which CSRF prevention accepts only with its header.
          useGETForQueries: true,
          additionalHeaders: config.csrfPrevention ? { [CSRF_HEADER]: '1' } : {},
        }
      : false,
    // GraphiQL served from the package itself, not a CDN: it works in closed networks too. Loaded
    // when a browser first asks for it: its bundle is a third of the server's idle memory.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    landingPage: false,
    // Yoga's default reflects any Origin and allows credentials: any site could then read answers
    // made with the Basic credentials a browser holds for this server. Same-origin only, as REST.
    cors: false,
    // The front door reads the body under [server] request_body_limit_bytes before yoga sees it;
    // yoga's own limit would only stream it through a second, costlier check.
    maxRequestBodySize: false,
    logging: false,
    // The persisted-documents convention sends a trusted document's hash as `documentId`.
    extraParamNames: trusted.length > 0 ? ['documentId'] : [],
    plugins,
    // Parsed documents are cached by yoga; their validation results by useValidationCache.
    parserAndValidationCache: { validationCache: false },
    maskedErrors: {
      // With mask_errors off (development), unexpected errors keep their own message.
      maskError: (error, message) => maskError(error, config.maskErrors ? message : originalMessage(error) ?? message),
    },
  });
  // What createYoga does: yoga behind its Fetch API server adapter. Built here so that the direct
  // path can reach the server's own stages, which the adapter's `handle` would shadow.
  const yoga = createServerAdapter<RequestContext, typeof server>(server, { fetchAPI: server.fetchAPI, plugins: yogaPlugins(server) as never });
  // Taken once: the adapter is a Proxy that binds the method afresh on every read.
  const handleNodeRequest = yoga.handleNodeRequestAndResponse;
  const direct = options.directPath === false ? null : DirectPath.over(server, plugins, yoga.waitUntil);
  // The request context is yoga's server context as it is (not a copy), and so every resolver's.
  const handler: GraphQLHandler = async (ctx, req, res, body) => {
    const params = direct && directParams(req.method, req.url, req.headers, body, endpoint, config.csrfPrevention);
    if (params && (await direct.serve(ctx, req, res, body!, params))) return;
    // The adapter reads a body set on the request instead of the (already read) stream.
    if (body) (req as IncomingMessage & { body?: unknown }).body = new OneChunk(body);
    const response = await handleNodeRequest(req, res, ctx as never);
    // One writeHead with the answer's own header object where it has one (the adapter's default, and
    // what yoga's own listener does); it falls back to copying the headers one by one otherwise.
    await sendNodeResponse(response, res, req, true);
  };
  return Object.assign(handler, { servesDirectly: direct !== null });
}

const END: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * A body already in memory as an async iterable of its one chunk, which yoga's server adapter takes
 * as the request body when it has own keys (`Object.keys` of a Buffer would list every byte).
 * Written out rather than as an async generator, whose every step resumes the generator and awaits
 * the yielded value: about 1 µs less per request to read.
 */
class OneChunk implements AsyncIterable<Buffer> {
  /** An own key, which the adapter looks for. */
  readonly bytes: number;
  readonly #chunk: Buffer;

  constructor(chunk: Buffer) {
    this.#chunk = chunk;
    this.bytes = chunk.length;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    let chunk: Buffer | null = this.#chunk;
    return {
      next(): Promise<IteratorResult<Buffer>> {
        if (chunk === null) return Promise.resolve(END);
        const value = chunk;
        chunk = null;
        return Promise.resolve({ done: false, value });
      },
    };
  }
}

function onCompiled(log: Logger) {
  return (operationName: string | null, compiled: boolean) =>
    log.debug({ operationName }, compiled ? 'GraphQL operation compiled' : 'GraphQL operation not compilable, left to the interpreter');
}

function originalMessage(error: unknown): string | undefined {
  const original = error instanceof Error && 'originalError' in error && error.originalError instanceof Error ? error.originalError : error;
  return original instanceof Error ? original.message : undefined;
}
