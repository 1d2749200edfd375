import { defineEntity, p } from '@mikro-orm/postgresql';

/** Encrypted secrets: key -> base64(iv | auth tag | ciphertext), bound to their row and key name, see db/secrets.ts. */
export type EncryptedSecrets = Record<string, string>;

export const DataSource = defineEntity({
  name: 'DataSource',
  tableName: 'data_source',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    uid: p.string(),
    name: p.string(),
    type: p.string(),
    access: p.string(),
    url: p.text().default(''),
    user: p.string().default(''),
    database: p.string().default(''),
    basicAuth: p.boolean().default(false),
    basicAuthUser: p.string().default(''),
    withCredentials: p.boolean().default(false),
    isDefault: p.boolean().default(false),
    jsonData: p.json<Record<string, unknown>>(),
    secureJsonData: p.json<EncryptedSecrets>(),
    version: p.integer().default(1),
    readOnly: p.boolean().default(false),
    // Provisioned from a file with `prune: true`: deleted once no file declares it.
    isPrunable: p.boolean().default(false),
    created: p.datetime().onCreate(() => new Date()),
    updated: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
