import type { RequestContext } from '../../../context.ts';
import { readServiceAccounts, readServiceAccountTokens, type OwnedServiceAccountToken, type ServiceAccountProfile } from '../../../services/service-accounts.ts';
import { SEES, visibleOrNull } from '../../graph-access.ts';
import { groupBy, inOrder, perRequestGroups, perRequestLoader, real } from '../../loaders.ts';

/** Service accounts by id, null where the caller may not see: one statement per level of the graph. */
export async function loadServiceAccounts(ctx: RequestContext, ids: readonly number[]): Promise<Array<ServiceAccountProfile | null>> {
  const rows = await readServiceAccounts(ctx.em, { ids: real([...ids]) });
  return visibleOrNull(ctx, inOrder(ids, rows, (r) => r.id), (sa) => SEES.serviceAccounts(ctx, sa.orgId));
}

/** Service account tokens by id, null where the caller may not see. */
export async function loadServiceAccountTokens(ctx: RequestContext, ids: readonly number[]): Promise<Array<OwnedServiceAccountToken | null>> {
  const rows = await readServiceAccountTokens(ctx.em, { ids: real([...ids]) });
  return visibleOrNull(ctx, inOrder(ids, rows, (r) => r.id), (token) => SEES.serviceAccounts(ctx, token.orgId));
}

export const serviceAccountById = perRequestLoader((ids: readonly number[], ctx) => loadServiceAccounts(ctx, ids));
/** An org's service accounts, and an account's tokens, for a whole level in one statement. */
export const serviceAccountsOfOrg = perRequestGroups(async (orgIds: readonly number[], ctx) =>
  groupBy(orgIds, await readServiceAccounts(ctx.em, { orgIds }), (sa) => sa.orgId));
export const tokensOfServiceAccount = perRequestGroups(async (accountIds: readonly number[], ctx) =>
  groupBy(accountIds, await readServiceAccountTokens(ctx.em, { accountIds }), (token) => token.serviceAccountId));
