import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, OrgUser, User } from '../db/entities/index.ts';
import { newServiceAccountToken } from '../auth/tokens.ts';
import { MAX_TOKEN_NAME_LENGTH, parseRole, secondsToLive } from './api-keys.ts';
import { badRequest, conflict, forbidden, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { roleAtLeast, type BasicRole, type HeldRole } from '../roles.ts';
import { containsPattern, pageWindow } from './paging.ts';
import { assertStorableText, MAX_LOGIN_LENGTH, MAX_NAME_LENGTH } from './users.ts';

export interface ServiceAccount {
  id: number;
  name: string;
  login: string;
  orgId: number;
  isDisabled: boolean;
  role: BasicRole;
  tokens: number;
}

export interface ServiceAccountToken {
  id: number;
  name: string;
  created: Date;
  lastUsedAt: Date | null;
  expiration: Date | null;
  /** Seconds left when the token expires within the next 7 days, else 0 (as the original reports it). */
  secondsUntilExpiration: number;
  hasExpired: boolean;
  isRevoked: boolean;
}

/** The account as an update answers it: the original's profile DTO. */
export interface ServiceAccountProfile extends ServiceAccount {
  createdAt: Date;
  updatedAt: Date;
}

/** One page of a search, and how many accounts matched in all. */
export interface ServiceAccountPage {
  totalCount: number;
  serviceAccounts: ServiceAccountProfile[];
  page: number;
  perPage: number;
}

export interface ServiceAccountSearch {
  /** Matched case-insensitively anywhere in the name, login or e-mail; '' matches all. */
  query?: string | null;
  /** 1-based; below 1 means 1. */
  page?: number | null;
  /** At most this many per page; 0 or less means the original's default of 1000. */
  perPage?: number | null;
  /** Only disabled accounts. */
  disabled?: boolean | null;
  /** Only accounts with at least one expired token. */
  expiredTokens?: boolean | null;
}

export interface ServiceAccountUpdate {
  name?: string | null;
  role?: string | null;
  isDisabled?: boolean | null;
}

export const DEFAULT_SEARCH_PAGE_SIZE = 1000;

/** Tokens expiring within this window report the seconds they have left. */
const SEVEN_DAYS_SECONDS = 7 * 24 * 3600;

/** The account's login: `sa-<orgId>-<name>`, lower-cased, each space a dash, as the original server makes it. */
export function serviceAccountLogin(orgId: number, name: string): string {
  return `sa-${orgId}-${name.toLowerCase().replaceAll(' ', '-')}`;
}

/** A service account is a user row that cannot log in, with a role in exactly one org. */
export async function createServiceAccount(em: EntityManager, orgId: number, input: { name: string; role?: string | null; isDisabled?: boolean | null }): Promise<ServiceAccount> {
  const name = input.name.trim();
  if (!name) throw badRequest(MESSAGES.serviceAccount.badRequest);
  // The login (and e-mail) column holds the prefixed name, so that is what must fit.
  assertStorableText(name, 'name', MAX_LOGIN_LENGTH - serviceAccountLogin(orgId, '').length);
  const role = input.role ? parseRole(input.role) : 'Viewer';
  const login = serviceAccountLogin(orgId, name);
  try {
    return await em.transactional(async (tx) => {
      const user = tx.create(User, {
        login,
        email: login,
        name,
        passwordHash: null,
        isAdmin: false,
        isDisabled: Boolean(input.isDisabled),
        isServiceAccount: true,
        orgId,
      });
      await tx.flush();
      tx.create(OrgUser, { orgId, userId: user.id, role });
      await tx.flush();
      return { id: user.id, name, login, orgId, isDisabled: user.isDisabled, role, tokens: 0 };
    });
  } catch (error) {
    // Same name in the org (or a user already holding that login): the original's v9.3 answer.
    if (uniqueViolation(error) !== null) throw badRequest(MESSAGES.serviceAccount.createFailed);
    throw error;
  }
}

/** The org's service accounts with their token counts, or just one of them when `id` is given. */
async function findServiceAccounts(em: EntityManager, orgId: number, id: number | null): Promise<ServiceAccount[]> {
  const rows = await em.execute<Array<{ id: number; name: string; login: string; is_disabled: boolean; role: BasicRole; tokens: string }>>(
    `select u.id, u.name, u.login, u.is_disabled, ou.role,
            (select count(*) from api_key k where k.service_account_id = u.id) as tokens
       from "user" u join org_user ou on ou.user_id = u.id and ou.org_id = ?
      where u.is_service_account and (cast(? as int) is null or u.id = ?)
      order by lower(u.name), u.id`,
    [orgId, id, id],
  );
  return rows.map((r) => ({ id: r.id, name: r.name, login: r.login, orgId, isDisabled: r.is_disabled, role: r.role, tokens: Number(r.tokens) }));
}

/**
 * Service accounts of several orgs (`orgIds`), or those of `ids` in any org, in one statement,
 * each org's ordered as `listServiceAccounts` orders them.
 */
export async function readServiceAccounts(em: EntityManager, by: { orgIds: readonly number[] } | { ids: readonly number[] }): Promise<ServiceAccountProfile[]> {
  const keys = 'orgIds' in by ? by.orgIds : by.ids;
  if (keys.length === 0) return [];
  const rows = await em.execute<Array<{ id: number; org_id: number; name: string; login: string; is_disabled: boolean; role: BasicRole; tokens: string; created: Date; updated: Date }>>(
    `select u.id, ou.org_id, u.name, u.login, u.is_disabled, ou.role, u.created, u.updated,
            (select count(*) from api_key k where k.service_account_id = u.id) as tokens
       from "user" u join org_user ou on ou.user_id = u.id
      where u.is_service_account and ${'orgIds' in by ? 'ou.org_id' : 'u.id'} = any(string_to_array(?, ',')::int[])
      order by lower(u.name), u.id`,
    [keys.join(',')],
  );
  return rows.map((r) => ({
    id: r.id, name: r.name, login: r.login, orgId: r.org_id, isDisabled: r.is_disabled, role: r.role, tokens: Number(r.tokens), createdAt: r.created, updatedAt: r.updated,
  }));
}

export function listServiceAccounts(em: EntityManager, orgId: number): Promise<ServiceAccount[]> {
  return findServiceAccounts(em, orgId, null);
}

/**
 * The search endpoint's page, in one statement: the total counts every match, the page holds at
 * most `perPage` of them ordered by e-mail then login (as the original sorts), and a page past
 * the end is empty with the total still right.
 */
export async function searchServiceAccounts(em: EntityManager, orgId: number, search: ServiceAccountSearch = {}): Promise<ServiceAccountPage> {
  const { page, perPage } = pageWindow(search, 1, DEFAULT_SEARCH_PAGE_SIZE);
  const query = search.query ?? '';
  assertStorableText(query, 'query', MAX_NAME_LENGTH);
  const pattern = containsPattern(query);
  const rows = await em.execute<Array<{ total: string; id: number | null; name: string; login: string; is_disabled: boolean; role: BasicRole; tokens: string; created: Date; updated: Date }>>(
    `with matched as (
       select u.id, u.name, u.login, u.email, u.is_disabled, ou.role, u.created, u.updated
         from "user" u join org_user ou on ou.user_id = u.id and ou.org_id = ?
        where u.is_service_account
          and (? = '' or u.email ilike ? or u.name ilike ? or u.login ilike ?)
          and (not ? or u.is_disabled)
          and (not ? or exists (select 1 from api_key k where k.service_account_id = u.id and k.expires < now()))
     )
     select t.total, p.id, p.name, p.login, p.is_disabled, p.role, p.created, p.updated,
            (select count(*) from api_key k where k.service_account_id = p.id) as tokens
       from (select count(*) as total from matched) t
       left join lateral (
         select * from matched order by email, login, id limit ? offset (cast(? as bigint) - 1) * ?
       ) p on true
      order by p.email, p.login, p.id`,
    [orgId, query, pattern, pattern, pattern, Boolean(search.disabled), Boolean(search.expiredTokens), perPage, page, perPage],
  );
  const serviceAccounts = rows
    .filter((r) => r.id !== null)
    .map((r) => ({ id: r.id!, name: r.name, login: r.login, orgId, isDisabled: r.is_disabled, role: r.role, tokens: Number(r.tokens), createdAt: r.created, updatedAt: r.updated }));
  return { totalCount: Number(rows[0]?.total ?? 0), serviceAccounts, page, perPage };
}

export async function getServiceAccount(em: EntityManager, orgId: number, id: number): Promise<ServiceAccount> {
  const [account] = await findServiceAccounts(em, orgId, id);
  if (!account) throw notFound(MESSAGES.serviceAccount.notFound);
  return account;
}

/**
 * PATCH semantics: only the fields given change (the login stays what it was created as). A role
 * above the caller's own is refused, as the original does. Disabling takes effect on every
 * instance from the next request: the write notifies their credential caches.
 */
export async function updateServiceAccount(
  em: EntityManager,
  orgId: number,
  id: number,
  input: ServiceAccountUpdate,
  callerRole: HeldRole,
): Promise<ServiceAccountProfile> {
  const role = input.role === undefined || input.role === null ? null : parseRole(input.role);
  if (role !== null && !roleAtLeast(callerRole, role)) throw forbidden(MESSAGES.serviceAccount.roleTooHigh);
  let name: string | null = null;
  if (input.name !== undefined && input.name !== null) {
    name = input.name.trim();
    if (!name) throw badRequest(MESSAGES.serviceAccount.badRequest);
    assertStorableText(name, 'name', MAX_NAME_LENGTH);
  }
  return em.transactional(async (tx) => {
    const [account] = await findServiceAccounts(tx, orgId, id);
    if (!account) throw notFound(MESSAGES.serviceAccount.notFound);
    if (role !== null) {
      await tx.nativeUpdate(OrgUser, { orgId, userId: id }, { role });
      // Its tokens act with the account's role (each carries a copy): they follow at once.
      await tx.nativeUpdate(ApiKey, { orgId, serviceAccountId: id }, { role });
    }
    const changes: { name?: string; isDisabled?: boolean; updated?: Date } = {};
    if (name !== null) changes.name = name;
    if (input.isDisabled !== undefined && input.isDisabled !== null) changes.isDisabled = input.isDisabled;
    if (role !== null || Object.keys(changes).length > 0) await tx.nativeUpdate(User, { id }, { ...changes, updated: new Date() });
    const [row] = await tx.execute<Array<{ created: Date; updated: Date }>>('select created, updated from "user" where id = ?', [id]);
    return {
      ...account,
      name: changes.name ?? account.name,
      isDisabled: changes.isDisabled ?? account.isDisabled,
      role: role ?? account.role,
      createdAt: new Date(row!.created),
      updatedAt: new Date(row!.updated),
    };
  });
}

export async function setServiceAccountDisabled(em: EntityManager, orgId: number, id: number, isDisabled: boolean): Promise<ServiceAccount> {
  await getServiceAccount(em, orgId, id);
  await em.nativeUpdate(User, { id }, { isDisabled });
  return getServiceAccount(em, orgId, id);
}

export async function deleteServiceAccount(em: EntityManager, orgId: number, id: number): Promise<void> {
  await getServiceAccount(em, orgId, id);
  await em.nativeDelete(User, { id, isServiceAccount: true });
}

/** A `glsa_` token acting as the account, in its org with its role. Shown once; stored hashed. */
export async function createServiceAccountToken(
  em: EntityManager,
  orgId: number,
  accountId: number,
  input: { name: string; secondsToLive?: number | null },
): Promise<{ id: number; name: string; key: string }> {
  const account = await getServiceAccount(em, orgId, accountId);
  if (!input.name.trim()) throw badRequest(MESSAGES.serviceAccount.badRequest);
  assertStorableText(input.name, 'name', MAX_TOKEN_NAME_LENGTH);
  const ttl = secondsToLive(input.secondsToLive);
  const { token, hash } = newServiceAccountToken();
  try {
    const row = em.create(ApiKey, {
      orgId,
      name: input.name,
      keyHash: hash,
      role: account.role,
      serviceAccountId: accountId,
      expires: ttl > 0 ? new Date(Date.now() + ttl * 1000) : null,
      isRevoked: false,
    });
    await em.flush();
    return { id: row.id, name: row.name, key: token };
  } catch (error) {
    if (uniqueViolation(error) !== null) throw conflict(MESSAGES.serviceAccount.tokenNameTaken);
    throw error;
  }
}

export async function listServiceAccountTokens(em: EntityManager, orgId: number, accountId: number): Promise<ServiceAccountToken[]> {
  await getServiceAccount(em, orgId, accountId);
  const rows = await em.find(ApiKey, { orgId, serviceAccountId: accountId }, { orderBy: { name: 'asc' } });
  return rows.map(tokenOf(Date.now()));
}

/** A service account's token as listed, with the account it belongs to. */
export interface OwnedServiceAccountToken extends ServiceAccountToken {
  orgId: number;
  serviceAccountId: number;
}

/**
 * Tokens of several service accounts (`accountIds`), or those of `ids`, in one statement, each
 * account's by name as `listServiceAccountTokens` lists them.
 */
export async function readServiceAccountTokens(em: EntityManager, by: { accountIds: readonly number[] } | { ids: readonly number[] }): Promise<OwnedServiceAccountToken[]> {
  const keys = 'accountIds' in by ? by.accountIds : by.ids;
  if (keys.length === 0) return [];
  const where = 'accountIds' in by ? { serviceAccountId: { $in: [...keys] } } : { id: { $in: [...keys] }, serviceAccountId: { $ne: null } };
  const rows = await em.find(ApiKey, where, { orderBy: { name: 'asc' } });
  const toToken = tokenOf(Date.now());
  return rows.map((r) => ({ ...toToken(r), orgId: r.orgId, serviceAccountId: r.serviceAccountId! }));
}

function tokenOf(now: number) {
  return (r: InstanceType<typeof ApiKey.class>): ServiceAccountToken => {
    const expiration = r.expires ?? null;
    const hasExpired = expiration !== null && expiration.getTime() < now;
    const left = expiration === null ? 0 : (expiration.getTime() - now) / 1000;
    return {
      id: r.id,
      name: r.name,
      created: r.created,
      lastUsedAt: r.lastUsedAt ?? null,
      expiration,
      secondsUntilExpiration: !hasExpired && left < SEVEN_DAYS_SECONDS ? Math.max(0, left) : 0,
      hasExpired,
      isRevoked: r.isRevoked,
    };
  };
}

export async function deleteServiceAccountToken(em: EntityManager, orgId: number, accountId: number, tokenId: number): Promise<void> {
  await getServiceAccount(em, orgId, accountId);
  if (!(await em.nativeDelete(ApiKey, { id: tokenId, orgId, serviceAccountId: accountId }))) throw notFound(MESSAGES.serviceAccount.tokenDeleteFailed);
}
