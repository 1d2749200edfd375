import type { RequestContext } from '../../../context.ts';
import { teamsByIds, teamsOfOrgs, type Team } from '../../../services/teams.ts';
import { orgActors } from '../../graph-access.ts';
import { inOrder, perRequestGroups, perRequestLoader, real } from '../../loaders.ts';

/** Teams by id, as the caller may see them in their orgs (the teams service's SQL decides): one statement per level. */
export async function loadTeams(ctx: RequestContext, ids: readonly number[]): Promise<Array<Team | null>> {
  const rows = await teamsByIds(ctx.em, real([...ids]), await orgActors(ctx));
  return inOrder(ids, rows, (r) => r.id).map((team) => team ?? null);
}

export const teamById = perRequestLoader((ids: readonly number[], ctx) => loadTeams(ctx, ids));
/** An org's teams the caller may see, for every org of a level in one statement. */
export const teamsOfOrg = perRequestGroups(async (orgIds: readonly number[], ctx) => {
  const byOrg = await teamsOfOrgs(ctx.em, await orgActors(ctx, orgIds));
  for (const orgId of orgIds) if (!byOrg.has(orgId)) byOrg.set(orgId, []);
  return byOrg;
});
