import { hash, randomBytes } from 'node:crypto';
import type { ChangeSubscriber } from '../db/change-listener.ts';
import type { Principal } from './principal.ts';

/**
 * Notified by database triggers (migration 20261123) on every write to "user", org_user and
 * api_key (`all`), and on every failed login (`login:<lower-case login>`, see migration 20261126000300).
 */
export const AUTH_CHANGE_CHANNEL = 'dashgate_auth_changed';

export interface VerifiedPrincipal {
  principal: Principal;
  /** Lower-case login of the password user, whose failed logins evict it; null for tokens. */
  login: string | null;
  /** When the token stops being valid, in ms since the epoch; null if never. */
  expiresAt: number | null;
  /** The token whose `last_used_at` is refreshed on use; null for passwords. */
  keyId: number | null;
  lastUsedAt: number;
}

/**
 * Authorization headers already verified against PostgreSQL, so a repeated call costs no query
 * and no password hashing. Correctness rests on invalidation, never on age:
 * - every instance empties it when the triggers above notify, and a hit is served only once the
 *   change barrier shows every change committed before its request arrived has been heard (the
 *   authenticator waits for it), so a write on any instance applies to the very next request;
 * - nothing is kept while the change listener is down, and it empties when that comes or goes;
 * - a lookup that overlapped an invalidation is used once but not kept (generation check);
 * - only successes are kept, so a wrong password always reaches brute-force protection.
 * Keys are digests of the header under a per-process random salt: no credential sits in memory
 * as is, and none can be checked offline against a key without the salt.
 */
export class PrincipalCache implements ChangeSubscriber {
  readonly #salt = randomBytes(32).toString('base64');
  readonly #entries = new Map<string, VerifiedPrincipal>();
  readonly #capacity: number;
  #generation = 0;
  #listening = false;

  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  /** Whether lookups may be served and kept (false while invalidations could be missed). */
  get active(): boolean {
    return this.#listening;
  }

  get generation(): number {
    return this.#generation;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** `scope`: what else the entry is valid for only (the client address, for a per-address lockout). */
  keyOf(authorization: string, orgIdHeader: string | undefined, scope = ''): string {
    // A one-shot salted digest: an HMAC object per request would cost several times more.
    return hash('sha256', `${this.#salt}\0${authorization}\0${orgIdHeader ?? ''}\0${scope}`, 'base64');
  }

  get(key: string): VerifiedPrincipal | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Keeps `entry` unless an invalidation happened since `generation` was read. */
  set(key: string, generation: number, entry: VerifiedPrincipal): void {
    if (!this.#listening || generation !== this.#generation) return;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    // Map keeps insertion order: the first key is the oldest.
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  #clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  #forgetLogin(login: string): void {
    this.#generation++;
    const lower = login.toLowerCase();
    for (const [key, entry] of this.#entries) if (entry.login === lower) this.#entries.delete(key);
  }

  notify(payload: string): void {
    if (payload.startsWith('login:')) this.#forgetLogin(payload.slice('login:'.length));
    else this.#clear();
  }

  reset(listening: boolean): void {
    this.#listening = listening;
    this.#clear();
  }
}
