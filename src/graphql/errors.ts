import { GraphQLError } from 'graphql';
import { DomainError } from '../services/errors.ts';
import { databaseError } from '../db/errors.ts';

/**
 * Domain errors become GraphQL errors with `extensions.code` and `extensions.http.status` (yoga sets
 * the response status from it); anything unexpected is masked so no internals leak.
 */
export function maskError(error: unknown, message: string): Error {
  const thrown = error instanceof GraphQLError ? error.originalError : error;
  // PostgreSQL down (503) or refusing what the input asked it to store (400): the client's to know.
  const original = databaseError(thrown) ?? thrown;
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
