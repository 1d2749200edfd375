import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** `Variable "$name" ...`: how graphql-js words every variable coercion error. */
const VARIABLE = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)"/;

/** Longest message sent back for a request error. */
const MAX_MESSAGE = 500;

/**
 * A result without `data` is a request error (the GraphQL-over-HTTP spec's term); those whose
 * errors are graphql-js's variable coercion errors never started, because a variable was missing
 * or of the wrong type (`"abc"` for `Int!`, JSON nested too deep, ...). graphql-js gives those errors no code and yoga answers them with 200; here
 * each gets `extensions.code` `BAD_USER_INPUT` and `variable` (its name), and 400 for every client,
 * as parse and validation errors have (`application/graphql-response+json` requires it; plain JSON
 * clients get the same, as docs/graphql.md promises: errors set the status).
 */
export function markRequestErrors(result: ExecutionResult): ExecutionResult {
  if ('data' in result || !result.errors?.length) return result;
  const errors = result.errors.map((error) => {
    // Only the coercion's own errors: a resolver's (a subscription refused, say) has a path.
    const variable = VARIABLE.exec(error.message)?.[1];
    if (!variable || error.path || error.extensions?.code) return error;
    // graphql-js quotes the value refused whole: a megabyte string sent for an Int is not sent back.
    const message = error.message.length > MAX_MESSAGE ? `${error.message.slice(0, MAX_MESSAGE)}…` : error.message;
    return new GraphQLError(message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      // Its message already quotes the cause (the scalar's own refusal); kept, the error masking
      // would answer with the cause alone, without the variable.
      extensions: { ...error.extensions, code: 'BAD_USER_INPUT', variable, http: { status: 400 } },
    });
  });
  return { ...result, errors };
}

export function useRequestErrorStatus(): Plugin {
  const mark = ({ result, setResult }: { result: unknown; setResult: (next: ExecutionResult) => void }) => {
    // A stream (a subscription under way) is not a request error.
    if (result && typeof result === 'object' && !(Symbol.asyncIterator in result)) setResult(markRequestErrors(result as ExecutionResult));
  };
  return {
    onExecute: () => ({ onExecuteDone: mark as never }),
    onSubscribe: () => ({ onSubscribeResult: mark as never }),
  };
}
