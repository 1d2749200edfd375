import {
  getNamedType, GraphQLObjectType, GraphQLSchema, isInputObjectType, isInterfaceType, isObjectType, isUnionType,
  type GraphQLFieldConfigMap, type GraphQLNamedType,
} from 'graphql';

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
 * reach. Every other type is the full schema's own object, resolvers and extensions included:
 * only the roots that had REST-only fields are copied (rebuilding every type, as a generic schema
 * mapper does, took some 30 ms of every start).
 */
export function publicSchemaOf(full: GraphQLSchema): GraphQLSchema {
  const config = full.toConfig();
  const query = withoutRestOnly(config.query);
  const mutation = withoutRestOnly(config.mutation);
  const subscription = withoutRestOnly(config.subscription);
  const reachable = reachableFrom(full, [query, mutation, subscription]);
  const roots = new Set<GraphQLNamedType | null | undefined>([config.query, config.mutation, config.subscription]);
  return new GraphQLSchema({ ...config, query, mutation, subscription, types: config.types.filter((type) => !roots.has(type) && reachable.has(type.name)) });
}

function withoutRestOnly<T extends GraphQLObjectType | null | undefined>(root: T): T {
  if (!root) return root;
  const fields = Object.values(root.getFields());
  if (!fields.some(isRestOnly)) return root;
  const { fields: configs, ...rest } = root.toConfig();
  const kept: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const [name, field] of Object.entries(configs)) if (!isRestOnly(field)) kept[name] = field;
  return new GraphQLObjectType({ ...rest, fields: kept }) as T;
}

/** The names of the types reachable from `roots`: through fields, arguments, interfaces and their implementations, and union members. */
function reachableFrom(full: GraphQLSchema, roots: ReadonlyArray<GraphQLObjectType | null | undefined>): Set<string> {
  const seen = new Set<string>();
  const pending: GraphQLNamedType[] = roots.filter((root): root is GraphQLObjectType => Boolean(root));
  for (const directive of full.getDirectives()) for (const arg of directive.args) pending.push(getNamedType(arg.type));
  while (pending.length) {
    const type = pending.pop()!;
    if (seen.has(type.name)) continue;
    seen.add(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        pending.push(getNamedType(field.type));
        for (const arg of field.args) pending.push(getNamedType(arg.type));
      }
      pending.push(...type.getInterfaces());
      if (isInterfaceType(type)) pending.push(...full.getPossibleTypes(type));
    } else if (isUnionType(type)) pending.push(...type.getTypes());
    else if (isInputObjectType(type)) for (const field of Object.values(type.getFields())) pending.push(getNamedType(field.type));
  }
  return seen;
}
