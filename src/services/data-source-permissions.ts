import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeBarrier, ChangeListener, ChangeSubscriber } from '../db/change-listener.ts';
import { resolveEntityManager, type LazyEntityManager } from '../db/orm.ts';
import { badRequest, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { ORG_ROLES, type OrgRole, type HeldRole } from '../roles.ts';
import {
  effectiveLevel, heldRoles, LEVEL_ACTIONS, levelFor, levelName, levelNumber, PERMISSION_LEVELS,
  type DataSourceAction, type Grant, type LevelNumber, type PermissionLevel,
} from './data-source-access.ts';

/**
 * Data source permissions in SQL: the filter every read of data sources applies (the SQL twin of
 * `effectiveLevel`), the grants' list and changes (`/api/access-control/datasources/:uid`), and the
 * per-instance cache of a caller's level that the proxy and subscriptions consult.
 */

/** Who asks: enough of a principal to decide. A `Principal` is one. */
export interface DataSourceCaller {
  orgId: number;
  orgRole: HeldRole;
  /** A user or service account; null for a legacy API key (its role only). */
  userId: number | null;
}

/**
 * Channel a trigger notifies (payload: the org id, or `all`) on every committed change of a grant
 * or a team membership; see migration 20261127000000.
 */
export const ACCESS_CHANNEL = 'dashgate_datasource_access_changed';

/** The teams of user `?` in org `?` whose grants count: those of the org, for a member of the org. */
const CALLER_TEAMS = `select tm.team_id from team_member tm join org_user ou on ou.org_id = tm.org_id and ou.user_id = tm.user_id
  where tm.user_id = ? and tm.org_id = ?`;

/**
 * The SQL condition under which `caller` may do `action` with the data source aliased `alias`,
 * or null when it may with every data source of its org (an org Admin). Built-in roles come from a
 * fixed list, so they are written inline; ids are parameters.
 */
export function accessCondition(alias: string, caller: DataSourceCaller, action: DataSourceAction): { sql: string; params: unknown[] } | null {
  if (caller.orgRole === 'Admin') return null;
  const roles = heldRoles(caller.orgRole);
  const byRole = roles.length === 0 ? 'false' : `p.built_in_role in (${roles.map((r) => `'${r}'`).join(', ')})`;
  // The caller's teams in its own org, as a parameter rather than the row's org: the subquery is
  // then run once per statement, not once per grant row looked at (a team of another org could
  // not be granted on this org's data sources anyway). A team counts only for a member of the org
  // (teams may hold users of other orgs; that gives them nothing here).
  return {
    sql: `exists (select 1 from data_source_permission p where p.data_source_id = ${alias}.id and p.level >= ${levelFor(action)}
      and (${byRole} or p.user_id = ? or p.team_id in (${CALLER_TEAMS})))`,
    params: [caller.userId ?? 0, caller.userId ?? 0, caller.orgId],
  };
}

/**
 * `accessCondition` over the data sources of several orgs, each with the caller as it is in that
 * org (its role there): one condition, so a level of the graph stays one statement. No callers, no rows.
 */
export function accessConditionByOrg(alias: string, callers: readonly DataSourceCaller[], action: DataSourceAction): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const caller of callers) {
    const condition = accessCondition(alias, caller, action);
    parts.push(condition ? `(${alias}.org_id = ? and ${condition.sql})` : `${alias}.org_id = ?`);
    params.push(caller.orgId, ...(condition?.params ?? []));
  }
  return { sql: parts.length > 0 ? `(${parts.join(' or ')})` : 'false', params };
}

/** The grants of one data source that may concern `caller`, and its teams there: the input of `effectiveLevel`. */
export async function callerLevel(em: EntityManager, caller: DataSourceCaller, dataSourceId: number): Promise<LevelNumber> {
  if (caller.orgRole === 'Admin') return 3;
  const [row] = await em.execute<Array<{ grants: Array<{ level: LevelNumber; userId: number | null; teamId: number | null; builtInRole: OrgRole | null }>; team_ids: number[] }>>(
    `select coalesce((select json_agg(json_build_object('level', p.level, 'userId', p.user_id, 'teamId', p.team_id, 'builtInRole', p.built_in_role))
                        from data_source_permission p where p.data_source_id = ? and p.org_id = ?), '[]'::json) as grants,
            coalesce((select array_agg(c.team_id) from (${CALLER_TEAMS}) c), '{}') as team_ids`,
    [dataSourceId, caller.orgId, caller.userId ?? 0, caller.orgId],
  );
  const grants: Grant[] = row?.grants ?? [];
  return effectiveLevel({ orgRole: caller.orgRole, userId: caller.userId, teamIds: row?.team_ids ?? [] }, grants);
}

