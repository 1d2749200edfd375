import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { accessDenied, badRequest, conflict, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { HeldRole } from '../roles.ts';
import { containsPattern, pageWindow } from './paging.ts';

/**
 * Teams, as the original's team API and its access rules: a team belongs to one org; org Admins
 * may do everything with the org's teams; a team's Admins (member permission 4) may change and
 * delete their team and its members; a member may read the team. Others see nothing of it: asking
 * for a team one may not read is refused (403), as the original's scope check does.
 *
 * Members are users of any org, as the original's rule has it (the user must exist, nothing
 * more): a team of one org may list users who belong to another org only. Such a membership gives
 * nothing in the team's org until the user joins it (the org's data source grants apply to its own
 * members, and one cannot act in an org one is not in); leaving an org ends the memberships of its
 * teams. A user who creates a team becomes its Admin, as in the original since v9; a token does not.
 */

/** The member permissions: 0 Member, 4 Admin (the original's numbers). */
export const TEAM_MEMBER = 0;
export const TEAM_ADMIN = 4;

export interface Team {
  id: number;
  uid: string;
  orgId: number;
  name: string;
  email: string;
  memberCount: number;
  /** The caller's own member permission (0 when not a member). */
  permission: number;
}

export interface TeamMember {
  orgId: number;
  teamId: number;
  teamUid: string;
  userId: number;
  userUid: string;
  email: string;
  name: string;
  login: string;
  permission: number;
  /** Whether the user is also a member of the team's org (what the membership is worth there). */
  orgMember: boolean;
}

/** Who acts: its role in the org the request acts in, and its user id (null for an API key). */
export interface TeamActor {
  orgId: number;
  orgRole: HeldRole;
  userId: number | null;
  /** A user (password) rather than a token: only a user who creates a team joins it. */
  isUser?: boolean;
}

const MAX_NAME = 190;
const TEAM_COLUMNS = `t.id, t.uid, t.org_id, t.name, t.email,
  (select count(*)::int from team_member c where c.team_id = t.id) as member_count,
  coalesce((select m.permission from team_member m where m.team_id = t.id and m.user_id = ?), 0) as permission`;

interface TeamRow { id: number; uid: string; org_id: number; name: string; email: string; member_count: number; permission: number }

const toTeam = (r: TeamRow): Team => ({ id: r.id, uid: r.uid, orgId: r.org_id, name: r.name, email: r.email, memberCount: r.member_count, permission: r.permission });

function validName(name: string | null | undefined): string {
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME || name.includes('\0')) throw badRequest();
  return name;
}

function validEmail(email: string | null | undefined): string {
  const value = email ?? '';
  if (value.length > MAX_NAME || value.includes('\0')) throw badRequest();
  return value;
}

/** A team uid as the original makes them: a letter first, so it never reads as an id. */
function generateUid(): string {
  return `t${randomUUID().replace(/-/g, '').slice(0, 13)}`;
}

/** The actor's member permission in the team, or null when it is no member (or the team is not in the org). */
async function memberPermission(em: EntityManager, actor: TeamActor, teamId: number): Promise<number | null> {
  if (actor.userId === null) return null;
  const [row] = await em.execute<Array<{ permission: number }>>(
    'select permission from team_member where team_id = ? and org_id = ? and user_id = ?', [teamId, actor.orgId, actor.userId]);
  return row ? row.permission : null;
}

/**
 * May `actor` act on team `teamId` of its org with `need` ('read': members and Admins; 'admin':
 * the team's Admins)? Org Admins always may, and learn whether the team exists (404); anyone else
 * is refused alike whether it exists or not (403 naming the action), as the original does.
 */
async function authorizeTeam(em: EntityManager, actor: TeamActor, teamId: number, need: 'read' | 'admin', action: string, notFoundMessage: string = MESSAGES.team.notFound): Promise<void> {
  if (actor.orgRole === 'Admin') {
    const [team] = await em.execute('select 1 from team where id = ? and org_id = ?', [teamId, actor.orgId]);
    if (!team) throw notFound(notFoundMessage);
    return;
  }
  const permission = await memberPermission(em, actor, teamId);
  if (permission === null || (need === 'admin' && permission !== TEAM_ADMIN)) throw accessDenied(action);
}

