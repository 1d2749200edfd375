import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from './config/settings.ts';
import { ensureMainOrg } from './services/orgs.ts';
import { ensureAdminUser } from './services/users.ts';

/** First-start state: the main org and the configured server admin. Idempotent. */
export async function bootstrap(em: EntityManager, settings: Settings): Promise<void> {
  const orgId = await ensureMainOrg(em);
  await ensureAdminUser(em, {
    login: settings.security.adminUser,
    email: settings.security.adminEmail,
    password: settings.security.adminPassword,
    orgId,
  });
}
