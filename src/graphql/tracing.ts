import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Tracing } from '../tracing/index.ts';

/** A client names its operations: span names stay short whatever it sends. */
const MAX_NAME_LENGTH = 128;

/**
 * A span for each GraphQL operation `/graphql` executes (queries and mutations; a subscription's
 * request span covers its stream), with its type and name, never its document or variables (either
 * may hold a password or a secret). Placed after the compiled-execution plugin, so it wraps
 * whichever way the operation runs.
 */
export function useOperationTracing(tracing: Tracing): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = (operation?.name?.value ?? args.operationName ?? undefined)?.slice(0, MAX_NAME_LENGTH);
      setExecuteFn((execution) => traceOperation(tracing, type, name, () => executeFn(execution)));
    },
  };
}

/** The type of a REST row's operation (its document's first operation). */
export function operationType(document: DocumentNode): string {
  return getOperationAST(document)?.operation ?? 'query';
}

/**
 * Runs one operation under its span (when the request's span is recorded): the span fails with
 * the error's code when the run throws, or with the first error's when `run` answers an
 * execution result (`answersResult`) that carries errors.
 */
export function traceOperation<T>(tracing: Tracing, type: string, name: string | undefined, run: () => T, answersResult = true): T {
  const span = tracing.childSpan(name ? `${type} ${name}` : type, 'internal', { 'graphql.operation.type': type, 'graphql.operation.name': name });
  if (!span) return run();
  const done = (result: unknown) => {
    const errors = answersResult ? (result as ExecutionResult | undefined)?.errors : undefined;
    if (errors?.length) tracing.failed(span, errorCode(errors[0]));
    span.end();
    return result;
  };
  const failed = (error: unknown) => {
    tracing.failed(span, errorCode(error));
    span.end();
    throw error;
  };
  let result: T;
  try {
    result = tracing.within(span, run);
  } catch (error) {
    return failed(error);
  }
  if (result instanceof Promise) return result.then(done, failed) as T;
  return done(result) as T;
}

/** A GraphQL error's or domain error's code (`FORBIDDEN`...), never its message. */
function errorCode(error: unknown): string {
  type Coded = { extensions?: { code?: unknown }; originalError?: { code?: unknown }; code?: unknown } | undefined;
  const coded = error as Coded;
  const code = coded?.extensions?.code ?? coded?.originalError?.code ?? coded?.code;
  return typeof code === 'string' ? code : 'error';
}
