/** The org roles, weakest first. A leaf module: config, entities, auth and the proxy policy share it. */
export const ORG_ROLES = ['Viewer', 'Editor', 'Admin'] as const;

export type OrgRole = (typeof ORG_ROLES)[number];

/** A caller's role in the org it acts in: 'None' when it is no member (a server admin may be none). */
export type OrgRoleOrNone = OrgRole | 'None';

const RANK: Record<OrgRoleOrNone, number> = { None: 0, Viewer: 1, Editor: 2, Admin: 3 };

/** Whether `have` is at least `need`. */
export function roleAtLeast(have: OrgRoleOrNone, need: OrgRole): boolean {
  return RANK[have] >= RANK[need];
}
