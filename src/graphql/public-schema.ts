import type { GraphQLFieldConfig, GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';

/**
 * A root field only REST rows run, declared `extensions: { restOnly: true }`: a REST behaviour
 * the graph's connections cannot express (paging without an upper bound, an order or filters of
 * the wire's own). It stays in the full schema the REST rows compile against, and out of the
 * public one `/graphql` serves.
 */
export function isRestOnly(field: { extensions?: unknown }): boolean {
  return (field.extensions as { restOnly?: boolean } | null | undefined)?.restOnly === true;
}

/**
 * The public schema: the full one without its REST-only root fields and the types only they
 * reach. Types and fields keep their (already wrapped) resolvers and extensions.
 */
export function publicSchemaOf(full: GraphQLSchema): GraphQLSchema {
  const kept = mapSchema(full, {
    [MapperKind.ROOT_FIELD]: (config: GraphQLFieldConfig<unknown, unknown>) => (isRestOnly(config) ? null : config),
  });
  return pruneSchema(kept);
}
