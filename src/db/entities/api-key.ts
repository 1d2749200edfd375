import { defineEntity, p } from '@mikro-orm/postgresql';
import type { BasicRole } from '../../roles.ts';

/**
 * An org-scoped bearer token: a legacy API key, or a service account token when
 * `serviceAccountId` is set. Only a SHA-256 of the secret is stored; the token is high-entropy,
 * so a fast hash is enough and lookups are a single indexed equality.
 */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    name: p.string(),
    keyHash: p.string().unique(),
    role: p.string().$type<BasicRole>(),
    serviceAccountId: p.integer().nullable(),
    expires: p.datetime().nullable(),
    isRevoked: p.boolean().default(false),
    lastUsedAt: p.datetime().nullable(),
    created: p.datetime().onCreate(() => new Date()),
  },
});
