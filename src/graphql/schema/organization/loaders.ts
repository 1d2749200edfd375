import type { RequestContext } from '../../../context.ts';
import { listMembersOfOrgs, readMemberships, type OrgMember } from '../../../services/org-members.ts';
import { getOrgs, type OrgDetails } from '../../../services/organizations.ts';
import { SEES, visibleOrNull } from '../../graph-access.ts';
import { inOrder, perRequestGroups, perRequestLoader, real } from '../../loaders.ts';
import { isRowId, keyNumbers } from '../../node-ids.ts';

/** Orgs by id, null where the caller may not see: one statement per level of the graph. */
export async function loadOrgs(ctx: RequestContext, ids: readonly number[]): Promise<Array<OrgDetails | null>> {
  const rows = await getOrgs(ctx.em, real([...ids]));
  return visibleOrNull(ctx, inOrder(ids, rows, (r) => r.id), (org) => SEES.organization(ctx, org.id));
}

/** Memberships by `<orgId>:<userId>` keys. */
export async function loadMemberships(ctx: RequestContext, keys: readonly string[]): Promise<Array<OrgMember | null>> {
  const pairs = keys.map((key) => keyNumbers(key)).map((n) => (n.length === 2 && n.every(isRowId) ? [n[0]!, n[1]!] as const : null));
  const rows = await readMemberships(ctx.em, pairs.filter((p) => p !== null));
  const byKey = new Map(rows.map((m) => [`${m.orgId}:${m.userId}`, m]));
  return visibleOrNull(ctx, pairs.map((p) => (p ? byKey.get(`${p[0]}:${p[1]}`) : undefined)), (m) => SEES.membership(ctx, m.orgId, m.userId));
}

/** Orgs by id, shared by `node(id)` and every relationship leading to one. */
export const orgById = perRequestLoader((ids: readonly number[], ctx) => loadOrgs(ctx, ids));
/** An org's members, for every org of a level in one statement. */
export const membersOfOrg = perRequestGroups((orgIds: readonly number[], ctx) => listMembersOfOrgs(ctx.em, orgIds));
