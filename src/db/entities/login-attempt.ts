import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * One password check of a login that is under way (`pending`) or failed; counted per login (and
 * client address) over a sliding window by the brute-force guard. See migration 20261126000300.
 */
export const LoginAttempt = defineEntity({
  name: 'LoginAttempt',
  tableName: 'login_attempt',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    username: p.string(),
    ipAddress: p.string().default(''),
    pending: p.boolean().default(false),
    created: p.datetime().onCreate(() => new Date()),
  },
});
