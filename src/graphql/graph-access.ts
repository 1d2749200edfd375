import { orgMember, orgRole, orgRoleOrServerAdmin } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import { allowedIn, seesUser } from './access.ts';

export { orgActors, roleIn, visibleOrNull } from './access.ts';

/** The rules, by what is read; each names the root field whose rule it repeats. */
export const SEES = {
  organization: (ctx: RequestContext, orgId: number) => allowedIn(ctx, orgRoleOrServerAdmin('Viewer', 'orgs:read'), orgId),
  dataSources: (ctx: RequestContext, orgId: number) => allowedIn(ctx, orgMember('datasources:read'), orgId),
  teams: (ctx: RequestContext, orgId: number) => allowedIn(ctx, orgMember('teams:read'), orgId),
  members: (ctx: RequestContext, orgId: number) => allowedIn(ctx, orgRoleOrServerAdmin('Admin', 'org.users:read'), orgId),
  serviceAccounts: (ctx: RequestContext, orgId: number) => allowedIn(ctx, orgRole('Admin', 'serviceaccounts:read'), orgId),
  user: seesUser,
  membership: async (ctx: RequestContext, orgId: number, userId: number) => seesUser(ctx, userId) || SEES.members(ctx, orgId),
};
