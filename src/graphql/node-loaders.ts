import type { RequestContext } from '../context.ts';
import { listMembersOfOrgs, readMemberships, type OrgMember } from '../services/org-members.ts';
import { getOrgs, type OrgDetails } from '../services/organizations.ts';
import { readServiceAccounts, readServiceAccountTokens, type OwnedServiceAccountToken, type ServiceAccountProfile } from '../services/service-accounts.ts';
import { teamsByIds, teamsOfOrgs, type Team } from '../services/teams.ts';
import { orgActors, SEES, visibleOrNull } from './graph-access.ts';
import { perRequestGroups, perRequestLoader } from './loaders.ts';
import { keyNumbers } from './node-ids.ts';

/**
 * The graph's reads: each loads a whole level in one statement (for `node`/`nodes`, and for a
 * relationship over every parent the level holds) and leaves null where the caller may not see.
 * Results come back in the order of the keys asked.
 */

/** A database id as the tables hold it (int4); anything else names nothing. */
const isRowId = (n: number) => Number.isSafeInteger(n) && n > 0 && n <= 2_147_483_647;

function rowIds(keys: readonly string[]): number[] {
  return keys.map((key) => keyNumbers(key)).map((n) => (n.length === 1 && isRowId(n[0]!) ? n[0]! : 0));
}

export function inOrder<T>(ids: readonly number[], rows: readonly T[], idOf: (row: T) => number): Array<T | undefined> {
  const byId = new Map(rows.map((row) => [idOf(row), row]));
  return ids.map((id) => byId.get(id));
}

export const real = (ids: number[]) => [...new Set(ids.filter((id) => id !== 0))];

export async function loadOrgs(ctx: RequestContext, ids: readonly number[]): Promise<Array<OrgDetails | null>> {
  const rows = await getOrgs(ctx.em, real([...ids]));
  return visibleOrNull(ctx, inOrder(ids, rows, (r) => r.id), (org) => SEES.organization(ctx, org.id));
}

export async function loadServiceAccounts(ctx: RequestContext, ids: readonly number[]): Promise<Array<ServiceAccountProfile | null>> {
  const rows = await readServiceAccounts(ctx.em, { ids: real([...ids]) });
  return visibleOrNull(ctx, inOrder(ids, rows, (r) => r.id), (sa) => SEES.serviceAccounts(ctx, sa.orgId));
}

export async function loadServiceAccountTokens(ctx: RequestContext, ids: readonly number[]): Promise<Array<OwnedServiceAccountToken | null>> {
  const rows = await readServiceAccountTokens(ctx.em, { ids: real([...ids]) });
  return visibleOrNull(ctx, inOrder(ids, rows, (r) => r.id), (token) => SEES.serviceAccounts(ctx, token.orgId));
}

/** Memberships by `<orgId>:<userId>` keys. */
export async function loadMemberships(ctx: RequestContext, keys: readonly string[]): Promise<Array<OrgMember | null>> {
  const pairs = keys.map((key) => keyNumbers(key)).map((n) => (n.length === 2 && n.every(isRowId) ? [n[0]!, n[1]!] as const : null));
  const rows = await readMemberships(ctx.em, pairs.filter((p) => p !== null));
  const byKey = new Map(rows.map((m) => [`${m.orgId}:${m.userId}`, m]));
  return visibleOrNull(ctx, pairs.map((p) => (p ? byKey.get(`${p[0]}:${p[1]}`) : undefined)), (m) => SEES.membership(ctx, m.orgId, m.userId));
}

export async function loadTeams(ctx: RequestContext, ids: readonly number[]): Promise<Array<Team | null>> {
  const rows = await teamsByIds(ctx.em, real([...ids]), await orgActors(ctx));
  return inOrder(ids, rows, (r) => r.id).map((team) => team ?? null);
}

/** Objects by id, shared by `node(id)` and every relationship leading to them: one statement per level. */
export const orgById = perRequestLoader((ids: readonly number[], ctx) => loadOrgs(ctx, ids));
export const serviceAccountById = perRequestLoader((ids: readonly number[], ctx) => loadServiceAccounts(ctx, ids));
export const teamById = perRequestLoader((ids: readonly number[], ctx) => loadTeams(ctx, ids));

/** Relationship lists, one statement per level. */
export const teamsOfOrg = perRequestGroups(async (orgIds: readonly number[], ctx) => {
  const byOrg = await teamsOfOrgs(ctx.em, await orgActors(ctx, orgIds));
  for (const orgId of orgIds) if (!byOrg.has(orgId)) byOrg.set(orgId, []);
  return byOrg;
});
export const membersOfOrg = perRequestGroups((orgIds: readonly number[], ctx) => listMembersOfOrgs(ctx.em, orgIds));
export const serviceAccountsOfOrg = perRequestGroups(async (orgIds: readonly number[], ctx) =>
  groupBy(orgIds, await readServiceAccounts(ctx.em, { orgIds }), (sa) => sa.orgId));
export const tokensOfServiceAccount = perRequestGroups(async (accountIds: readonly number[], ctx) =>
  groupBy(accountIds, await readServiceAccountTokens(ctx.em, { accountIds }), (token) => token.serviceAccountId));

function groupBy<T>(keys: readonly number[], rows: readonly T[], keyOf: (row: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>(keys.map((key) => [key, []]));
  for (const row of rows) groups.get(keyOf(row))?.push(row);
  return groups;
}
