import { readFile } from 'node:fs/promises';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Settings } from '../config/settings.ts';
import type { PgConnection } from '../db/embedded.ts';
import { openDatabase, ormOptions, type Database } from '../db/orm.ts';

/**
 * Opens the database the way the server does. With the embedded database, a cluster that a
 * running server already started is joined rather than started again: starting it would treat
 * the server's postmaster as a stale one and stop it under the server's feet.
 */
export async function openCliDatabase(settings: Settings, log: (line: string) => void): Promise<Database> {
  if (settings.database.type === 'embedded') {
    const connection = await runningEmbeddedCluster(settings.database.path, settings.database.name);
    if (connection) {
      const orm = await MikroORM.init(ormOptions(connection, { maxConnections: 2, sslMode: 'disable', secretKey: settings.security.secretKey }));
      return { orm, connection, embedded: null, close: () => orm.close(true) };
    }
  }
  return openDatabase(settings, log);
}

/**
 * The connection of a live cluster in `dir`, or null. The port is the fourth line of PostgreSQL's
 * postmaster.pid; the superuser and its password file are those src/db/embedded.ts sets up. A
 * successful login is the proof of life (a stale lock file may name a port now used by another process).
 */
async function runningEmbeddedCluster(dir: string, database: string): Promise<PgConnection | null> {
  let port: number;
  let password: string;
  try {
    port = Number((await readFile(`${dir}/postmaster.pid`, 'utf8')).split('\n')[3]);
    password = (await readFile(`${dir}.secret`, 'utf8')).trim();
  } catch {
    return null;
  }
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return null;
  const connection: PgConnection = { host: '127.0.0.1', port, user: 'postgres', password, database };
  const client = new pg.Client({ ...connection, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return connection;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}
