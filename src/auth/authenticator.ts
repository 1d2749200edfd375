import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeBarrier, ChangeListener } from '../db/change-listener.ts';
import type { OrgRole } from '../db/entities/index.ts';
import { resolveEntityManager, type LazyEntityManager } from '../db/orm.ts';
import { AUTH_ERRORS } from '../errors/domain.ts';
import { VerifiedCredentialCache } from './credential-cache.ts';
import { decoyHash, verifyPassword } from './passwords.ts';
import type { Principal } from './principal.ts';
import { AUTH_CHANGE_CHANNEL, PrincipalCache, type VerifiedPrincipal } from './principal-cache.ts';
import { decodeToken } from './tokens.ts';

export interface AuthenticatorOptions {
  basicAuthEnabled: boolean;
  bruteForceProtection: boolean;
  maxLoginAttempts: number;
  /** Disables the verified-credential and principal caches (for benchmarks comparing with and without). */
  cacheCredentials?: boolean;
}

export interface Credentials {
  authorization: string | undefined;
  /** `X-Grafana-Org-Id`: act in another org the user belongs to. */
  orgIdHeader: string | undefined;
  ip: string;
  /** The change barrier's mark when the request arrived, if the caller took one to share. */
  changeMark?: number;
}


const LOGIN_WINDOW = "interval '5 minutes'";
/** How often a token's `last_used_at` is refreshed: a write per request would be wasteful. */
const LAST_USED_RESOLUTION_MS = 5 * 60_000;

interface UserRow {
  id: number;
  login: string;
  password_hash: string | null;
  is_admin: boolean;
  is_disabled: boolean;
  org_id: number | null;
  role: OrgRole | null;
  attempts: string;
}

interface KeyRow {
  id: number;
  org_id: number;
  name: string;
  role: OrgRole;
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
  readonly #cache = new VerifiedCredentialCache();
  /** Verified headers, served only once the change barrier shows nothing newer is pending. */
  readonly principals = new PrincipalCache();
  #changes: ChangeBarrier | null = null;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
  }

  /** Turns the principal cache on, kept in step with the database by `changes`. */
  followChanges(changes: ChangeListener): void {
    changes.subscribe(AUTH_CHANGE_CHANNEL, this.principals);
    this.#changes = changes;
  }

  async authenticate(db: LazyEntityManager, credentials: Credentials): Promise<Principal | null> {
    const header = credentials.authorization?.trim();
    if (!header) return null;
    const changes = this.#changes;
    if (this.#options.cacheCredentials === false || !changes || !this.principals.active) {
      return (await this.#verify(resolveEntityManager(db), header, credentials)).principal;
    }
    const mark = credentials.changeMark ?? changes.mark();
    const key = this.principals.keyOf(header, credentials.orgIdHeader);
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

  async #password(em: EntityManager, login: string, password: string, credentials: Credentials): Promise<VerifiedPrincipal> {
    if (password === '' || login === '') throw AUTH_ERRORS.badPassword();
    // PostgreSQL cannot even compare text holding NUL, and no stored login has one: an unknown user.
    if (login.includes('\0')) {
      await verifyPassword(await decoyHash(), password);
      throw AUTH_ERRORS.badPassword();
    }
    const requestedOrg = parseOrgId(credentials.orgIdHeader);
    // One round trip: the user, its role in the org it acts in, and its recent failed attempts.
    const rows = await em.execute<UserRow[]>(
      `select u.id, u.login, u.password_hash, u.is_admin, u.is_disabled, u.org_id, ou.role,
              (select count(*) from login_attempt la
                where la.username = lower(u.login) and la.created > now() - ${LOGIN_WINDOW}) as attempts
         from "user" u
         left join org_user ou on ou.user_id = u.id and ou.org_id = coalesce(cast(? as bigint), u.org_id)
        where (lower(u.login) = lower(?) or lower(u.email) = lower(?)) and not u.is_service_account
        order by (lower(u.login) = lower(?)) desc
        limit 1`,
      [requestedOrg, login, login, login],
    );
    const user = rows[0];
    if (!user || !user.password_hash) {
      await verifyPassword(await decoyHash(), password);
      throw AUTH_ERRORS.badPassword();
    }
    if (this.#options.bruteForceProtection && Number(user.attempts) >= this.#options.maxLoginAttempts) {
      throw AUTH_ERRORS.blocked();
    }
    const cached = this.#options.cacheCredentials !== false && this.#cache.has(user.id, user.password_hash, password);
    if (!cached) {
      if (!(await verifyPassword(user.password_hash, password))) {
        if (this.#options.bruteForceProtection) {
          await em.execute('insert into login_attempt (username, ip_address) values (lower(?), ?)', [user.login, credentials.ip]);
        }
        throw AUTH_ERRORS.badPassword();
      }
      this.#cache.add(user.id, user.password_hash, password);
    }
    if (user.is_disabled) throw AUTH_ERRORS.disabled();
    if (requestedOrg !== null && !user.role) throw AUTH_ERRORS.unauthorized();
    const principal: Principal = {
      kind: 'user',
      userId: user.id,
      login: user.login,
      // A user that belongs to no org acts in none (0), with no role: only its own routes work.
      orgId: requestedOrg ?? user.org_id ?? 0,
      orgRole: user.role ?? 'None',
      isServerAdmin: user.is_admin,
      method: 'basic',
    };
    return { principal, login: user.login.toLowerCase(), expiresAt: null, keyId: null, lastUsedAt: 0 };
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
    const requestedOrg = parseOrgId(orgIdHeader);
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

function parseOrgId(header: string | undefined): number | null {
  if (header === undefined || header === '') return null;
  const id = Number(header);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}
