import {
  defaultFieldResolver, isNonNullType, isObjectType,
  type GraphQLArgument, type GraphQLField, type GraphQLFieldResolver, type GraphQLObjectType, type GraphQLSchema,
} from 'graphql';
import { admits, authorize, isServerAdmin, refusal, type Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import type { DataSourceCaller } from '../services/data-source-permissions.ts';
import { roleAtLeast, type BasicRole, type HeldRole } from '../roles.ts';
import { inputLimitViolation } from './input-limits.ts';
import { perRequestValue } from './loaders.ts';
import { decodeNodeId, fitsInt4, keyNumbers } from './node-ids.ts';

/**
 * Who may read or change what, declared once per field as `extensions: { access }` (the rule a
 * route row reads too: src/rest/access.ts), and applied here to every field that declares one,
 * when the schema is built; resolvers never check roles themselves.
 *
 * - A root field: the caller as it is in the org the request acts in, as `authorize` checks a
 *   route row. With `accessIn: '<argument>'`, in the org that argument names instead (an org's
 *   global id, or a membership's, which names its org): the rows on `/api/orgs/:orgId`.
 * - A field of an object that belongs to an org (its type declares `orgOf`): the caller as it is in
 *   that object's org. What it may not read is null (the field's error where it cannot be null),
 *   never another org's object; a REST row, whose answer has no null to give, gets the refusal.
 *
 * A node type declares the rule its objects are seen by (`extensions: { access }` on the type);
 * its loader applies it (`visibleOrNull`). A REST row reading the type's own fields is gated by it.
 */
export function enforceDeclaredAccess(schema: GraphQLSchema): void {
  const roots = rootTypes(schema);
  for (const type of roots) {
    for (const field of Object.values(type.getFields())) {
      const access = declaredAccess(field);
      if (!access) throw new Error(`${type.name}.${field.name} declares no access rule (extensions.access)`);
      const resolve = field.resolve ?? defaultFieldResolver;
      const inArgument = (field.extensions as { accessIn?: string }).accessIn;
      field.resolve = inArgument ? guardedIn(access, inArgument, field.args, resolve) : guarded(access, resolve);
      if (field.subscribe) field.subscribe = guarded(access, field.subscribe);
    }
  }
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || roots.includes(type) || type.name.startsWith('__')) continue;
    const orgOf = orgOfType(type);
    for (const field of Object.values(type.getFields())) {
      const access = declaredAccess(field);
      if (!access) continue;
      if (!orgOf) throw new Error(`${type.name}.${field.name} declares an access rule, but ${type.name} no org its objects belong to (extensions.orgOf)`);
      field.resolve = guardedOnObject(access, orgOf, isNonNullType(field.type), field.resolve ?? defaultFieldResolver);
    }
  }
}

/** The rule a field (or a node type) declares. */
export function declaredAccess(field: { extensions?: unknown }): Access | undefined {
  return (field.extensions as { access?: Access } | undefined)?.access;
}

/** How a type tells the org one of its objects belongs to, if it declares one. */
export function orgOfType(type: GraphQLObjectType): ((obj: unknown) => number) | undefined {
  return (type.extensions as { orgOf?: (obj: unknown) => number }).orgOf;
}

export function rootTypes(schema: GraphQLSchema): GraphQLObjectType[] {
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((t): t is GraphQLObjectType => t != null);
}

type Resolver = GraphQLFieldResolver<unknown, RequestContext>;

function guarded(access: Access, resolve: Resolver): Resolver {
  return (source, args, ctx, info) => {
    // A REST row's door checked this very rule already.
    if (ctx.authorizedAs !== access) {
      const denied = authorize(ctx.principal, access);
      if (denied) throw denied;
    }
    return resolve(source, args, ctx, info);
  };
}

function guardedIn(access: Access, argument: string, argDefs: readonly GraphQLArgument[], resolve: Resolver): Resolver {
  return (source, args, ctx, info) => {
    // Any signed-in caller passes the gate; the rule applies in the org the argument names.
    const denied = authorize(ctx.principal, { kind: 'signed-in' });
    if (denied) throw denied;
    // The org's id is read here, before the field's own checks: what is past its bound is the request's 400 all the same, first.
    const tooLong = inputLimitViolation(argDefs, args as Record<string, unknown>);
    if (tooLong) throw tooLong;
    const allowed = ctx.authorizedAs === access && orgOfId((args as Record<string, unknown>)[argument]) === ctx.orgId
      ? true
      : authorizeIn(ctx, access, (args as Record<string, unknown>)[argument]);
    return allowed === true ? resolve(source, args, ctx, info) : allowed.then(() => resolve(source, args, ctx, info));
  };
}

/**
 * Passes (true) or throws the refusal of `access` in the org a global id names (`accessIn`): the
 * field's guard, and a REST row's door where the path names that org, before its body is read.
 */
export function authorizeIn(ctx: RequestContext, access: Access, globalId: unknown): true | Promise<void> {
  const allowed = allowedIn(ctx, access, orgOfId(globalId));
  if (allowed === true) return true;
  if (allowed === false) throw refusal(access);
  return allowed.then((ok) => {
    if (!ok) throw refusal(access);
  });
}

