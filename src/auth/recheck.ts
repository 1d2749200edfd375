import type { EntityManager } from '@mikro-orm/postgresql';
import { AUTH_ERRORS, type DomainError } from '../errors/domain.ts';
import type { BasicRole } from '../roles.ts';
import type { Principal } from './principal.ts';

/** What a principal resolves to now: its current rights, or the error its credentials would get. */
export type Rechecked =
  | { principal: Principal; expiresAt: number | null; credentialMark: string | null }
  | { error: DomainError };

/** One entry per token, or per user and the org it acts in: the unit a recheck answers for. */
export function recheckKey(principal: Principal): string {
  return principal.keyId !== undefined ? `key:${principal.keyId}` : `user:${principal.userId}:${principal.orgId}`;
}

interface KeyRow {
  id: number;
  role: BasicRole;
  expires: Date | string | null;
  is_revoked: boolean;
  sa_disabled: boolean | null;
}

interface UserRow {
  user_id: number;
  org_id: number;
  found: number | null;
  is_disabled: boolean | null;
  is_admin: boolean | null;
  mark: string | null;
  role: BasicRole | null;
}

/**
 * Reads again, in at most two statements whatever their number, what long-lived requests
 * (subscriptions) were authorized as: a token deleted, revoked or expired, a disabled service
 * account or user, a changed password, or a role changed or gone in the org. `credentialMark`
 * changes when a user's password does (a digest of its hash; the hash itself is not kept).
 */
export async function recheckPrincipals(em: EntityManager, principals: Iterable<Principal>): Promise<Map<string, Rechecked>> {
  const keys = new Map<number, Principal>();
  const users = new Map<string, Principal>();
  for (const principal of principals) {
    if (principal.keyId !== undefined) keys.set(principal.keyId, principal);
    else if (principal.userId !== null) users.set(recheckKey(principal), principal);
  }
  const results = new Map<string, Rechecked>();
  if (keys.size > 0) {
    const rows = await em.execute<KeyRow[]>(
      `select k.id, k.role, k.expires, k.is_revoked, u.is_disabled as sa_disabled
         from api_key k left join "user" u on u.id = k.service_account_id
        where k.id = any(string_to_array(?, ',')::int[])`,
      [[...keys.keys()].join(',')],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const [id, principal] of keys) results.set(`key:${id}`, keyResult(principal, byId.get(id)));
  }
  if (users.size > 0) {
    const list = [...users.values()];
    const rows = await em.execute<UserRow[]>(
      `select p.user_id, p.org_id, u.id as found, u.is_disabled, u.is_admin, md5(coalesce(u.password_hash, '')) as mark, ou.role
         from unnest(string_to_array(?, ',')::int[], string_to_array(?, ',')::int[]) as p(user_id, org_id)
         left join "user" u on u.id = p.user_id
         left join org_user ou on ou.user_id = p.user_id and ou.org_id = p.org_id`,
      [list.map((p) => p.userId).join(','), list.map((p) => p.orgId).join(',')],
    );
    const byKey = new Map(rows.map((row) => [`user:${row.user_id}:${row.org_id}`, row]));
    for (const [key, principal] of users) results.set(key, userResult(principal, byKey.get(key)));
  }
  return results;
}

function keyResult(principal: Principal, row: KeyRow | undefined): Rechecked {
  if (!row) return { error: AUTH_ERRORS.invalidKey() };
  if (row.is_revoked) return { error: AUTH_ERRORS.revokedKey() };
  const expiresAt = row.expires ? new Date(row.expires).getTime() : null;
  if (expiresAt !== null && expiresAt <= Date.now()) return { error: AUTH_ERRORS.expiredKey() };
  if (row.sa_disabled) return { error: AUTH_ERRORS.disabled() };
  return { principal: { ...principal, orgRole: row.role }, expiresAt, credentialMark: null };
}

function userResult(principal: Principal, row: UserRow | undefined): Rechecked {
  if (!row || row.found === null) return { error: AUTH_ERRORS.unauthorized() };
  if (row.is_disabled) return { error: AUTH_ERRORS.disabled() };
  return {
    principal: { ...principal, orgRole: row.role ?? null, isServerAdmin: Boolean(row.is_admin) },
    expiresAt: null,
    credentialMark: principal.method === 'basic' ? row.mark : null,
  };
}
