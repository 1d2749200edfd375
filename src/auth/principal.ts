import type { OrgRole } from '../db/entities/index.ts';

/** Who is calling, resolved once per request by the authenticator. */
export interface Principal {
  kind: 'user' | 'service-account' | 'api-key';
  /** The user or service account id; null for a legacy API key, which has no user. */
  userId: number | null;
  login: string;
  orgId: number;
  orgRole: OrgRole | 'None';
  /** The server-admin permission; only users authenticated by password can carry it. */
  isServerAdmin: boolean;
  method: 'basic' | 'token';
}

const RANK: Record<OrgRole | 'None', number> = { None: 0, Viewer: 1, Editor: 2, Admin: 3 };

export function hasOrgRole(principal: Principal, role: OrgRole): boolean {
  return RANK[principal.orgRole] >= RANK[role];
}