/**
 * The team rule of the preference routes, which do not look the team up first: an org Admin passes
 * for any id and learns whether the org has that team (false: nothing to read or keep, as the
 * original answers `{}` and "Preferences updated" there); anyone else must be a member ('read') or
 * an Admin ('admin') of the team, else 403 naming the action.
 */
export async function teamPreferencesAccess(em: EntityManager, actor: TeamActor, teamId: number, need: 'read' | 'admin'): Promise<boolean> {
  if (actor.orgRole === 'Admin') {
    const [team] = await em.execute('select 1 from team where id = ? and org_id = ?', [teamId, actor.orgId]);
    return Boolean(team);
  }
  await authorizeTeam(em, actor, teamId, need, need === 'read' ? 'teams:read' : 'teams:write');
  return true;
}

/**
 * Creates a team in the actor's org. A user creating it becomes its Admin (permission 4), as the
 * original adds the signed-in user since v9; a service account or an API key does not.
 */
export async function createTeam(em: EntityManager, actor: TeamActor, input: { name?: string | null; email?: string | null }): Promise<Team> {
  const name = validName(input.name);
  const email = validEmail(input.email);
  const creator = actor.isUser && actor.userId !== null ? actor.userId : null;
  try {
    return await em.transactional(async (tx) => {
      const [row] = await tx.execute<TeamRow[]>(
        `insert into team (uid, org_id, name, email) values (?, ?, ?, ?)
          returning id, uid, org_id, name, email, 0 as member_count, 0 as permission`,
        [generateUid(), actor.orgId, name, email],
      );
      const team = toTeam(row!);
      if (creator === null) return team;
      await tx.execute('insert into team_member (team_id, org_id, user_id, permission) values (?, ?, ?, ?)', [team.id, team.orgId, creator, TEAM_ADMIN]);
      return { ...team, memberCount: 1, permission: TEAM_ADMIN };
    });
  } catch (error) {
    if (uniqueViolation(error) !== null) throw conflict(MESSAGES.team.nameTaken);
    throw error;
  }
}

export async function updateTeam(em: EntityManager, actor: TeamActor, teamId: number, input: { name?: string | null; email?: string | null }): Promise<void> {
  const name = validName(input.name);
  const email = validEmail(input.email);
  await authorizeTeam(em, actor, teamId, 'admin', 'teams:write');
  try {
    const [updated] = await em.execute('update team set name = ?, email = ?, updated = now() where id = ? and org_id = ? returning id', [name, email, teamId, actor.orgId]);
    if (!updated) throw notFound(MESSAGES.team.notFound);
  } catch (error) {
    // The original answers 400 here (409 on create).
    if (uniqueViolation(error) !== null) throw badRequest(MESSAGES.team.nameTaken);
    throw error;
  }
}

export async function deleteTeam(em: EntityManager, actor: TeamActor, teamId: number): Promise<void> {
  await authorizeTeam(em, actor, teamId, 'admin', 'teams:delete', MESSAGES.team.deleteNotFound);
  const [deleted] = await em.execute('delete from team where id = ? and org_id = ? returning id', [teamId, actor.orgId]);
  if (!deleted) throw notFound(MESSAGES.team.deleteNotFound);
}

export async function getTeam(em: EntityManager, actor: TeamActor, teamId: number): Promise<Team> {
  await authorizeTeam(em, actor, teamId, 'read', 'teams:read');
  const [row] = await em.execute<TeamRow[]>(`select ${TEAM_COLUMNS} from team t where t.id = ? and t.org_id = ?`, [actor.userId ?? 0, teamId, actor.orgId]);
  if (!row) throw notFound(MESSAGES.team.notFound);
  return toTeam(row);
}

export interface TeamSearch { totalCount: number; teams: Team[]; page: number; perPage: number }

