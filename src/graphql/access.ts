import { defaultFieldResolver, type GraphQLField, type GraphQLFieldResolver, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { authorize, type Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';

/**
 * Every root field declares who may call it, as `extensions: { access }`, the way a route row
 * does; resolvers never check roles themselves. This wraps each root resolver once, when the
 * schema is built, with the one check `authorize` makes. A REST row runs its root field already
 * authorized by the row's own rule (the same rule: checked when the row is compiled), so the
 * field does not check it again.
 */
export function enforceDeclaredAccess(schema: GraphQLSchema): void {
  for (const type of rootTypes(schema)) {
    for (const field of Object.values(type.getFields())) {
      const access = declaredAccess(field);
      if (!access) throw new Error(`${type.name}.${field.name} declares no access rule (extensions.access)`);
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = guarded(access, resolve);
      if (field.subscribe) field.subscribe = guarded(access, field.subscribe);
    }
  }
}

/** The rule a root field declares. */
export function declaredAccess(field: GraphQLField<unknown, unknown>): Access | undefined {
  return (field.extensions as { access?: Access } | undefined)?.access;
}

export function rootTypes(schema: GraphQLSchema): GraphQLObjectType[] {
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((t): t is GraphQLObjectType => t != null);
}

function guarded(access: Access, resolve: GraphQLFieldResolver<unknown, RequestContext>): GraphQLFieldResolver<unknown, RequestContext> {
  return (source, args, ctx, info) => {
    if (ctx.authorizedAs !== access) {
      const denied = authorize(ctx.principal, access);
      if (denied) throw denied;
    }
    return resolve(source, args, ctx, info);
  };
}
