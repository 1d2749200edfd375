import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedCluster, type PgConnection } from '../../src/db/embedded.ts';
import { copyTemplate, makeTemplate, templateDir } from '../../src/db/postgres-template.ts';

// A new data folder's cluster is a copy of the template `npm install` makes (initdb once), which
// then takes the folder's own superuser password.

let root: string;
const clusters: EmbeddedCluster[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'dashgate-template-'));
  await chmod(root, 0o755); // reachable by the postgres user the cluster runs as under root
  await makeTemplate('dashgate');
});

afterAll(async () => {
  for (const cluster of clusters) await cluster.stop();
  await rm(root, { recursive: true, force: true });
});

async function start(name: string, database: string): Promise<EmbeddedCluster> {
  const cluster = await startEmbeddedPostgres({ dir: join(root, name, 'postgres'), port: 0, database });
  clusters.push(cluster);
  return cluster;
}

async function query(connection: PgConnection, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client(connection);
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** The error code of connecting, or null when it connects. */
async function connectError(connection: PgConnection): Promise<string | null> {
  const client = new pg.Client(connection);
  client.on('error', () => {});
  try {
    await client.connect();
    await client.end();
    return null;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

const templatePassword = async () => (await readFile(`${templateDir()}.secret`, 'utf8')).trim();
const systemId = async (c: EmbeddedCluster) => (await query({ ...c.local, database: 'postgres' }, 'select system_identifier::text as id from pg_control_system()'))[0]!.id;

describe('the embedded PostgreSQL template', () => {
  it("is what new folders' clusters are copied from, each taking its folder's own password", async () => {
    const [a, b] = [await start('a', 'dashgate'), await start('b', 'dashgate')];
    // initdb gives every cluster an identifier of its own; copies share the template's.
    expect(await systemId(a)).toBe(await systemId(b));
    expect(a.connection.password).not.toBe(b.connection.password);
    // The template's database is there, reached with the folder's password; the template's password is refused.
    expect(await query(a.connection, 'select current_database() as db')).toEqual([{ db: 'dashgate' }]);
    expect(await connectError({ ...a.connection, password: await templatePassword() })).toBe('28P01');
    expect(await connectError({ ...a.connection, password: b.connection.password })).toBe('28P01');
    expect(existsSync(join(root, 'a', 'postgres', 'dashgate-template-password'))).toBe(false);
  });

  it('creates a database the template does not have', async () => {
    const other = await start('c', 'another_name');
    expect(await query(other.connection, 'select current_database() as db')).toEqual([{ db: 'another_name' }]);
  });

  it('gives a copy whose first start was cut short its password at the next start', async () => {
    // Copied, then cut short before the password was replaced: the template's is still the superuser's.
    const dir = join(root, 'd', 'postgres');
    await mkdir(join(root, 'd'));
    expect(await copyTemplate(dir)).toBe(true);
    expect(existsSync(join(dir, 'dashgate-template-password'))).toBe(true);
    const cluster = await start('d', 'dashgate');
    expect(await query(cluster.connection, 'select 1 as one')).toEqual([{ one: 1 }]);
    expect(await connectError({ ...cluster.connection, password: await templatePassword() })).toBe('28P01');
    expect(existsSync(join(dir, 'dashgate-template-password'))).toBe(false);
  });
});
