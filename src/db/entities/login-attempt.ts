import { defineEntity, p } from '@mikro-orm/postgresql';

/** One failed password check; counted per login over a sliding window by the brute-force guard. */
export const LoginAttempt = defineEntity({
  name: 'LoginAttempt',
  tableName: 'login_attempt',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    username: p.string(),
    ipAddress: p.string().default(''),
    created: p.datetime().onCreate(() => new Date()),
  },
});
