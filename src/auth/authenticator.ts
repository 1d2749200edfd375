import { hash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeBarrier, ChangeListener } from '../db/change-listener.ts';
import type { BasicRole } from '../roles.ts';
import { resolveEntityManager, type LazyEntityManager } from '../db/orm.ts';
import { AUTH_ERRORS } from '../errors/domain.ts';
import { clientAddress, limiterKey, TrustedProxies } from '../net/client-address.ts';
import { VerifiedCredentialCache } from './credential-cache.ts';
import { decoyHash, verifyPassword } from './passwords.ts';
import type { Principal } from './principal.ts';
import { AUTH_CHANGE_CHANNEL, PrincipalCache, type VerifiedPrincipal } from './principal-cache.ts';
import { parseOrgIdHeader } from './org-header.ts';
import { decodeToken } from './tokens.ts';

export interface AuthenticatorOptions {
  basicAuthEnabled: boolean;
  bruteForceProtection: boolean;
  maxLoginAttempts: number;
  /** Failed logins count per login and client address (`[security] disable_ip_address_login_protection` off). */
  loginProtectionByAddress: boolean;
  /** `[server] trusted_proxies`: peers whose X-Forwarded-For names the client. */
  trustedProxies: readonly string[];
  /** Disables the verified-credential and principal caches (for benchmarks comparing with and without). */
  cacheCredentials?: boolean;
}

export interface Credentials {
  authorization: string | undefined;
  /** `X-Grafana-Org-Id`: act in another org the user belongs to. */
  orgIdHeader: string | undefined;
  /** The connection's peer address. */
  ip: string;
  /** The request's X-Forwarded-For, believed only when `ip` is a trusted proxy. */
  forwardedFor?: string | string[];
  /** The change barrier's mark when the request arrived, if the caller took one to share. */
  changeMark?: number;
}

/** How long a failed login counts, as in the original server. */
const LOGIN_WINDOW = '5 minutes';
/** How long a password check waits for a slot held by checks under way before it is refused. */
const RESERVATION_WAIT_MS = 5_000;
/** How often a token's `last_used_at` is refreshed: a write per request would be wasteful. */
const LAST_USED_RESOLUTION_MS = 5 * 60_000;

type Verdict = 'right' | 'wrong' | 'blocked';

/** The login lookup's one row: the user's columns all null when no user has that login. */
interface UserRow {
  id: number | null;
  login: string | null;
  password_hash: string | null;
  is_admin: boolean;
  is_disabled: boolean;
  org_id: number | null;
  role: BasicRole | null;
  attempts: string;
}

type KnownUserRow = UserRow & { id: number; login: string; password_hash: string };

/** Width of login_attempt.username: an attempt for a longer login is recorded under its start. */
const MAX_ATTEMPT_LOGIN_LENGTH = 190;

interface KeyRow {
  id: number;
  org_id: number;
  name: string;
  role: BasicRole;
  expires: Date | string | null;
  is_revoked: boolean;
  last_used_at: Date | string | null;
  service_account_id: number | null;
  sa_login: string | null;
  sa_disabled: boolean | null;
}

/**
 * Resolves the Authorization header to a principal. Basic: a user's login or e-mail and password
 * (or `api_key:<token>`); Bearer: an org-scoped token. Returns null when there are no credentials.
 */
