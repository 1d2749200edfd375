import type { RequestContext } from '../../../context.ts';
import { teamIdsOfUsers } from '../../../services/teams.ts';
import { getUserProfiles, orgsOfUsers, type UserProfile } from '../../../services/user-profiles.ts';
import { SEES } from '../../graph-access.ts';
import { perRequestGroups, perRequestLoader } from '../../loaders.ts';
import { inOrder, real } from '../../loaders.ts';

/** Users by id, null where the caller may not see them (itself and server admins): one statement per level. */
export async function loadUsers(ctx: RequestContext, ids: readonly number[]): Promise<Array<UserProfile | null>> {
  const rows = await getUserProfiles(ctx.em, real([...ids]).filter((id) => SEES.user(ctx, id)));
  return inOrder(ids, rows, (r) => r.id).map((u) => u ?? null);
}

/** Shared by `node(id)` and every relationship leading to a user. */
export const userById = perRequestLoader((ids: readonly number[], ctx) => loadUsers(ctx, ids));
/** The orgs of each user, by name, with its role there. */
export const orgsOfUser = perRequestGroups((userIds: readonly number[], ctx) => orgsOfUsers(ctx.em, userIds));
/** The ids of a user's teams, in every org (each then shown only to whoever may see it). */
export const teamIdsOfUser = perRequestGroups((userIds: readonly number[], ctx) => teamIdsOfUsers(ctx.em, userIds));