/**
 * The org's teams by name (`query`: name contains, any case; `name`: exactly that name), a page
 * at a time (`perpage` 1000 and page 1 by default). Org Admins see every team, others those they
 * belong to, as the original filters by `teams:read`.
 */
export async function searchTeams(em: EntityManager, actor: TeamActor, filter: { query?: string | null; name?: string | null; page?: number | null; perPage?: number | null }): Promise<TeamSearch> {
  const query = filter.query ?? '';
  const name = filter.name ?? '';
  if (query.includes('\0') || name.includes('\0')) throw badRequest();
  const { page, perPage, offset } = pageWindow({ page: filter.page, perPage: filter.perPage }, 1);
  const everyone = actor.orgRole === 'Admin';
  const where = `t.org_id = ? and (? = '' or t.name ilike ?) and (? = '' or t.name = ?)
    and (? or exists (select 1 from team_member v where v.team_id = t.id and v.user_id = ?))`;
  const params = [actor.orgId, query, containsPattern(query), name, name, everyone, actor.userId ?? 0];
  const rows = await em.execute<Array<TeamRow & { total: number }>>(
    `select ${TEAM_COLUMNS}, count(*) over ()::int as total from team t where ${where}
      order by lower(t.name), t.id limit ? offset ?`,
    [actor.userId ?? 0, ...params, perPage, offset],
  );
  let totalCount = rows[0]?.total ?? 0;
  // A page past the end still tells how many there are.
  if (rows.length === 0 && offset > 0) {
    const [count] = await em.execute<Array<{ total: number }>>(`select count(*)::int as total from team t where ${where}`, params);
    totalCount = count?.total ?? 0;
  }
  return { totalCount, teams: rows.map(toTeam), page, perPage };
}

/** The teams of a user in one org (`GET /api/user/teams`), by name. */
export async function teamsOfUser(em: EntityManager, orgId: number, userId: number): Promise<Team[]> {
  const rows = await em.execute<TeamRow[]>(
    `select ${TEAM_COLUMNS} from team t join team_member tm on tm.team_id = t.id and tm.user_id = ?
      where t.org_id = ? order by lower(t.name), t.id`,
    [userId, userId, orgId],
  );
  return rows.map(toTeam);
}

