import { ORG_ROLES, roleAtLeast, type OrgRole, type HeldRole } from '../roles.ts';

/**
 * Who may do what with one data source: the original's data source permissions (levels Query,
 * Edit, Admin granted to users, teams and the built-in roles) reduced to one pure rule. The SQL in
 * `data-source-permissions.ts` is its twin (it filters lists with the same rule), and tests hold
 * the two to the same answers.
 */

/** The levels, weakest first; the numbers are those stored. */
export const PERMISSION_LEVELS = ['Query', 'Edit', 'Admin'] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];
/** 0: nothing; 1 Query; 2 Edit; 3 Admin. */
export type LevelNumber = 0 | 1 | 2 | 3;

/** What a caller wants to do with a data source, and the level it takes. */
export type DataSourceAction = 'read' | 'query' | 'write' | 'delete' | 'admin';
const NEEDS: Record<DataSourceAction, LevelNumber> = { read: 1, query: 1, write: 2, delete: 2, admin: 3 };

/** The original's action names, for the 403 naming what is missing. */
export const ACTION_NAMES: Record<DataSourceAction, string> = {
  read: 'datasources:read',
  query: 'datasources:query',
  write: 'datasources:write',
  delete: 'datasources:delete',
  admin: 'datasources.permissions:write',
};

/** The actions each level grants, as the original lists them. */
export const LEVEL_ACTIONS: Record<PermissionLevel, readonly string[]> = {
  Query: ['datasources:query', 'datasources:read'],
  Edit: ['datasources:query', 'datasources:read', 'datasources:write', 'datasources:delete'],
  Admin: [
    'datasources:query', 'datasources:read', 'datasources:write', 'datasources:delete',
    'datasources.permissions:read', 'datasources.permissions:write',
  ],
};

/** One stored grant of a data source. */
export interface Grant {
  level: LevelNumber;
  userId?: number | null;
  teamId?: number | null;
  builtInRole?: OrgRole | null;
}

/** What the rule needs to know of the caller. */
export interface Grantee {
  orgRole: HeldRole;
  /** A user or service account; null for a legacy API key, which only has its role. */
  userId: number | null;
  /** The teams the user belongs to in the data source's org. */
  teamIds: readonly number[];
}

export function levelNumber(level: PermissionLevel): LevelNumber {
  return (PERMISSION_LEVELS.indexOf(level) + 1) as LevelNumber;
}

export function levelName(level: LevelNumber): PermissionLevel | '' {
  return level === 0 ? '' : PERMISSION_LEVELS[level - 1]!;
}

/**
 * The caller's level on a data source: an org Admin administers every data source of the org (the
 * original's fixed role, which no managed permission can take away); anyone else has the highest
 * level among the grants to them, to a team of theirs, and to a built-in role they hold (a role
 * includes the weaker ones, as the original's basic roles inherit).
 */
export function effectiveLevel(grantee: Grantee, grants: readonly Grant[]): LevelNumber {
  if (grantee.orgRole === 'Admin') return 3;
  let best: LevelNumber = 0;
  for (const grant of grants) {
    if (grant.level <= best) continue;
    const applies = (grant.builtInRole != null && roleAtLeast(grantee.orgRole, grant.builtInRole))
      || (grant.userId != null && grantee.userId !== null && grant.userId === grantee.userId)
      || (grant.teamId != null && grantee.teamIds.includes(grant.teamId));
    if (applies) best = grant.level;
  }
  return best;
}

export function allows(level: LevelNumber, action: DataSourceAction): boolean {
  return level >= NEEDS[action];
}

export function levelFor(action: DataSourceAction): LevelNumber {
  return NEEDS[action];
}

/**
 * The built-in roles a caller holds (its role and the weaker ones), for the SQL twin of
 * `effectiveLevel`: none for a member whose role is `None`, nor for someone who is no member.
 */
export function heldRoles(orgRole: HeldRole): OrgRole[] {
  return ORG_ROLES.filter((role) => roleAtLeast(orgRole, role));
}