export class Authenticator {
  readonly #options: AuthenticatorOptions;
  readonly #trustedProxies: TrustedProxies;
  readonly #cache = new VerifiedCredentialCache();
  /** Password checks under way, by salted digest of user, stored hash, address and password. */
  readonly #checks = new Map<string, Promise<Verdict>>();
  readonly #checkSalt = randomBytes(32).toString('base64');
  /** Verified headers, served only once the change barrier shows nothing newer is pending. */
  readonly principals = new PrincipalCache();
  #changes: ChangeBarrier | null = null;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
    this.#trustedProxies = new TrustedProxies(options.trustedProxies);
  }

  /** The client address failed logins are recorded (and, by default, counted) under: IPv6 by its /64. */
  clientAddress(credentials: Pick<Credentials, 'ip' | 'forwardedFor'>): string {
    return limiterKey(clientAddress(credentials.ip, credentials.forwardedFor, this.#trustedProxies));
  }

  /**
   * What besides the header a cached Basic principal is keyed by: its client address when the
   * lockout is per address. Otherwise a client locked out from its address could still have its
   * guesses answered by an entry that a caller at another address put in the cache.
   */
  #principalScope(header: string, credentials: Credentials): string {
    if (!this.#options.bruteForceProtection || !this.#options.loginProtectionByAddress) return '';
    return /^basic /i.test(header) ? this.clientAddress(credentials) : '';
  }

  /** Turns the principal cache on, kept in step with the database by `changes`. */
  followChanges(changes: ChangeListener): void {
    changes.subscribe(AUTH_CHANGE_CHANNEL, this.principals);
    this.#changes = changes;
  }

  async authenticate(db: LazyEntityManager, credentials: Credentials): Promise<Principal | null> {
    const header = credentials.authorization?.trim();
    if (!header) return null;
    // A malformed org header is refused before anything is looked up or cached.
    parseOrgIdHeader(credentials.orgIdHeader);
    const changes = this.#changes;
    if (this.#options.cacheCredentials === false || !changes || !this.principals.active) {
      return (await this.#verify(resolveEntityManager(db), header, credentials)).principal;
    }
    const mark = credentials.changeMark ?? changes.mark();
    const key = this.principals.keyOf(header, credentials.orgIdHeader, this.#principalScope(header, credentials));
    if (this.principals.get(key)) {
      // Another instance may have changed this caller just before the request came: wait until
      // every change committed by then has been heard, then look again.
      const caughtUp = changes.caughtUp(mark);
      const hit = (caughtUp === true || (caughtUp !== false && (await caughtUp))) && this.principals.get(key);
      if (hit) {
        if (needsTouch(hit)) await this.#touch(resolveEntityManager(db), hit);
        return hit.principal;
      }
    }
    const generation = this.principals.generation;
    const verified = await this.#verify(resolveEntityManager(db), header, credentials);
    this.principals.set(key, generation, verified);
    return verified.principal;
  }

  async #verify(em: EntityManager, header: string, credentials: Credentials): Promise<VerifiedPrincipal> {
    const space = header.indexOf(' ');
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme === 'bearer') return this.#token(em, value, credentials.orgIdHeader);
    if (scheme === 'basic') {
      const decoded = decodeBasic(value);
      if (!decoded) throw AUTH_ERRORS.unauthorized();
      if (decoded.user === 'api_key') return this.#token(em, decoded.password, credentials.orgIdHeader);
      if (!this.#options.basicAuthEnabled) throw AUTH_ERRORS.unauthorized();
      return this.#password(em, decoded.user, decoded.password, credentials);
    }
    throw AUTH_ERRORS.unauthorized();
  }

  /** Refreshes a token's `last_used_at`, at most once per LAST_USED_RESOLUTION_MS and process. */
  async #touch(em: EntityManager, verified: VerifiedPrincipal): Promise<void> {
    if (!needsTouch(verified)) return;
    verified.lastUsedAt = Date.now();
    await em.execute('update api_key set last_used_at = now() where id = ?', [verified.keyId]);
  }

  /**
   * Basic with a login and password. With brute-force protection on, a password that is not
   * already known to be right is checked only under a reservation: a pending attempt recorded
   * atomically with the count of recent ones (see migration 20261126000300), so at most
   * `maxLoginAttempts` wrong passwords are ever checked in the window for one login (and client
   * address), however many requests arrive at once, on however many instances. A wrong password
   * leaves its attempt as a failure; a right one removes it.
   */
  async #password(em: EntityManager, login: string, password: string, credentials: Credentials): Promise<VerifiedPrincipal> {
    if (password === '' || login === '') throw AUTH_ERRORS.badPassword();
    // PostgreSQL cannot even compare text holding NUL, and no stored login has one: an unknown user.
    if (login.includes('\0')) {
      await verifyPassword(await decoyHash(), password);
      throw AUTH_ERRORS.badPassword();
    }
    const protection = this.#options.bruteForceProtection;
    const byAddress = this.#options.loginProtectionByAddress;
    const address = this.clientAddress(credentials);
    const requestedOrg = parseOrgIdHeader(credentials.orgIdHeader);
    // Failures count under the user's login, or under the login as given when there is no such
    // user (cut to the column: no longer login exists): unknown logins are limited exactly as known
    // ones, so that neither the answer nor its time tells which logins exist.
    const asGiven = login.slice(0, MAX_ATTEMPT_LOGIN_LENGTH);
    // One round trip: the user (if any), its role in the org it acts in, and the recent failed
    // attempts from this address, or from any when the lockout is per login.
    const rows = await em.execute<UserRow[]>(
      `select u.id, u.login, u.password_hash, u.is_admin, u.is_disabled, u.org_id, u.role,
              (select failed from dashgate_login_attempt_counts(lower(coalesce(u.login, ?)), ?, ?, cast(? as interval))) as attempts
         from (select 1) as one
         left join lateral (
           select u.id, u.login, u.password_hash, u.is_admin, u.is_disabled, u.org_id, ou.role
             from "user" u
             left join org_user ou on ou.user_id = u.id and ou.org_id = coalesce(cast(? as bigint), u.org_id)
            where (lower(u.login) = lower(?) or lower(u.email) = lower(?)) and not u.is_service_account
            order by (lower(u.login) = lower(?)) desc
            limit 1
         ) u on true`,
      [asGiven, address, byAddress, LOGIN_WINDOW, requestedOrg, login, login, login],
    );
    const row = rows[0]!;
    if (protection && Number(row.attempts) >= this.#options.maxLoginAttempts) throw AUTH_ERRORS.blocked();
    if (row.id === null || row.login === null || !row.password_hash) {
      // The same check, reservation and cost as for a user's wrong password, on a decoy hash.
      if ((await this.#checkReserved(em, row.login ?? asGiven, await decoyHash(), password, address)) === 'blocked') throw AUTH_ERRORS.blocked();
      throw AUTH_ERRORS.badPassword();
    }
    const user = row as KnownUserRow;
    const cached = this.#options.cacheCredentials !== false && this.#cache.has(user.id, user.password_hash, password);
    if (!cached) {
      const verdict = await this.#check(em, user, password, address);
      if (verdict === 'blocked') throw AUTH_ERRORS.blocked();
      if (verdict === 'wrong') throw AUTH_ERRORS.badPassword();
      this.#cache.add(user.id, user.password_hash, password);
    }
    if (user.is_disabled) throw AUTH_ERRORS.disabled();
    if (requestedOrg !== null && !user.role) throw AUTH_ERRORS.unauthorized();
    const principal: Principal = {
      kind: 'user',
      userId: user.id,
      login: user.login,
      // A user that belongs to no org acts in none (0), as no member: only its own routes work.
      orgId: requestedOrg ?? user.org_id ?? 0,
      orgRole: user.role ?? null,
      isServerAdmin: user.is_admin,
      method: 'basic',
    };
    return { principal, login: user.login.toLowerCase(), expiresAt: null, keyId: null, lastUsedAt: 0 };
  }

  /**
   * Whether `password` is the user's, or 'blocked' when no attempt may be reserved to check it.
   * Checked at most once at a time per instance for the same user, password and address:
   * concurrent identical requests share the check and its reservation.
   */
  #check(em: EntityManager, user: KnownUserRow, password: string, address: string): Promise<Verdict> {
    // Sharing a check is a cache of sorts: off when benchmarks measure without caches.
    if (this.#options.cacheCredentials === false) return this.#checkReserved(em, user.login, user.password_hash, password, address);
    const key = hash('sha256', `${this.#checkSalt}\0${user.id}\0${user.password_hash}\0${address}\0${password}`, 'base64');
    let check = this.#checks.get(key);
    if (!check) {
      check = this.#checkReserved(em, user.login, user.password_hash, password, address).finally(() => this.#checks.delete(key));
      this.#checks.set(key, check);
    }
    return check;
  }

  /** `passwordHash` checked under a reservation for `login` (a decoy hash for a login no user has). */
  async #checkReserved(em: EntityManager, login: string, passwordHash: string, password: string, address: string): Promise<Verdict> {
    if (!this.#options.bruteForceProtection) return (await verifyPassword(passwordHash, password)) ? 'right' : 'wrong';
    const reservation = await this.#reserveAttempt(em, login, address);
    if (reservation === null) return 'blocked';
    const right = await verifyPassword(passwordHash, password).catch(async (error: unknown) => {
      // Not checked after all: the slot goes back.
      await em.execute('delete from login_attempt where id = ?', [reservation]);
      throw error;
    });
    // A wrong password leaves its attempt as a failure (which tells every instance); a right
    // one frees its slot.
    if (right) await em.execute('delete from login_attempt where id = ?', [reservation]);
    else await em.execute('update login_attempt set pending = false where id = ?', [reservation]);
    return right ? 'right' : 'wrong';
  }

  /**
   * The id of a pending attempt for `login` from `address`, or null once its failures reach the
   * limit. While checks under way hold the free slots, waits for one to end (with backoff, for at
   * most RESERVATION_WAIT_MS): a burst of requests from a legitimate client is served, slowly,
   * rather than refused.
   */
  async #reserveAttempt(em: EntityManager, login: string, address: string): Promise<string | null> {
    const deadline = Date.now() + RESERVATION_WAIT_MS;
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      const [row] = await em.execute<Array<{ reserved: string | null; busy: boolean }>>(
        'select reserved, busy from dashgate_reserve_login_attempt(lower(?), ?, ?, ?, cast(? as interval))',
        [login, address, this.#options.loginProtectionByAddress, this.#options.maxLoginAttempts, LOGIN_WINDOW],
      );
      if (row?.reserved) return row.reserved;
      if (!row?.busy || Date.now() + pause > deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  async #token(em: EntityManager, token: string, orgIdHeader: string | undefined): Promise<VerifiedPrincipal> {
    const decoded = decodeToken(token);
    if (!decoded) throw AUTH_ERRORS.invalidKey();
    const rows = await em.execute<KeyRow[]>(
      `select k.id, k.org_id, k.name, k.role, k.expires, k.is_revoked, k.last_used_at, k.service_account_id,
              u.login as sa_login, u.is_disabled as sa_disabled
         from api_key k left join "user" u on u.id = k.service_account_id
        where k.key_hash = ?`,
      [decoded.hash],
    );
    const key = rows[0];
    if (!key || (decoded.orgId !== undefined && (decoded.orgId !== key.org_id || decoded.name !== key.name))) {
      throw AUTH_ERRORS.invalidKey();
    }
    if (key.is_revoked) throw AUTH_ERRORS.revokedKey();
    if (key.expires && new Date(key.expires).getTime() <= Date.now()) throw AUTH_ERRORS.expiredKey();
    if (key.sa_disabled) throw AUTH_ERRORS.disabled();
    const requestedOrg = parseOrgIdHeader(orgIdHeader);
    if (requestedOrg !== null && requestedOrg !== key.org_id) throw AUTH_ERRORS.wrongOrg();
    const verified: VerifiedPrincipal = {
      principal: {
        kind: key.service_account_id ? 'service-account' : 'api-key',
        userId: key.service_account_id,
        login: key.sa_login ?? `api-key:${key.name}`,
        orgId: key.org_id,
        orgRole: key.role,
        isServerAdmin: false,
        method: 'token',
        keyId: key.id,
      },
      login: null,
      expiresAt: key.expires ? new Date(key.expires).getTime() : null,
      keyId: key.id,
      lastUsedAt: key.last_used_at ? new Date(key.last_used_at).getTime() : 0,
    };
    await this.#touch(em, verified);
    return verified;
  }
}

function needsTouch(verified: VerifiedPrincipal): boolean {
  return verified.keyId !== null && Date.now() - verified.lastUsedAt > LAST_USED_RESOLUTION_MS;
}

function decodeBasic(value: string): { user: string; password: string } | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value === '') return null;
  const text = Buffer.from(value, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}


