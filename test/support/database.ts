import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { PgConnection } from '../../src/db/embedded.ts';

export const TEMPLATE_DB = 'dashgate_template';

export function testCluster(): PgConnection {
  const raw = process.env.DASHGATE_TEST_PG;
  if (!raw) throw new Error('DASHGATE_TEST_PG is not set: run the tests through `npm test`');
  return JSON.parse(raw) as PgConnection;
}

/** A fresh, migrated database for one test file, cloned from the template. */
export async function createTestDatabase(): Promise<PgConnection> {
  const cluster = testCluster();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ ...cluster, database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  return { ...cluster, database: name };
}

export async function dropTestDatabase(connection: PgConnection): Promise<void> {
  const admin = new pg.Client({ ...connection, database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${connection.database} with (force)`);
  } finally {
    await admin.end();
  }
}
