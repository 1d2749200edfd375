import { isServerAdmin } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import { accessDenied } from '../errors/domain.ts';
import { roleAtLeast, type BasicRole, type HeldRole } from '../roles.ts';
import type { MemberActor } from '../services/org-members.ts';

/**
 * The one access check that depends on data: a role in an org named by the request (a path's
 * `:orgId`) rather than the org it acts in. A server admin passes in every org, as the original
 * grants its Grafana Admin role there; a user's membership is looked up; a token only ever holds a
 * role in its own org. The refusal names the missing action, as the original's access control does.
 */
export async function requireRoleInOrg(ctx: RequestContext, orgId: number, role: BasicRole, action: string): Promise<MemberActor> {
  const caller = ctx.caller;
  if (isServerAdmin(caller)) return { role: 'Admin', isServerAdmin: true };
  let held: HeldRole = orgId === caller.orgId ? caller.orgRole : null;
  if (orgId !== caller.orgId && caller.kind === 'user' && caller.userId !== null) {
    const [row] = await ctx.em.execute<Array<{ role: BasicRole }>>('select role from org_user where org_id = ? and user_id = ?', [orgId, caller.userId]);
    held = row?.role ?? null;
  }
  if (!roleAtLeast(held, role)) throw accessDenied(action);
  return { role: held, isServerAdmin: false };
}

/** The caller as a changer of memberships in the org the request acts in. */
export function currentOrgActor(ctx: RequestContext): MemberActor {
  return { role: ctx.caller.orgRole, isServerAdmin: isServerAdmin(ctx.caller) };
}
