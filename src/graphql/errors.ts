import { GraphQLError } from 'graphql';
import { renderError } from '../errors/render.ts';

/**
 * Errors become GraphQL errors with `extensions.code` and `extensions.http.status` (yoga sets the
 * response status from it), through the one renderer; anything unexpected is masked so no
 * internals leak.
 */
export function maskError(error: unknown, message: string): Error {
  const thrown = error instanceof GraphQLError ? error.originalError : error;
  if (error instanceof GraphQLError && !thrown) return error; // parse/validation errors are the client's
  if (thrown instanceof GraphQLError) return thrown;
  const rendered = renderError(thrown);
  const location = error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {};
  if (rendered.unexpected !== undefined) {
    return new GraphQLError(message, { path: location.path, extensions: { code: rendered.code, http: { status: 500 } } });
  }
  const http = rendered.headers ? { status: rendered.status, headers: rendered.headers } : { status: rendered.status };
  return new GraphQLError(rendered.message, { ...location, extensions: { code: rendered.code, http } });
}
