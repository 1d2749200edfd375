import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from '../db/entities/index.ts';
import { isBasicRole, type BasicRole } from '../roles.ts';
import { newLegacyApiKey } from '../auth/tokens.ts';
import { badRequest, conflict, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { assertStorableText, MAX_LOGIN_LENGTH } from './users.ts';

export interface NewApiKey {
  id: number;
  name: string;
  key: string;
}

/** api_key.name is a varchar(190), as user logins are. */
export const MAX_TOKEN_NAME_LENGTH = MAX_LOGIN_LENGTH;

/** A token lifetime in seconds: absent or 0 never expires; negative is refused as the original does. */
export function secondsToLive(value: number | null | undefined): number {
  const ttl = value ?? 0;
  if (ttl < 0) throw badRequest(MESSAGES.apiKey.negativeTtl);
  return ttl;
}

/** A role a token may act with: a basic role, `None` included (the original's since v10). */
export function parseRole(role: unknown): BasicRole {
  if (!isBasicRole(role)) throw badRequest(MESSAGES.apiKey.invalidRole);
  return role;
}

/** A legacy org API key. The token is returned once; only its hash is stored. */
export async function createApiKey(em: EntityManager, orgId: number, input: { name: string; role: string; secondsToLive?: number | null }): Promise<NewApiKey> {
  if (!input.name) throw badRequest();
  assertStorableText(input.name, 'name', MAX_TOKEN_NAME_LENGTH);
  const role = parseRole(input.role);
  const ttl = secondsToLive(input.secondsToLive);
  const { token, hash } = newLegacyApiKey(input.name, orgId);
  try {
    const row = em.create(ApiKey, {
      orgId,
      name: input.name,
      keyHash: hash,
      role,
      expires: ttl > 0 ? new Date(Date.now() + ttl * 1000) : null,
      isRevoked: false,
    });
    await em.flush();
    return { id: row.id, name: row.name, key: token };
  } catch (error) {
    if (uniqueViolation(error) !== null) throw conflict(MESSAGES.apiKey.nameTaken);
    throw error;
  }
}

export interface ApiKeyInfo {
  id: number;
  name: string;
  role: BasicRole;
  expiration: Date | null;
  isRevoked: boolean;
}

function info(row: InstanceType<typeof ApiKey.class>): ApiKeyInfo {
  return { id: row.id, name: row.name, role: row.role, expiration: row.expires ?? null, isRevoked: row.isRevoked };
}

/** The org's legacy API keys (service account tokens are listed under their account). */
export async function listApiKeys(em: EntityManager, orgId: number): Promise<ApiKeyInfo[]> {
  return (await em.find(ApiKey, { orgId, serviceAccountId: null }, { orderBy: { name: 'asc' } })).map(info);
}

export async function deleteApiKey(em: EntityManager, orgId: number, id: number): Promise<void> {
  if (!(await em.nativeDelete(ApiKey, { id, orgId, serviceAccountId: null }))) throw notFound(MESSAGES.apiKey.deleteFailed);
}

/** Revokes a key or token of the org: it fails from the next request on with "Revoked API key". */
export async function revokeApiKey(em: EntityManager, orgId: number, id: number): Promise<void> {
  if (!(await em.nativeUpdate(ApiKey, { id, orgId }, { isRevoked: true }))) throw notFound(MESSAGES.apiKey.notFound);
}
