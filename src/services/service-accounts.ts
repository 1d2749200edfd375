import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, OrgUser, User, type OrgRole } from '../db/entities/index.ts';
import { newServiceAccountToken } from '../auth/tokens.ts';
import { MAX_TOKEN_NAME_LENGTH, parseRole, secondsToLive } from './api-keys.ts';
import { badRequest, conflict, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { assertStorableText, MAX_LOGIN_LENGTH } from './users.ts';

export interface ServiceAccount {
  id: number;
  name: string;
  login: string;
  orgId: number;
  isDisabled: boolean;
  role: OrgRole;
  tokens: number;
}

export interface ServiceAccountToken {
  id: number;
  name: string;
  expiration: Date | null;
  isRevoked: boolean;
  lastUsedAt: Date | null;
}


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
  const rows = await em.execute<Array<{ id: number; name: string; login: string; is_disabled: boolean; role: OrgRole; tokens: string }>>(
    `select u.id, u.name, u.login, u.is_disabled, ou.role,
            (select count(*) from api_key k where k.service_account_id = u.id) as tokens
       from "user" u join org_user ou on ou.user_id = u.id and ou.org_id = ?
      where u.is_service_account and (cast(? as int) is null or u.id = ?)
      order by lower(u.name), u.id`,
    [orgId, id, id],
  );
  return rows.map((r) => ({ id: r.id, name: r.name, login: r.login, orgId, isDisabled: r.is_disabled, role: r.role, tokens: Number(r.tokens) }));
}

export function listServiceAccounts(em: EntityManager, orgId: number): Promise<ServiceAccount[]> {
  return findServiceAccounts(em, orgId, null);
}

export async function getServiceAccount(em: EntityManager, orgId: number, id: number): Promise<ServiceAccount> {
  const [account] = await findServiceAccounts(em, orgId, id);
  if (!account) throw notFound(MESSAGES.serviceAccount.notFound);
  return account;
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
  return rows.map((r) => ({ id: r.id, name: r.name, expiration: r.expires ?? null, isRevoked: r.isRevoked, lastUsedAt: r.lastUsedAt ?? null }));
}

export async function deleteServiceAccountToken(em: EntityManager, orgId: number, accountId: number, tokenId: number): Promise<void> {
  await getServiceAccount(em, orgId, accountId);
  if (!(await em.nativeDelete(ApiKey, { id: tokenId, orgId, serviceAccountId: accountId }))) throw notFound(MESSAGES.serviceAccount.tokenDeleteFailed);
}
