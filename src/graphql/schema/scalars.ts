import { GraphQLError, Kind, valueFromASTUntyped } from 'graphql';
import { builder } from '../builder.ts';

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
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
  parseValue: (value) => asObject(value),
  parseLiteral: (ast, variables) => {
    if (ast.kind !== Kind.OBJECT) throw new GraphQLError('JSONObject must be an object');
    return asObject(valueFromASTUntyped(ast, variables));
  },
});