/** Most entries the access cache keeps; past it, it starts again empty (cheap to refill). */
const MAX_ENTRIES = 100_000;

/**
 * A caller's level per data source, for the proxy's hot path and subscription streams: a hit is
 * answered synchronously. Exact across instances as the proxy's target cache is: a hit counts
 * only once the change barrier shows every change committed before the request was heard (a
 * grant or membership change empties the cache, whichever instance or SQL made it), nothing is
 * kept while the listener is down, and a load that overlapped a change is used once, not kept.
 */
export class DataSourceAccessCache implements ChangeSubscriber {
  readonly #entries = new Map<string, LevelNumber>();
  readonly #changes: ChangeBarrier;
  #generation = 0;
  #listening = false;

  constructor(changes: ChangeListener) {
    this.#changes = changes;
    changes.subscribe(ACCESS_CHANNEL, this);
  }

  reset(listening: boolean): void {
    this.#listening = listening;
    this.notify();
  }

  notify(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** `caller`'s level on data source `dataSourceId` of its org (3 for org Admins, without a look). */
  level(em: LazyEntityManager, caller: DataSourceCaller, dataSourceId: number, mark: number): LevelNumber | Promise<LevelNumber> {
    if (caller.orgRole === 'Admin') return 3;
    const key = `${caller.orgId}:${dataSourceId}:${caller.userId ?? '-'}:${caller.orgRole}`;
    if (!this.#entries.has(key)) return this.#load(em, caller, dataSourceId, key);
    const caughtUp = this.#changes.caughtUp(mark);
    if (caughtUp === true) return this.#entries.get(key) ?? this.#load(em, caller, dataSourceId, key);
    if (caughtUp === false) return this.#load(em, caller, dataSourceId, key);
    return caughtUp.then((ok) => (ok && this.#entries.has(key) ? this.#entries.get(key)! : this.#load(em, caller, dataSourceId, key)));
  }

  async #load(em: LazyEntityManager, caller: DataSourceCaller, dataSourceId: number, key: string): Promise<LevelNumber> {
    const generation = this.#generation;
    const level = await callerLevel(resolveEntityManager(em), caller, dataSourceId);
    if (this.#listening && generation === this.#generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(key, level);
    }
    return level;
  }
}

/** One row of `GET /api/access-control/datasources/:uid`, as the original lists them. */
export interface PermissionEntry {
  id: number;
  roleName: string;
  isManaged: boolean;
  isInherited: boolean;
  isServiceAccount: boolean;
  userId: number | null;
  userLogin: string | null;
  userEmail: string | null;
  teamId: number | null;
  team: string | null;
  teamEmail: string | null;
  builtInRole: string | null;
  actions: readonly string[];
  permission: PermissionLevel;
}

/**
 * The data source's grants: users by login, then teams by name, then built-in roles, then the
 * org Admins' own (not managed, not removable: the original's basic Admin role).
 */
export async function listPermissions(em: EntityManager, orgId: number, dataSourceId: number): Promise<PermissionEntry[]> {
  const rows = await em.execute<Array<{
    id: number; level: LevelNumber; user_id: number | null; login: string | null; email: string | null; is_service_account: boolean | null;
    team_id: number | null; team: string | null; team_email: string | null; built_in_role: string | null;
  }>>(
    `select p.id, p.level, p.user_id, u.login, u.email, u.is_service_account, p.team_id, t.name as team, t.email as team_email, p.built_in_role
       from data_source_permission p left join "user" u on u.id = p.user_id left join team t on t.id = p.team_id
      where p.data_source_id = ? and p.org_id = ?
      order by (p.user_id is null), (p.team_id is null), lower(u.login), lower(t.name), array_position(array['Viewer','Editor','Admin']::varchar[], p.built_in_role), p.id`,
    [dataSourceId, orgId],
  );
  const entries: PermissionEntry[] = rows.map((r) => {
    const permission = levelName(r.level) as PermissionLevel;
    const roleName = r.user_id !== null ? `managed:users:${r.user_id}:permissions`
      : r.team_id !== null ? `managed:teams:${r.team_id}:permissions` : `managed:builtins:${r.built_in_role!.toLowerCase()}:permissions`;
    return {
      id: r.id, roleName, isManaged: true, isInherited: false, isServiceAccount: Boolean(r.is_service_account),
      userId: r.user_id, userLogin: r.login, userEmail: r.email, teamId: r.team_id, team: r.team, teamEmail: r.team_email,
      builtInRole: r.built_in_role, actions: LEVEL_ACTIONS[permission], permission,
    };
  });
  entries.push({
    id: 0, roleName: 'basic:admin', isManaged: false, isInherited: false, isServiceAccount: false, userId: null, userLogin: null, userEmail: null,
    teamId: null, team: null, teamEmail: null, builtInRole: 'Admin', actions: LEVEL_ACTIONS.Admin, permission: 'Admin',
  });
  return entries;
}

/** `Query`, `Edit`, `Admin`, or '' (remove); anything else is refused with `failure`. */
function parseLevel(permission: string | null | undefined, failure: string): LevelNumber {
  if (permission === '' || permission === null || permission === undefined) return 0;
  if (!(PERMISSION_LEVELS as readonly string[]).includes(permission)) throw badRequest(failure);
  return levelNumber(permission as PermissionLevel);
}

export type Assignee = { userId: number } | { teamId: number } | { builtInRole: string };

/** Grants `permission` to one assignee on the data source (or removes its grant with ''); returns the level set. */
export async function setPermission(em: EntityManager, orgId: number, dataSourceId: number, assignee: Assignee, permission: string | null | undefined): Promise<LevelNumber> {
  const failure = 'userId' in assignee ? MESSAGES.permission.userFailed : 'teamId' in assignee ? MESSAGES.permission.teamFailed : MESSAGES.permission.roleFailed;
  const level = parseLevel(permission, failure);
  let column: 'user_id' | 'team_id' | 'built_in_role';
  let value: number | string;
  if ('userId' in assignee) {
    const [member] = await em.execute('select 1 from org_user where org_id = ? and user_id = ?', [orgId, assignee.userId]);
    if (!member) throw badRequest(failure);
    column = 'user_id';
    value = assignee.userId;
  } else if ('teamId' in assignee) {
    const [team] = await em.execute('select 1 from team where org_id = ? and id = ?', [orgId, assignee.teamId]);
    if (!team) throw badRequest(failure);
    column = 'team_id';
    value = assignee.teamId;
  } else {
    // The org Admins' own permission is not managed: it cannot be set or removed.
    if (!(ORG_ROLES as readonly string[]).includes(assignee.builtInRole) || assignee.builtInRole === 'Admin') throw badRequest(failure);
    column = 'built_in_role';
    value = assignee.builtInRole;
  }
  if (level === 0) {
    await em.execute(`delete from data_source_permission where data_source_id = ? and ${column} = ?`, [dataSourceId, value]);
    return level;
  }
  try {
    await em.execute(
      `insert into data_source_permission (data_source_id, org_id, ${column}, level) values (?, ?, ?, ?)
        on conflict (data_source_id, ${column}) where ${column} is not null do update set level = excluded.level
        where data_source_permission.level <> excluded.level`,
      [dataSourceId, orgId, value, level],
    );
  } catch (error) {
    // The user left the org, or the team or the data source was deleted, since the checks above.
    if ((error as { code?: string }).code === '23503') throw badRequest(failure);
    throw error;
  }
  return level;
}

/** Several at once, in one transaction (`POST /api/access-control/datasources/:uid`). */
export async function setPermissions(em: EntityManager, orgId: number, dataSourceId: number, items: ReadonlyArray<{ userId?: number | null; teamId?: number | null; builtInRole?: string | null; permission?: string | null }>): Promise<void> {
  await em.transactional(async (tx) => {
    for (const item of items) {
      const set = [item.userId, item.teamId, item.builtInRole].filter((v) => v !== null && v !== undefined && v !== 0 && v !== '');
      if (set.length !== 1) throw badRequest(MESSAGES.permission.setFailed);
      const assignee: Assignee = item.userId ? { userId: item.userId } : item.teamId ? { teamId: item.teamId } : { builtInRole: item.builtInRole! };
      await setPermission(tx, orgId, dataSourceId, assignee, item.permission);
    }
  });
}

/** What the original's `/description` says of data source permissions. */
export const PERMISSIONS_DESCRIPTION = {
  assignments: { users: true, serviceAccounts: true, teams: true, builtInRoles: true },
  permissions: [...PERMISSION_LEVELS].reverse(),
};

/** For 404s of the permission routes on a data source the caller's org does not have. */
export function dataSourceNotFound() {
  return notFound(MESSAGES.dataSource.notFound);
}
