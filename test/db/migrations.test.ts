import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { loadMigrator, migrate, ormOptions } from '../../src/db/orm.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { MIGRATION_NAMES } from '../../src/db/migrations/names.ts';
import { dataSourceSecretBinding, SecretBox } from '../../src/db/secrets.ts';
import { dropTestDatabase, testCluster } from '../support/database.ts';

const connection = { ...testCluster(), database: `m_${randomBytes(6).toString('hex')}` };

afterAll(() => dropTestDatabase(connection));

describe('start-up migrations', () => {
  it('names every migration, in order, where start-up looks for pending ones', () => {
    expect(MIGRATION_NAMES).toEqual(MIGRATIONS.map((m) => m.name));
  });

  it('are safe when several instances start together on an empty database', async () => {
    const admin = new pg.Client({ ...connection, database: 'postgres' });
    await admin.connect();
    await admin.query(`create database ${connection.database}`);
    await admin.end();

    const settings = loadSettings({ argv: [], env: {}, overrides: { security: { admin_user: 'root', admin_password: 'pw' } } });
    const orms = await Promise.all([1, 2, 3].map(() => MikroORM.init(ormOptions(connection, { maxConnections: 2, sslMode: 'disable' }))));
    try {
      await Promise.all(orms.map((orm) => migrate(orm, connection, () => bootstrap(orm.em.fork(), settings))));
    } finally {
      await Promise.all(orms.map((orm) => orm.close(true)));
    }

    const client = new pg.Client(connection);
    await client.connect();
    try {
      const applied = await client.query('select name from mikro_orm_migrations order by id');
      expect(applied.rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
      expect((await client.query('select id, name from org')).rows).toEqual([{ id: 1, name: 'Main Org.' }]);
      const users = await client.query('select login, is_admin, password_hash from "user"');
      expect(users.rows).toHaveLength(1);
      expect(users.rows[0]).toMatchObject({ login: 'root', is_admin: true });
      expect(users.rows[0].password_hash).toMatch(/^\$argon2id\$/);
      const membership = await client.query('select org_id, role from org_user');
      expect(membership.rows).toEqual([{ org_id: 1, role: 'Admin' }]);
      // Live queries' leases and shared answers: rewritten at every refresh, so kept out of the WAL.
      const live = await client.query(`select relname, relpersistence from pg_class where relname in ('live_query_lease', 'live_query_answer') order by relname`);
      expect(live.rows).toEqual([{ relname: 'live_query_answer', relpersistence: 'u' }, { relname: 'live_query_lease', relpersistence: 'u' }]);
    } finally {
      await client.end();
    }

    // Started again on the migrated database, an instance finds nothing pending and never loads the migrator.
    const again = await MikroORM.init(ormOptions(connection, { maxConnections: 2, sslMode: 'disable' }));
    try {
      await migrate(again, connection);
      expect(again.config.get('migrations').migrationsList).toBeUndefined();
    } finally {
      await again.close(true);
    }
  });
});

/** A new, empty database migrated up to and including `last`; closed and dropped after the file. */
async function databaseAt(last: string, secretKey?: string): Promise<{ connection: typeof connection; orm: MikroORM; sql: (text: string, params?: unknown[]) => Promise<any[]> }> {
  const db = { ...testCluster(), database: `m_${randomBytes(6).toString('hex')}` };
  const admin = new pg.Client({ ...db, database: 'postgres' });
  await admin.connect();
  await admin.query(`create database ${db.database}`);
  await admin.end();
  const orm = await MikroORM.init(ormOptions(db, { maxConnections: 2, sslMode: 'disable', secretKey }));
  await (await loadMigrator(orm)).up({ to: last });
  const pool = new pg.Pool({ ...db, max: 1 });
  cleanups.push(async () => {
    await pool.end();
    await orm.close(true);
    await dropTestDatabase(db);
  });
  return { connection: db, orm, sql: async (text, params) => (await pool.query(text, params)).rows };
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe('data migrations', () => {
  it('turn a stored null jsonData into {} and keep objects as they are', async () => {
    const db = await databaseAt('Migration20261125100000_org_members_notify');
    await db.sql(`insert into org (id, name) values (1, 'Main Org.')`);
    await db.sql(`insert into data_source (org_id, uid, name, type, access, json_data) values
      (1, 'a', 'sql-null', 'loki', 'proxy', null), (1, 'b', 'json-null', 'loki', 'proxy', 'null'::jsonb), (1, 'c', 'object', 'loki', 'proxy', '{"k":1}')`);
    await migrate(db.orm, db.connection);
    expect(await db.sql('select name, json_data from data_source order by name')).toEqual([
      { name: 'json-null', json_data: {} }, { name: 'object', json_data: { k: 1 } }, { name: 'sql-null', json_data: {} },
    ]);
    // Written by hand afterwards: absent means {}, NULL is refused.
    await db.sql(`insert into data_source (org_id, uid, name, type, access) values (1, 'd', 'later', 'loki', 'proxy')`);
    expect(await db.sql(`select json_data from data_source where name = 'later'`)).toEqual([{ json_data: {} }]);
    await expect(db.sql(`update data_source set json_data = null where name = 'later'`)).rejects.toThrow(/not-null/);
  });

  it('seal every stored data source secret again, bound to its row and key, in one go', async () => {
    const key = 'migration-test-key';
    const db = await databaseAt('Migration20261126000100_datasource_change_notify', key);
    const legacy = new SecretBox(key);
    const other = new SecretBox('some-other-key');
    // As stored before the binding: no associated data.
    const unbound = (value: string) => legacy.encrypt(value, '');
    await db.sql(`insert into org (id, name) values (1, 'Main Org.'), (2, 'Other')`);
    const foreign = other.encrypt('sealed-elsewhere', '');
    await db.sql(`insert into data_source (org_id, uid, name, type, access, secure_json_data) values
      (1, 'one', 'one', 'loki', 'proxy', $1), (2, 'one', 'two', 'loki', 'proxy', $2), (1, 'none', 'none', 'loki', 'proxy', '{}')`,
    [JSON.stringify({ basicAuthPassword: unbound('pw-1'), httpHeaderValue1: unbound('hv-1'), lost: foreign }), JSON.stringify({ basicAuthPassword: unbound('pw-2') })]);

    await migrate(db.orm, db.connection);

    const rows = await db.sql(`select org_id, uid, secure_json_data as s from data_source order by name`);
    const open = (row: { org_id: number; uid: string; s: Record<string, string> }, name: string) => legacy.decrypt(row.s[name]!, dataSourceSecretBinding(row.org_id, row.uid, name));
    const [none, one, two] = rows;
    expect(none.s).toEqual({});
    expect([open(one, 'basicAuthPassword'), open(one, 'httpHeaderValue1'), open(two, 'basicAuthPassword')]).toEqual(['pw-1', 'hv-1', 'pw-2']);
    // No longer readable unbound, nor as another row's or key's.
    expect(() => legacy.decrypt(one.s.basicAuthPassword, '')).toThrow();
    expect(() => legacy.decrypt(one.s.basicAuthPassword, dataSourceSecretBinding(2, 'one', 'basicAuthPassword'))).toThrow();
    expect(() => legacy.decrypt(one.s.httpHeaderValue1, dataSourceSecretBinding(1, 'one', 'basicAuthPassword'))).toThrow();
    // Sealed with another key: unreadable before and after, left exactly as it was.
    expect(one.s.lost).toBe(foreign);
  });

  it('let teams hold users of other orgs, and end the memberships of an org\'s teams when a user leaves it', async () => {
    const db = await databaseAt('Migration20261127000000_teams');
    await db.sql(`insert into org (id, name) values (1, 'Main Org.'), (2, 'Other')`);
    await db.sql(`insert into "user" (id, login, email, org_id) values (10, 'ann', 'ann@x', 1), (11, 'bob', 'bob@x', 1)`);
    await db.sql(`insert into org_user (org_id, user_id, role) values (1, 10, 'Viewer'), (2, 10, 'Viewer'), (1, 11, 'Viewer')`);
    await db.sql(`insert into team (id, uid, org_id, name) values (1, 't1', 2, 'two')`);
    await db.sql(`insert into team_member (team_id, org_id, user_id) values (1, 2, 10)`);
    // Before: a member of the team must be a member of its org.
    await expect(db.sql('insert into team_member (team_id, org_id, user_id) values (1, 2, 11)')).rejects.toThrow(/foreign key/);

    await migrate(db.orm, db.connection);
    await db.sql('insert into team_member (team_id, org_id, user_id) values (1, 2, 11)');
    await expect(db.sql('insert into team_member (team_id, org_id, user_id) values (1, 2, 999)')).rejects.toThrow(/foreign key/);
    // Leaving the team's org ends ann's membership; leaving another org does not touch bob's.
    await db.sql('delete from org_user where org_id = 2 and user_id = 10');
    await db.sql('delete from org_user where org_id = 1 and user_id = 11');
    expect(await db.sql('select user_id from team_member order by user_id')).toEqual([{ user_id: 11 }]);
    await db.sql('delete from "user" where id = 11');
    expect(await db.sql('select user_id from team_member')).toEqual([]);
  });

  it('take the None role for memberships and tokens, and no other new one', async () => {
    const db = await databaseAt('Migration20261128000000_team_members_any_org');
    await db.sql(`insert into org (id, name) values (1, 'Main Org.')`);
    await db.sql(`insert into "user" (id, login, email, org_id) values (10, 'ann', 'ann@x', 1)`);
    await expect(db.sql(`insert into org_user (org_id, user_id, role) values (1, 10, 'None')`)).rejects.toThrow(/org_user_role_check/);
    await migrate(db.orm, db.connection);
    await db.sql(`insert into org_user (org_id, user_id, role) values (1, 10, 'None')`);
    await db.sql(`insert into api_key (org_id, name, key_hash, role) values (1, 'k', 'h', 'None')`);
    await expect(db.sql(`update org_user set role = 'none'`)).rejects.toThrow(/org_user_role_check/);
    await expect(db.sql(`insert into api_key (org_id, name, key_hash, role) values (1, 'k2', 'h2', 'Owner')`)).rejects.toThrow(/api_key_role_check/);
  });

  it('keep one preferences row per owner (an org, a user in an org, a team of that org), gone with it', async () => {
    const db = await databaseAt('Migration20261128000100_none_role');
    await migrate(db.orm, db.connection);
    await db.sql(`insert into org (id, name) values (1, 'Main Org.'), (2, 'Other')`);
    await db.sql(`insert into "user" (id, login, email, org_id) values (10, 'ann', 'ann@x', 1)`);
    await db.sql(`insert into team (id, uid, org_id, name) values (5, 't5', 1, 'five')`);
    await db.sql(`insert into preferences (org_id) values (1), (2)`);
    await db.sql(`insert into preferences (org_id, user_id) values (1, 10), (2, 10)`);
    await db.sql(`insert into preferences (org_id, team_id) values (1, 5)`);
    await expect(db.sql(`insert into preferences (org_id) values (1)`)).rejects.toThrow(/preferences_owner_unique/);
    await expect(db.sql(`insert into preferences (org_id, user_id) values (1, 10)`)).rejects.toThrow(/preferences_owner_unique/);
    await expect(db.sql(`insert into preferences (org_id, team_id) values (2, 5)`)).rejects.toThrow(/foreign key/);
    await expect(db.sql(`insert into preferences (org_id, user_id, team_id) values (1, 10, 5)`)).rejects.toThrow(/check/);
    await db.sql('delete from team where id = 5');
    await db.sql('delete from "user" where id = 10');
    await db.sql('delete from org where id = 2');
    expect(await db.sql('select org_id, user_id, team_id from preferences')).toEqual([{ org_id: 1, user_id: null, team_id: null }]);
  });

  it('refuse to seal stored secrets without the secret key, naming the setting, and change nothing', async () => {
    const db = await databaseAt('Migration20261126000100_datasource_change_notify');
    await db.sql(`insert into org (id, name) values (1, 'Main Org.')`);
    const blob = new SecretBox('k').encrypt('pw', '');
    await db.sql(`insert into data_source (org_id, uid, name, type, access, secure_json_data) values (1, 'u', 'n', 'loki', 'proxy', $1)`, [JSON.stringify({ password: blob })]);
    await expect(migrate(db.orm, db.connection)).rejects.toThrow(/\[security\] secret_key/);
    expect(await db.sql('select secure_json_data as s from data_source')).toEqual([{ s: { password: blob } }]);
    expect((await db.sql('select name from mikro_orm_migrations')).map((r) => r.name)).not.toContain('Migration20261126000200_bind_data_source_secrets');
  });
});
