import { GraphQLError } from 'graphql';
import { DomainError } from '../services/errors.ts';

/**
 * Domain errors become GraphQL errors with `extensions.code` and `extensions.http.status` (yoga sets
 * the response status from it); anything unexpected is masked so no internals leak.
 */
export function maskError(error: unknown, message: string): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof DomainError) {
    return new GraphQLError(original.message, {
      nodes: error instanceof GraphQLError ? error.nodes : undefined,
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: original.code, http: { status: original.status } },
    });
  }
  if (error instanceof GraphQLError && !error.originalError) return error; // parse/validation errors are the client's
  if (original instanceof GraphQLError) return original;
  return new GraphQLError(message, {
    path: error instanceof GraphQLError ? error.path : undefined,
    extensions: { code: 'INTERNAL_SERVER_ERROR', http: { status: 500 } },
  });
}
