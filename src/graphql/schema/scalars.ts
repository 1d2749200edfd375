import { GraphQLError, Kind, valueFromASTUntyped } from 'graphql';
import { builder } from '../builder.ts';

/**
 * Deepest nesting accepted in JSON input. Real options are a few levels deep; serialising (for
 * PostgreSQL and for responses) recurses, so thousands of levels would overflow the stack.
 */
export const MAX_JSON_DEPTH = 100;

/** Refuses input JSON that is nested too deep or holds U+0000, which PostgreSQL's jsonb cannot store. */
function storable<T>(value: T): T {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length) {
    const [next, depth] = pending.pop()!;
    if (typeof next === 'string') {
      if (next.includes('\0')) throw new GraphQLError('JSON strings must not contain U+0000');
    } else if (next !== null && typeof next === 'object') {
      if (depth > MAX_JSON_DEPTH) throw new GraphQLError(`JSON must not be nested more than ${MAX_JSON_DEPTH} levels deep`);
      for (const [key, item] of Object.entries(next)) {
        if (key.includes('\0')) throw new GraphQLError('JSON keys must not contain U+0000');
        pending.push([item, depth + 1]);
      }
    }
  }
  return value;
}

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => storable(value),
  parseLiteral: (ast, variables) => storable(valueFromASTUntyped(ast, variables)),
});

function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GraphQLError('JSONObject must be an object');
  }
  return value as Record<string, unknown>;
}

builder.scalarType('JSONObject', {
  description: 'A JSON object.',
  serialize: (value) => asObject(value),
  parseValue: (value) => storable(asObject(value)),
  parseLiteral: (ast, variables) => {
    if (ast.kind !== Kind.OBJECT) throw new GraphQLError('JSONObject must be an object');
    return storable(asObject(valueFromASTUntyped(ast, variables)));
  },
});
