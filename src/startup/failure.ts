import { userInfo } from 'node:os';
import type { Settings } from '../config/settings.ts';
import { settingName as setting } from '../config/env-key.ts';
import { errorChain } from '../errors/render.ts';
import { mkdirCause, oneLine, StartupError } from '../errors/startup.ts';

/** host:port, user and database of the external PostgreSQL, as configured (never the password). */
function externalTarget(settings: Settings): { where: string; user: string; database: string } {
  const db = settings.database;
  if (db.url) {
    const url = new URL(db.url);
    return {
      where: `${url.hostname}:${url.port || 5432}`,
      user: decodeURIComponent(url.username),
      database: decodeURIComponent(url.pathname.replace(/^\//, '')) || db.name,
    };
  }
  return { where: `${db.host}:${db.port}`, user: db.user, database: db.name };
}

/**
 * The one line telling an operator why start-up failed and what to change, for the failures an
 * operator causes and can fix: ports in use, folders and disks, external PostgreSQL logins. Null
 * for anything else (then the error itself is reported).
 */
export function explainStartupFailure(error: unknown, settings: Settings): { cause: string; line: string } | null {
  if (error instanceof StartupError) return { cause: error.kind, line: error.message };
  const external = settings.database.type === 'postgres';
  const viaUrl = Boolean(settings.database.url);
  const fix = (key: string) => (viaUrl ? `set it in ${setting('database', 'url')}` : `set ${setting('database', key)}`);
  for (const e of errorChain(error)) {
    const code = typeof e.code === 'string' ? e.code : '';
    const message = typeof e.message === 'string' ? oneLine(e.message) : '';
    if (e.syscall === 'listen' && (code === 'EADDRINUSE' || code === 'EACCES')) {
      const where = `${settings.server.httpAddr || 'all addresses'}, port ${settings.server.httpPort}`;
      const why = code === 'EADDRINUSE' ? 'the port is already in use' : 'this user may not listen on ports below 1024';
      return {
        cause: code === 'EADDRINUSE' ? 'http_port_in_use' : 'http_port_forbidden',
        line: `cannot listen for HTTP on ${where}: ${why}; stop what uses it or set ${setting('server', 'http_port')} (and ${setting('server', 'http_addr')}) to a free one`,
      };
    }
    if (!external) continue;
    const { where, user, database } = externalTarget(settings);
    if (code === '28P01') {
      return { cause: 'database_login_refused', line: `PostgreSQL at ${where} refused the password of user "${user}"; ${fix('password')} to that user's password` };
    }
    if (code === '28000') {
      return {
        cause: 'database_login_refused',
        line: `PostgreSQL at ${where} refused the login of user "${user}" (${message}); ${fix('user')} to a user it accepts, or allow this one in the server's pg_hba.conf`,
      };
    }
    if (code === '3D000') {
      return {
        cause: 'database_missing',
        line: `PostgreSQL at ${where} has no database "${database}"; create it (createdb -h ${where.replace(/:(\d+)$/, ' -p $1')} -U ${user} -O ${user} ${database}) or ${fix('name')} to an existing one`,
      };
    }
    if (code === '42501') {
      return {
        cause: 'database_privileges',
        line: `user "${user}" may not create dashgate's tables in database "${database}" at ${where} (${message}); grant it (GRANT ALL ON SCHEMA public TO ${user}, or make it the database's owner)`,
      };
    }
    if (code === '53100') {
      return { cause: 'database_disk_full', line: `PostgreSQL at ${where} is out of disk space (${message}); free space on its server` };
    }
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH') {
      const why = { ECONNREFUSED: 'connection refused', ENOTFOUND: 'unknown host', EAI_AGAIN: 'host name lookup failed', ETIMEDOUT: 'timed out', EHOSTUNREACH: 'host unreachable' }[code];
      return { cause: 'database_unreachable', line: `cannot reach PostgreSQL at ${where} (${why}); start it, or ${fix('host')} to where it runs` };
    }
  }
  return null;
}

/**
 * Why dashgate could not prepare its data folder (`[paths] data`, where an embedded installation
 * keeps the key it generated), as one line naming the fix; the error itself, on one line, when the
 * cause is not one of a disk or a permission.
 */
export function explainDataFolderFailure(error: unknown, dataFolder: string): string {
  const real = mkdirCause(error, dataFolder) as NodeJS.ErrnoException | undefined;
  const code = typeof real?.code === 'string' ? real.code : '';
  const path = real?.path ?? dataFolder;
  const fix = `set ${setting('paths', 'data')} to`;
  if (code === 'ENOSPC') return `no space left on the disk holding the data folder ${path}; free space there, or ${fix} a folder on a disk with room`;
  if (code === 'EROFS') return `the data folder ${path} is on a read-only file system; ${fix} a writable folder`;
  if (code === 'EACCES' || code === 'EPERM') return `dashgate (OS user "${userInfo().username}") may not write to ${path}; give it write access there, or ${fix} a folder it can write`;
  return oneLine(error instanceof Error ? error.message : String(error));
}
