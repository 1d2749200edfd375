import type { EntityManager } from '@mikro-orm/postgresql';
import { bootstrap } from '../bootstrap.ts';
import type { Settings } from '../config/settings.ts';
import { LISTENER_APPLICATION_NAME } from '../db/change-listener.ts';
import { Org } from '../db/entities/index.ts';
import { loadMigrator, migrate, type Database } from '../db/orm.ts';
import { createApiKey } from '../services/api-keys.ts';
import { dataSourceSecretBinding, SecretBox } from '../db/secrets.ts';
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
  const migrator = await loadMigrator(db.orm);
  const before = new Set((await migrator.getExecuted()).map((m) => m.name));
  await migrate(db.orm, db.connection);
  return (await migrator.getExecuted()).map((m) => m.name).filter((name) => !before.has(name));
}

/**
 * `dashgate admin reset-admin-password`: sets the password of `[security] admin_user` and clears
 * its failed login attempts from every address, so a locked-out admin can sign in at once.
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

interface SecretRow {
  id: number;
  org_id: number;
  uid: string;
  name: string;
  secure_json_data: Record<string, string>;
}

/**
 * `dashgate secrets rotate-key`: opens every stored data source secret with the old key and seals
 * it with the new one, bound to the same row and key name, in one transaction. Refuses while a
 * server is connected (it would go on sealing with the old key), and changes nothing when any
 * secret does not open with the old key.
 */
export async function rotateSecretKey(em: EntityManager, oldKey: string, newKey: string): Promise<{ dataSources: number; secrets: number }> {
  const [{ servers }] = await em.execute<Array<{ servers: number }>>(
    'select count(*)::int as servers from pg_stat_activity where application_name = ? and datname = current_database()',
    [LISTENER_APPLICATION_NAME],
  );
  if (servers > 0) throw new CommandError(`${servers} dashgate server(s) are connected to this database: stop them all first, they would go on encrypting with the old key`);
  const from = new SecretBox(oldKey);
  const to = new SecretBox(newKey);
  return em.transactional(async (tx) => {
    const rows = await tx.execute<SecretRow[]>(`select id, org_id, uid, name, secure_json_data from data_source where secure_json_data <> '{}'::jsonb order by id for update`);
    let secrets = 0;
    for (const row of rows) {
      const sealed: Record<string, string> = {};
      for (const [key, blob] of Object.entries(row.secure_json_data)) {
        const binding = dataSourceSecretBinding(row.org_id, row.uid, key);
        let plaintext: string;
        try {
          plaintext = from.decrypt(blob, binding);
        } catch {
          throw new CommandError(`secret "${key}" of data source "${row.name}" (org ${row.org_id}, uid ${row.uid}) does not open with the old key; nothing was changed`);
        }
        sealed[key] = to.encrypt(plaintext, binding);
        secrets++;
      }
      await tx.execute('update data_source set secure_json_data = ?::jsonb where id = ?', [JSON.stringify(sealed), row.id]);
    }
    return { dataSources: rows.length, secrets };
  });
}
