import { describe, expect, it } from '@jest/globals';
import { explainDataFolderFailure, explainStartupFailure } from '../../src/startup/failure.ts';
import type { Settings } from '../../src/config/settings.ts';

// Start-up failures an operator causes, each as one line naming the fix: pure.

const settings = (database: Partial<Settings['database']>, server: Partial<Settings['server']> = {}) => ({
  server: { httpAddr: '', httpPort: 3000, ...server },
  database: { type: 'postgres', url: '', host: 'db.local', port: 5433, user: 'dash', name: 'dashgate', ...database },
}) as unknown as Settings;
const pgError = (code: string, message = 'server said so') => Object.assign(new Error(message), { code });

describe('explainStartupFailure', () => {
  it('says which port is in use and which settings move it', () => {
    const error = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', syscall: 'listen' });
    expect(explainStartupFailure(error, settings({ type: 'embedded' } as never, { httpAddr: '127.0.0.1', httpPort: 80 }))).toEqual({
      cause: 'http_port_in_use',
      line: 'cannot listen for HTTP on 127.0.0.1, port 80: the port is already in use; stop what uses it or set [server] http_port / GF_SERVER_HTTP_PORT (and [server] http_addr / GF_SERVER_HTTP_ADDR) to a free one',
    });
  });

  it.each([
    ['28P01', 'database_login_refused', 'PostgreSQL at db.local:5433 refused the password of user "dash"; set [database] password / GF_DATABASE_PASSWORD to that user\'s password'],
    ['3D000', 'database_missing', 'PostgreSQL at db.local:5433 has no database "dashgate"; create it (createdb -h db.local -p 5433 -U dash -O dash dashgate) or set [database] name / GF_DATABASE_NAME to an existing one'],
    ['53100', 'database_disk_full', 'PostgreSQL at db.local:5433 is out of disk space (server said so); free space on its server'],
    ['ECONNREFUSED', 'database_unreachable', 'cannot reach PostgreSQL at db.local:5433 (connection refused); start it, or set [database] host / GF_DATABASE_HOST to where it runs'],
  ])('explains an external PostgreSQL\'s %s', (code, cause, line) => {
    expect(explainStartupFailure(pgError(code), settings({}))).toEqual({ cause, line });
  });

  it('reads the target from [database] url, never its password, and names the url setting as the fix', () => {
    const explained = explainStartupFailure(pgError('28P01'), settings({ url: 'postgres://ann%40x:hunter2@pg.example:6543/metrics' }));
    expect(explained).toEqual({
      cause: 'database_login_refused',
      line: 'PostgreSQL at pg.example:6543 refused the password of user "ann@x"; set it in [database] url / GF_DATABASE_URL to that user\'s password',
    });
    expect(explained!.line).not.toContain('hunter2');
  });

  it('finds the cause down an error chain, and leaves anything else to the error itself', () => {
    const wrapped = new Error('could not connect', { cause: pgError('3D000') });
    expect(explainStartupFailure(wrapped, settings({}))?.cause).toBe('database_missing');
    expect(explainStartupFailure(new Error('something else'), settings({}))).toBeNull();
    // An embedded database's codes are not an external login's.
    expect(explainStartupFailure(pgError('28P01'), settings({ type: 'embedded' } as never))).toBeNull();
  });
});

describe('explainDataFolderFailure', () => {
  const fsError = (code: string) => Object.assign(new Error(`${code}: at /srv/data`), { code, path: '/srv/data' });

  it.each([
    ['ENOSPC', 'no space left on the disk holding the data folder /srv/data; free space there, or set [paths] data / GF_PATHS_DATA to a folder on a disk with room'],
    ['EROFS', 'the data folder /srv/data is on a read-only file system; set [paths] data / GF_PATHS_DATA to a writable folder'],
  ])('%s', (code, line) => {
    expect(explainDataFolderFailure(fsError(code), '/srv/data')).toBe(line);
  });

  it('names the OS user it runs as when it may not write, and says anything else on one line', () => {
    expect(explainDataFolderFailure(fsError('EACCES'), '/srv/data')).toMatch(/^dashgate \(OS user "[^"]+"\) may not write to \/srv\/data; give it write access there/);
    expect(explainDataFolderFailure(new Error('odd\nfailure'), '/srv/data')).not.toContain('\n');
  });
});
