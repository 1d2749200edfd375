import type { EntityManager } from '@mikro-orm/postgresql';
import { bootstrap } from '../bootstrap.ts';
import type { Settings } from '../config/settings.ts';
import { Org } from '../db/entities/index.ts';
import { migrate, type Database } from '../db/orm.ts';
import { createApiKey } from '../services/api-keys.ts';
import { updatePassword } from '../services/users.ts';

/** A failure worth a one-line message and exit code 1 (as opposed to a usage error, code 2). */
export class CommandError extends Error {}

/**
 * Brings the schema up to date and makes sure the main org and admin exist, exactly as a starting
 * server does (under the same advisory lock), so commands work on a database no server has opened yet.
 */
export async function prepare(db: Database, settings: Settings): Promise<void> {
  await migrate(db.orm, db.connection, () => bootstrap(db.orm.em.fork(), settings));
}

/** `dashgate migrate`: applies pending migrations; returns the names of those applied. */
export async function runMigrations(db: Database): Promise<string[]> {
  const before = new Set((await db.orm.migrator.getExecuted()).map((m) => m.name));
  await migrate(db.orm, db.connection);
  return (await db.orm.migrator.getExecuted()).map((m) => m.name).filter((name) => !before.has(name));
}

/**
 * `dashgate admin reset-admin-password`: sets the password of `[security] admin_user` and clears
 * its failed login attempts, so a locked-out admin can sign in at once.
 */
export async function resetAdminPassword(em: EntityManager, settings: Settings, password: string): Promise<void> {
  const login = settings.security.adminUser;
  const [user] = await em.execute<Array<{ id: number }>>('select id from "user" where lower(login) = lower(?) and not is_service_account', [login]);
  if (!user) throw new CommandError(`the admin user "${login}" ([security] admin_user) does not exist`);
  await updatePassword(em, user.id, password);
}

/** `dashgate token create`: an org API token with a role; the token is returned once and stored hashed. */
export async function createToken(em: EntityManager, input: { orgId: number; role: string; name: string; secondsToLive: number }): Promise<string> {
  if (!(await em.count(Org, { id: input.orgId }))) throw new CommandError(`organization ${input.orgId} does not exist`);
  const created = await createApiKey(em, input.orgId, { name: input.name, role: input.role, secondsToLive: input.secondsToLive });
  return created.key;
}
