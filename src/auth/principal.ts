import type { HeldRole } from '../roles.ts';

/** Who is calling, resolved once per request by the authenticator. */
export interface Principal {
  kind: 'user' | 'service-account' | 'api-key';
  /** The user or service account id; null for a legacy API key, which has no user. */
  userId: number | null;
  login: string;
  orgId: number;
  orgRole: HeldRole;
  /** The server-admin permission; only users authenticated by password can carry it. */
  isServerAdmin: boolean;
  method: 'basic' | 'token';
  /** The token authenticated with, so long-lived requests can check it again. */
  keyId?: number;
}