function guardedOnObject(access: Access, orgOf: (obj: unknown) => number, nonNull: boolean, resolve: Resolver): Resolver {
  const deny = (ctx: RequestContext) => {
    if (nonNull || ctx.rest) throw refusal(access);
    return null;
  };
  return (source, args, ctx, info) => {
    const orgId = orgOf(source);
    const allowed = ctx.authorizedAs === access && orgId === ctx.orgId ? true : allowedIn(ctx, access, orgId);
    if (allowed === true) return resolve(source, args, ctx, info);
    if (allowed === false) return deny(ctx);
    return allowed.then((ok) => (ok ? resolve(source, args, ctx, info) : deny(ctx)));
  };
}

/**
 * The org a global id names: an org's own id, or a membership's (`<orgId>:<userId>`); 0 (no org)
 * for any other type's. A malformed id is the request's error (400).
 */
export function orgOfId(globalId: unknown): number {
  const { typename, id } = decodeNodeId(String(globalId));
  const [orgId = 0] = typename === 'Organization' || typename === 'OrganizationMember' ? keyNumbers(id) : [];
  return fitsInt4(orgId) ? orgId : 0;
}

/**
 * The caller's role in each org it belongs to (a user's, read once per request); a token holds a
 * role in its own org only. The org the request acts in is the principal's.
 */
const callerRoles = perRequestValue(async (ctx: RequestContext): Promise<Map<number, HeldRole>> => {
  const caller = ctx.caller;
  const roles = new Map<number, HeldRole>();
  if (caller.kind === 'user' && caller.userId !== null) {
    const rows = await ctx.em.execute<Array<{ org_id: number; role: BasicRole }>>('select org_id, role from org_user where user_id = ?', [caller.userId]);
    for (const row of rows) roles.set(row.org_id, row.role);
  }
  roles.set(caller.orgId, caller.orgRole);
  return roles;
});

/**
 * The caller's role in `orgId` (null: no member). The org the request acts in, and anything a
 * token asks, need no statement: only a user's roles in its other orgs are read.
 */
export function roleIn(ctx: RequestContext, orgId: number): HeldRole | Promise<HeldRole> {
  const caller = ctx.caller;
  if (orgId === caller.orgId) return caller.orgRole;
  if (caller.kind !== 'user' || caller.userId === null) return null;
  return callerRoles(ctx).then((roles) => roles.get(orgId) ?? null);
}

/** Whether the caller passes `access` in `orgId`; a promise only when its role there must be read. */
export function allowedIn(ctx: RequestContext, access: Access, orgId: number): boolean | Promise<boolean> {
  const caller = ctx.caller;
  if (access.kind !== 'org-role' || (access.serverAdmins && isServerAdmin(caller))) return admits(caller, access, null);
  const role = roleIn(ctx, orgId);
  return role instanceof Promise ? role.then((held) => roleAtLeast(held, access.role)) : roleAtLeast(role, access.role);
}

/**
 * The caller as it is in each org it is a member of, whatever its role (`None` included; all its
 * orgs, or those named): for the rules the services apply in their SQL (data source permissions, teams).
 */
export async function orgActors(ctx: RequestContext, orgIds?: readonly number[]): Promise<DataSourceCaller[]> {
  const caller = ctx.caller;
  // The org the request acts in, or a token's one org: the principal holds the role.
  if ((orgIds && orgIds.every((id) => id === caller.orgId)) || caller.kind !== 'user' || caller.userId === null) {
    const inOrg = caller.orgRole !== null && (!orgIds || orgIds.includes(caller.orgId));
    return inOrg ? [{ orgId: caller.orgId, orgRole: caller.orgRole, userId: caller.userId }] : [];
  }
  const roles = await callerRoles(ctx);
  const callers: DataSourceCaller[] = [];
  for (const orgId of orgIds ?? [...roles.keys()]) {
    const orgRole = roles.get(orgId) ?? null;
    if (orgRole !== null) callers.push({ orgId, orgRole, userId: ctx.caller.userId });
  }
  return callers;
}

/** The caller as a changer of memberships in `orgId`: its role there, and whether it is a server admin. */
export async function memberActor(ctx: RequestContext, orgId: number): Promise<{ role: HeldRole; isServerAdmin: boolean }> {
  if (isServerAdmin(ctx.caller)) return { role: 'Admin', isServerAdmin: true };
  return { role: await roleIn(ctx, orgId), isServerAdmin: false };
}

/** `items` with those the caller may not see replaced by null, each checked by `sees`. */
export async function visibleOrNull<T>(ctx: RequestContext, items: ReadonlyArray<T | undefined>, sees: (item: T) => boolean | Promise<boolean>): Promise<Array<T | null>> {
  return Promise.all(items.map(async (item) => (item !== undefined && (await sees(item)) ? item : null)));
}

/** `user(id)` and `viewer`: the user itself, or a server admin (users:read). */
export function seesUser(ctx: RequestContext, userId: number): boolean {
  return isServerAdmin(ctx.caller) || (ctx.caller.kind === 'user' && ctx.caller.userId === userId);
}
