import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from './config/settings.ts';
import { ensureMainOrg } from './services/orgs.ts';
import { hashPassword } from './auth/passwords.ts';
import { ensureAdminUser } from './services/users.ts';

/**
 * First-start state: the main org and the configured server admin. Idempotent. `adminPasswordHash`:
 * the admin's password hashed ahead (see hashAdminPassword), used if the admin is created.
 */
export async function bootstrap(em: EntityManager, settings: Settings, adminPasswordHash?: Promise<string>): Promise<void> {
  const orgId = await ensureMainOrg(em);
  await ensureAdminUser(em, {
    login: settings.security.adminUser,
    email: settings.security.adminEmail,
    password: settings.security.adminPassword,
    passwordHash: adminPasswordHash,
    orgId,
  });
}

/**
 * The configured admin's password hash, for bootstrap on a database that is still to be migrated
 * (and so has no admin yet): argon2 runs on libuv's threads while the migrations run, rather than
 * after them. Never rejects unheard: bootstrap awaits it only when it creates the admin.
 */
export function hashAdminPassword(settings: Settings): Promise<string> {
  const hashing = hashPassword(settings.security.adminPassword);
  hashing.catch(() => {});
  return hashing;
}
