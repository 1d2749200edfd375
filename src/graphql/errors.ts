import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../logging/logger.ts';
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

/** What the error stands for: its original when GraphQL wrapped it, else itself. */
function originalOf(error: unknown): unknown {
  return error instanceof GraphQLError && error.originalError ? error.originalError : error;
}

/**
 * Logs every error the client will see masked (an unexpected one: a fault of this server), with
 * the request's id and the field's path, before the masking replaces it with the fixed message.
 * Yoga's own logging of masked errors is off (it would log without the request), so this is the
 * one line each gets. Hooks only execution: an `onExecutionResult` hook would take requests off
 * the direct path.
 */
export function useMaskedErrorLog(log: Logger): Plugin {
  const report = (context: unknown, errors: ReadonlyArray<unknown> | undefined) => {
    for (const error of errors ?? []) {
      const original = originalOf(error);
      if (original instanceof GraphQLError || renderError(original).unexpected === undefined) continue;
      const path = error instanceof GraphQLError && error.path ? error.path.join('.') : undefined;
      log.error({ err: original, requestId: (context as { requestId?: string }).requestId, path }, 'GraphQL error masked');
    }
  };
  /** A single result's errors now, a stream's as each result comes. */
  const each = (context: unknown, result: unknown) => {
    if (result && typeof result === 'object' && Symbol.asyncIterator in result) {
      return { onNext: ({ result: next }: { result: { errors?: readonly unknown[] } }) => report(context, next.errors) };
    }
    report(context, (result as { errors?: readonly unknown[] }).errors);
    return undefined;
  };
  return {
    onExecute({ args }) {
      return { onExecuteDone: ({ result }) => each(args.contextValue, result) };
    },
    onSubscribe({ args }) {
      return {
        onSubscribeResult: ({ result }) => each(args.contextValue, result),
        onSubscribeError: ({ error }) => report(args.contextValue, [error]),
      };
    },
  };
}
