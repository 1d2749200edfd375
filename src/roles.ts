/** The org roles, weakest first. A leaf module: config, entities, auth and the proxy policy share it. */
export const ORG_ROLES = ['Viewer', 'Editor', 'Admin'] as const;

/** The roles that carry permissions of their own (and that data source grants name). */
export type OrgRole = (typeof ORG_ROLES)[number];

/**
 * Every basic role a member of an org may hold, weakest first: `None` (the original's since v10)
 * is a member with no permission of its own, who sees only what teams and per-resource grants give.
 */
export const BASIC_ROLES = ['None', 'Viewer', 'Editor', 'Admin'] as const;
export type BasicRole = (typeof BASIC_ROLES)[number];

/** A caller's role in an org: its basic role as a member (`None` included), or null when it is no member. */
export type HeldRole = BasicRole | null;

const RANK: Record<BasicRole, number> = { None: 0, Viewer: 1, Editor: 2, Admin: 3 };

/** Whether `have` is at least `need`; someone who is no member (null) holds nothing, not even `None`. */
export function roleAtLeast(have: HeldRole, need: BasicRole): boolean {
  return have !== null && RANK[have] >= RANK[need];
}

export function isBasicRole(value: unknown): value is BasicRole {
  return typeof value === 'string' && (BASIC_ROLES as readonly string[]).includes(value);
}
