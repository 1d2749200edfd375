import { defineEntity, p } from '@mikro-orm/postgresql';

/** A global user. Service accounts are users too (`isServiceAccount`), as in the original server. */
export const User = defineEntity({
  name: 'User',
  tableName: 'user',
  properties: {
    id: p.integer().primary().autoincrement(),
    login: p.string(),
    email: p.string(),
    name: p.string().default(''),
    theme: p.string().default(''),
    // argon2id PHC string; null for service accounts, which cannot log in with a password.
    passwordHash: p.text().nullable(),
    isAdmin: p.boolean().default(false),
    isDisabled: p.boolean().default(false),
    isServiceAccount: p.boolean().default(false),
    // The org the user acts in when a request names none; null once it belongs to no org.
    orgId: p.integer().nullable(),
    lastSeenAt: p.datetime().nullable(),
    created: p.datetime().onCreate(() => new Date()),
    updated: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
