import type { Logger } from '../logging/logger.ts';
import type { Settings } from '../config/settings.ts';
import type { GraphQLHandler, GraphQLHandlerOptions } from './handler.ts';

/**
 * `/graphql`, served by yoga (yoga-server.ts), which is loaded and built on the first request: it
 * and its plugins take a fifth of a second to load and a tenth of the server's idle memory, which
 * a server answering REST clients only never needs. The schema itself is built at start-up (REST
 * runs on it), so this first request pays for the HTTP layer only.
 */
export function createGraphQLHandler(settings: Settings, log: Logger, options: GraphQLHandlerOptions = {}): GraphQLHandler {
  let yoga: Promise<GraphQLHandler> | undefined;
  return async (ctx, req, res, body) => {
    yoga ??= import('./yoga-server.ts').then((module) => module.createYogaHandler(settings, log, options));
    return (await yoga)(ctx, req, res, body);
  };
}
