import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { migrate, ormOptions } from '../../src/db/orm.ts';
import { TEMPLATE_DB } from './database.ts';
import { distIsCurrent } from '../../bin/build.js';

/**
 * One real PostgreSQL for the whole run (the embedded binaries, so CI needs no service), with a
 * migrated template database that every test file clones into its own database.
 */
export default async function globalSetup(): Promise<void> {
  // Tests that start the server as `npm start` does run dist/: built once here, not by each of them at once.
  if (!distIsCurrent()) {
    const built = spawnSync(process.execPath, [new URL('../../bin/build.js', import.meta.url).pathname], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('building dist/ failed');
  }
  const root = await mkdtemp(join(tmpdir(), 'dashgate-test-'));
  // PostgreSQL runs as its own user when we are root; it must be able to reach its folder.
  await chmod(root, 0o755);
  const cluster = await startEmbeddedPostgres({ dir: join(root, 'pg'), port: 0, database: TEMPLATE_DB });
  const orm = await MikroORM.init(ormOptions(cluster.connection, { maxConnections: 2, sslMode: 'disable' }));
  await migrate(orm, cluster.connection);
  await orm.close(true);
  const admin = new pg.Client({ ...cluster.connection, database: 'postgres' });
  await admin.connect();
  await admin.query(`alter database ${TEMPLATE_DB} is_template true`);
  await admin.end();
  process.env.DASHGATE_TEST_PG = JSON.stringify(cluster.connection);
  process.env.DASHGATE_TEST_ROOT = root;
  (globalThis as { __dashgateCluster?: unknown }).__dashgateCluster = cluster;
}
