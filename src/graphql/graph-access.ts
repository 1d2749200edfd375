import { isServerAdmin } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import type { DataSourceCaller } from '../services/data-source-permissions.ts';
import { roleAtLeast, type BasicRole, type HeldRole } from '../roles.ts';
import { perRequestValue } from './loaders.ts';

/**
 * Who may see what in the graph: the same rules as the root fields and REST rows reading the same
 * things, applied to each object reached (through `node(id)` or a relationship) instead of to the
 * request. What the caller may not see is null, never another org's object.
 *
 * A caller holds its role in the org the request acts in; a user also holds its role in each of
 * its other orgs (read once per request); a token holds nothing outside its own org. A member whose
 * role is `None` is still a member: what teams and data source grants give it, it sees.
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

export async function roleIn(ctx: RequestContext, orgId: number): Promise<HeldRole> {
  return (await callerRoles(ctx)).get(orgId) ?? null;
}

/**
 * The caller as it is in each org it is a member of, whatever its role (`None` included; all its
 * orgs, or those named): for the rules the services apply in their SQL (data source permissions, teams).
 */
export async function orgActors(ctx: RequestContext, orgIds?: readonly number[]): Promise<DataSourceCaller[]> {
  const caller = ctx.caller;
  // A token holds its one org and nothing else: no roles to read.
  if (caller.kind !== 'user' || caller.userId === null) {
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

/** The rules, by what is read; each names the root field whose rule it repeats. */
export const SEES = {
  /** `organization(id)`: a member of it, or a server admin. */
  organization: async (ctx: RequestContext, orgId: number) => isServerAdmin(ctx.caller) || roleAtLeast(await roleIn(ctx, orgId), 'Viewer'),
  /** `dataSources`: members of the data source's org, any role (datasources:read); which each sees is its grants' rule. */
  dataSources: async (ctx: RequestContext, orgId: number) => roleAtLeast(await roleIn(ctx, orgId), 'None'),
  /** `teamSearch`: members of the org, any role (teams:read); which teams each sees is the service's rule. */
  teams: async (ctx: RequestContext, orgId: number) => roleAtLeast(await roleIn(ctx, orgId), 'None'),
  /** `organizationMembers`: Admin of the org, or a server admin (org.users:read). */
  members: async (ctx: RequestContext, orgId: number) => isServerAdmin(ctx.caller) || roleAtLeast(await roleIn(ctx, orgId), 'Admin'),
  /** `serviceAccounts`: Admin of the org (serviceaccounts:read). */
  serviceAccounts: async (ctx: RequestContext, orgId: number) => roleAtLeast(await roleIn(ctx, orgId), 'Admin'),
  /** `user(id)` and `viewer`: the user itself, or a server admin (users:read). */
  user: (ctx: RequestContext, userId: number) => isServerAdmin(ctx.caller) || (ctx.caller.kind === 'user' && ctx.caller.userId === userId),
  /** A membership: its own user, or whoever may read the org's members. */
  membership: async (ctx: RequestContext, orgId: number, userId: number) => SEES.user(ctx, userId) || SEES.members(ctx, orgId),
};

/** `items` with those the caller may not see replaced by null, each checked by `sees`. */
export async function visibleOrNull<T>(ctx: RequestContext, items: ReadonlyArray<T | undefined>, sees: (item: T) => boolean | Promise<boolean>): Promise<Array<T | null>> {
  return Promise.all(items.map(async (item) => (item !== undefined && (await sees(item)) ? item : null)));
}
