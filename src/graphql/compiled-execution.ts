import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { getLocation, GraphQLError, visit, type DocumentNode, type ExecutionResult, type FieldNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestContext } from '../context.ts';

/**
 * Built-in scalars and enums are written as their resolvers return them. Pothos types each
 * resolver to return its scalar's JavaScript type (an `Int` or `Float` a number, finite in every
 * resolver here; an enum one of its values, which are its names here; an `ID` a string here),
 * so graphql-js's serializing would hand back the same value, at the cost of four to five objects
 * per leaf: 15,000 leaves for a page of a thousand data sources, a tenth of that request's CPU.
 * The interpreter, which answers an operation's first arrival, still serializes, and
 * test/api/graphql/compiled-execution.test.ts compares its answers with the compiled ones.
 * Custom scalars (JSON, DateTime) keep their serializers.
 */
const COMPILE_OPTIONS = { disableLeafSerialization: true };

/** A document's operation: compiled, not compilable (so interpreted), or seen once so far. */
type Compiled = CompiledQuery | 'interpret' | 'seen-once';

/** Told once per operation whether it compiled, the second time its document arrives. */
export type OnCompiled = (operationName: string | null, compiled: boolean) => void;

/**
 * Runs the operations clients repeat as graphql-jit functions, as REST does for its own: the
 * interpreter walks the document again on every request, which costs more than the resolvers of a
 * typical read. An operation is compiled the second time its document arrives (yoga's parser cache
 * hands back the same DocumentNode for the same query text), so one-off queries never pay for
 * compiling, and anonymous callers (refused by every resolver) never cause it. Keyed weakly by
 * document: an entry lives as long as the parser cache keeps it.
 */
export function useCompiledExecution(onCompiled: OnCompiled = () => {}): Plugin {
  const byDocument = new WeakMap<DocumentNode, Map<string, Compiled>>();
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      // Compiling a large document takes milliseconds: only signed-in callers may cause it.
      if (!(args.contextValue as Partial<RequestContext>).principal) return;
      let operations = byDocument.get(args.document);
      if (!operations) byDocument.set(args.document, (operations = new Map()));
      const name = args.operationName ?? null;
      const key = name ?? '';
      let compiled = operations.get(key);
      if (compiled === undefined) {
        operations.set(key, 'seen-once');
        return;
      }
      if (compiled === 'seen-once') {
        const result = compileQuery(args.schema, args.document, name ?? undefined, COMPILE_OPTIONS);
        compiled = isCompiledQuery(result) ? result : 'interpret';
        operations.set(key, compiled);
        onCompiled(name, compiled !== 'interpret');
      }
      if (compiled === 'interpret') return;
      const query = compiled;
      setExecuteFn((execution) => {
        const result = query.query(execution.rootValue, execution.contextValue, execution.variableValues ?? {});
        if (isPromise(result)) return result.then((done) => asInterpreted(done, args.document));
        // No data at all: the variables were refused before any resolver ran. The interpreter words
        // that refusal its own way, so it answers it.
        if (!('data' in result)) return executeFn(execution);
        return asInterpreted(result, args.document);
      });
    },
  };
}

/**
 * The interpreter's errors, from graphql-jit's: these carry line and column but not the AST nodes
 * yoga rebuilds every error from, so their locations would be lost on the way out; and errors come
 * before data, as the interpreter orders them. Only answers with errors pay for this.
 */
function asInterpreted(result: ExecutionResult, document: DocumentNode): ExecutionResult {
  if (!result.errors) return result;
  const nodesAt = fieldNodesByLocation(document);
  const errors = result.errors.map((error) => {
    if (error.nodes || !error.locations) return error;
    const nodes = error.locations.map(({ line, column }) => nodesAt.get(`${line}:${column}`)).filter((node) => node !== undefined);
    return new GraphQLError(error.message, { nodes, path: error.path, originalError: error.originalError ?? undefined, extensions: error.extensions });
  });
  return { errors, data: result.data };
}

const fieldNodeIndex = new WeakMap<DocumentNode, Map<string, FieldNode>>();

function fieldNodesByLocation(document: DocumentNode): Map<string, FieldNode> {
  const cached = fieldNodeIndex.get(document);
  if (cached) return cached;
  const index = new Map<string, FieldNode>();
  visit(document, {
    Field(node) {
      if (!node.loc) return;
      const { line, column } = getLocation(node.loc.source, node.loc.start);
      index.set(`${line}:${column}`, node);
    },
  });
  fieldNodeIndex.set(document, index);
  return index;
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T>)?.then === 'function';
}
