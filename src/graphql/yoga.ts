import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Principal } from '../auth/principal.ts';
import type { Logger } from '../logging/logger.ts';
import type { Services } from '../services/index.ts';
import { DomainError } from '../services/errors.ts';
import type { GraphQLContext } from './context.ts';
import { useJsonErrorBodies } from './error-bodies.ts';
import { maskError } from './errors.ts';
import { useCompiledExecution } from './compiled-execution.ts';
import { CSRF_HEADER, protectionPlugins } from './protection.ts';
import { getSchema } from './schema/index.ts';

interface ServerContext {
  req: IncomingMessage;
  res: ServerResponse;
}

/**
 * Who each GraphQL request authenticated as, for its log line and metrics: yoga authenticates
 * inside its context factory and hands nothing back. Keyed by the request, so nothing outlives it.
 */
const principals = new WeakMap<IncomingMessage, Principal>();

export function graphQLPrincipalOf(req: IncomingMessage): Principal | null {
  return principals.get(req) ?? null;
}

/** `/graphql`: GraphiQL on GET from a browser, queries and mutations over GET/POST. */
export function createGraphQLHandler(services: Services, log: Logger): YogaServerInstance<ServerContext, GraphQLContext> {
  const config = services.settings.graphql;
  return createYoga<ServerContext, GraphQLContext>({
    schema: getSchema(),
    graphqlEndpoint: '/graphql',
    graphiql: config.graphiql
      ? {
          title: 'dashgate GraphQL',
          // Queries go out as GET, which CSRF prevention accepts only with its header.
          useGETForQueries: true,
          additionalHeaders: config.csrfPrevention ? { [CSRF_HEADER]: '1' } : {},
        }
      : false,
    // GraphiQL served from the package itself, not a CDN: it works in closed networks too.
    renderGraphiQL,
    landingPage: false,
    // Yoga's default reflects any Origin and allows credentials: any site could then read answers
    // made with the Basic credentials a browser holds for this server. Same-origin only, as REST.
    cors: false,
    // src/http/server.ts reads the body under [server] request_body_limit_bytes before yoga sees it;
    // yoga's own limit would only stream it through a second, costlier check.
    maxRequestBodySize: false,
    logging: false,
    plugins: [...protectionPlugins(config), useJsonErrorBodies(), useCompiledExecution(onCompiled(log))],
    maskedErrors: {
      // With mask_errors off (development), unexpected errors keep their own message.
      maskError: (error, message) => maskError(error, config.maskErrors ? message : originalMessage(error) ?? message),
    },
    context: async ({ req }) => {
      const em = services.orm.em.fork();
      let principal = null;
      try {
        principal = await services.authenticator.authenticate(em, {
          authorization: req.headers.authorization,
          orgIdHeader: header(req, 'x-grafana-org-id'),
          ip: req.socket.remoteAddress ?? '',
        });
      } catch (error) {
        // Bad credentials fail the whole operation, as they do on REST.
        if (error instanceof DomainError) throw maskError(error, error.message);
        throw error;
      }
      if (principal) principals.set(req, principal);
      return { em, principal, services };
    },
  });
}

function onCompiled(log: Logger) {
  return (operationName: string | null, compiled: boolean) =>
    log.debug({ operationName }, compiled ? 'GraphQL operation compiled' : 'GraphQL operation not compilable, left to the interpreter');
}

function originalMessage(error: unknown): string | undefined {
  const original = error instanceof Error && 'originalError' in error && error.originalError instanceof Error ? error.originalError : error;
  return original instanceof Error ? original.message : undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
