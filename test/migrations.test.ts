import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { bootstrap } from '../src/bootstrap.ts';
import { loadSettings } from '../src/config/settings.ts';
import { migrate, ormOptions } from '../src/db/orm.ts';
import { MIGRATIONS } from '../src/db/migrations/index.ts';
import { dropTestDatabase, testCluster } from './support/database.ts';

const connection = { ...testCluster(), database: `m_${randomBytes(6).toString('hex')}` };

afterAll(() => dropTestDatabase(connection));

describe('start-up migrations', () => {
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
    } finally {
      await client.end();
    }
  });
});