/** The ids of the teams each user belongs to, in every org, in one statement (for the graph). */
export async function teamIdsOfUsers(em: EntityManager, userIds: readonly number[]): Promise<Map<number, number[]>> {
  const byUser = new Map<number, number[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return byUser;
  const rows = await em.execute<Array<{ user_id: number; team_id: number }>>(
    `select user_id, team_id from team_member where user_id = any(string_to_array(?, ',')::int[]) order by team_id`,
    [userIds.join(',')],
  );
  for (const row of rows) byUser.get(row.user_id)?.push(row.team_id);
  return byUser;
}

/** The teams `actor` (one per org) may see: all for an org Admin, else those it belongs to. */
function visibleTeams(actors: readonly TeamActor[]): { sql: string; params: unknown[] } {
  if (actors.length === 0) return { sql: 'false', params: [] };
  return {
    sql: `(${actors.map(() => '(t.org_id = ? and (? or exists (select 1 from team_member v where v.team_id = t.id and v.user_id = ?)))').join(' or ')})`,
    params: actors.flatMap((a) => [a.orgId, a.orgRole === 'Admin', a.userId ?? 0]),
  };
}

/** The teams of several orgs `actors` (one per org) may see, in one statement, each org's by name (for the graph). */
export async function teamsOfOrgs(em: EntityManager, actors: readonly TeamActor[]): Promise<Map<number, Team[]>> {
  const byOrg = new Map<number, Team[]>(actors.map((a) => [a.orgId, []]));
  if (actors.length === 0) return byOrg;
  const visible = visibleTeams(actors);
  const rows = await em.execute<TeamRow[]>(`select ${TEAM_COLUMNS} from team t where ${visible.sql} order by lower(t.name), t.id`, [actors[0]!.userId ?? 0, ...visible.params]);
  for (const row of rows) byOrg.get(row.org_id)?.push(toTeam(row));
  return byOrg;
}

/** Teams by id among those `actors` (one per org) may see, in one statement. */
export async function teamsByIds(em: EntityManager, ids: readonly number[], actors: readonly TeamActor[]): Promise<Team[]> {
  if (ids.length === 0 || actors.length === 0) return [];
  const visible = visibleTeams(actors);
  const rows = await em.execute<TeamRow[]>(`select ${TEAM_COLUMNS} from team t where t.id in (${ids.map(() => '?').join(', ')}) and ${visible.sql}`, [actors[0]!.userId ?? 0, ...ids, ...visible.params]);
  return rows.map(toTeam);
}

/** Every team of an org, for the graph (org Admins: all; others: theirs). */
export async function listTeamsOfOrg(em: EntityManager, actor: TeamActor): Promise<Team[]> {
  return (await searchTeams(em, actor, { perPage: 1_000_000 })).teams;
}

interface MemberRow {
  org_id: number; team_id: number; team_uid: string; user_id: number; user_uid: string; email: string; name: string; login: string; permission: number; org_member: boolean;
}

/**
 * A team's members (users: a service account member counts in `memberCount` but is not listed, as
 * in the original) by login; its Admins and the org's Admins may list them (`teams.permissions:read`).
 */
export async function listTeamMembers(em: EntityManager, actor: TeamActor, teamId: number): Promise<TeamMember[]> {
  await authorizeTeam(em, actor, teamId, 'admin', 'teams.permissions:read');
  const rows = await em.execute<MemberRow[]>(
    `select tm.org_id, tm.team_id, t.uid as team_uid, u.id as user_id, u.uid as user_uid, u.email, u.name, u.login, tm.permission,
            exists (select 1 from org_user ou where ou.org_id = tm.org_id and ou.user_id = tm.user_id) as org_member
       from team_member tm join team t on t.id = tm.team_id join "user" u on u.id = tm.user_id
      where tm.team_id = ? and tm.org_id = ? and not u.is_service_account order by u.login, u.email, u.id`,
    [teamId, actor.orgId],
  );
  return rows.map((r) => ({
    orgId: r.org_id, teamId: r.team_id, teamUid: r.team_uid, userId: r.user_id, userUid: r.user_uid, email: r.email, name: r.name, login: r.login,
    permission: r.permission, orgMember: r.org_member,
  }));
}

function validPermission(permission: number | null | undefined): number {
  const value = permission ?? TEAM_MEMBER;
  if (value !== TEAM_MEMBER && value !== TEAM_ADMIN) throw badRequest();
  return value;
}

/**
 * Adds a user to a team. Any existing user may be added, whichever orgs it belongs to (a service
 * account too), as the original's rule is: its resource permission service checks only that the
 * user exists.
 */
export async function addTeamMember(em: EntityManager, actor: TeamActor, teamId: number, userId: number | null | undefined, permission?: number | null): Promise<void> {
  if (typeof userId !== 'number' || userId <= 0) throw badRequest();
  const level = validPermission(permission);
  await authorizeTeam(em, actor, teamId, 'admin', 'teams.permissions:write');
  const [user] = await em.execute('select 1 from "user" where id = ?', [userId]);
  if (!user) throw notFound(MESSAGES.user.notFound);
  let inserted: unknown;
  try {
    [inserted] = await em.execute(
      `insert into team_member (team_id, org_id, user_id, permission) select ?, ?, ?, ? where exists (select 1 from team where id = ? and org_id = ?)
        on conflict (team_id, user_id) do nothing returning user_id`,
      [teamId, actor.orgId, userId, level, teamId, actor.orgId],
    );
  } catch (error) {
    // The user or the team was deleted since the checks above.
    if ((error as { code?: string }).code === '23503') throw notFound(MESSAGES.team.notFound);
    throw error;
  }
  if (!inserted) {
    const [existing] = await em.execute('select 1 from team_member where team_id = ? and user_id = ?', [teamId, userId]);
    if (existing) throw badRequest(MESSAGES.team.alreadyMember);
    throw notFound(MESSAGES.team.notFound);
  }
}

export async function updateTeamMember(em: EntityManager, actor: TeamActor, teamId: number, userId: number, permission: number | null | undefined): Promise<void> {
  const level = validPermission(permission);
  await authorizeTeam(em, actor, teamId, 'admin', 'teams.permissions:write');
  const [updated] = await em.execute('update team_member set permission = ? where team_id = ? and org_id = ? and user_id = ? returning user_id', [level, teamId, actor.orgId, userId]);
  if (!updated) throw notFound(MESSAGES.team.memberNotFoundDot);
}

export async function removeTeamMember(em: EntityManager, actor: TeamActor, teamId: number, userId: number): Promise<void> {
  await authorizeTeam(em, actor, teamId, 'admin', 'teams.permissions:write');
  const [removed] = await em.execute('delete from team_member where team_id = ? and org_id = ? and user_id = ? returning user_id', [teamId, actor.orgId, userId]);
  if (!removed) throw notFound(MESSAGES.team.memberNotFound);
}

/**
 * `PUT /api/teams/:teamId/members`: the team's members become exactly `members` and `admins`
 * (e-mails, as the original takes them, or logins; Admin wins when one is in both), in one
 * transaction. Users of any org may be named, as for `addTeamMember`; an unknown one (or a service
 * account, which the original's lookup by e-mail never finds) changes nothing (404 "user not
 * found"). Service account members are left as they are: the original's list leaves them out.
 */
export async function setTeamMemberships(em: EntityManager, actor: TeamActor, teamId: number, input: { members?: readonly string[] | null; admins?: readonly string[] | null }): Promise<void> {
  await authorizeTeam(em, actor, teamId, 'admin', 'teams.permissions:write');
  const wanted = new Map<string, number>();
  for (const member of input.members ?? []) wanted.set(member.toLowerCase(), TEAM_MEMBER);
  for (const admin of input.admins ?? []) wanted.set(admin.toLowerCase(), TEAM_ADMIN);
  for (const key of wanted.keys()) if (key.includes('\0')) throw notFound(MESSAGES.user.notFound);
  await em.transactional(async (tx) => replaceMembers(tx, actor, teamId, wanted)).catch((error: unknown) => {
    // A user deleted (or a team) meanwhile fails a foreign key: nothing was changed.
    throw (error as { code?: string }).code === '23503' ? notFound(MESSAGES.user.notFound) : error;
  });
}

async function replaceMembers(tx: EntityManager, actor: TeamActor, teamId: number, wanted: Map<string, number>): Promise<void> {
  const keys = [...wanted.keys()];
  const users = keys.length === 0 ? [] : await tx.execute<Array<{ id: number; login: string; email: string }>>(
    `select u.id, lower(u.login) as login, lower(u.email) as email from "user" u
      where not u.is_service_account
        and (lower(u.login) in (select jsonb_array_elements_text(?::jsonb)) or lower(u.email) in (select jsonb_array_elements_text(?::jsonb)))`,
    [JSON.stringify(keys), JSON.stringify(keys)],
  );
  const target = new Map<number, number>();
  for (const key of keys) {
    const user = users.find((u) => u.email === key) ?? users.find((u) => u.login === key);
    if (!user) throw notFound(MESSAGES.user.notFound);
    target.set(user.id, Math.max(target.get(user.id) ?? 0, wanted.get(key)!));
  }
  const ids = [...target.keys()];
  await tx.execute(
    `delete from team_member tm using "user" u
      where tm.team_id = ? and tm.org_id = ? and u.id = tm.user_id and not u.is_service_account and not (tm.user_id = any(string_to_array(?, ',')::int[]))`,
    [teamId, actor.orgId, ids.join(',')],
  );
  for (const [userId, permission] of target) {
    await tx.execute(
      `insert into team_member (team_id, org_id, user_id, permission) values (?, ?, ?, ?)
        on conflict (team_id, user_id) do update set permission = excluded.permission where team_member.permission <> excluded.permission`,
      [teamId, actor.orgId, userId, permission],
    );
  }
}
