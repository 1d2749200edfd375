import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';
import { freePort, listening, occupy, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';

// Start-up failures an operator causes and can fix: each stops the server with exit code 1 and
// ONE line on stderr naming the cause and the setting or command that fixes it.

const folders: string[] = [];
const mounts: string[] = [];
const sockets: Server[] = [];
const processes: MainProcess[] = [];
let database: PgConnection;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const main of processes) await stopMain(main);
  for (const socket of sockets) await new Promise((resolve) => socket.close(resolve));
  for (const mount of mounts) execFileSync('umount', [mount]);
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
  await dropTestDatabase(database);
});

async function folder(mode = 0o755): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dashgate-failing-'));
  folders.push(dir);
  await chmod(dir, mode);
  return dir;
}

/** A tmpfs at a new folder: a disk of `megabytes`, read-only if asked. Needs root, as the tests of this file run. */
async function smallDisk(megabytes: number, readOnly = false): Promise<string> {
  const dir = await folder();
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0755${readOnly ? ',ro' : ''}`, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

/** Runs the server with these settings (as GF_* variables) until it exits; returns its exit code and output. */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; line: string; stderr: string; stdout: string }> {
  const main = spawnMain({ env: { GF_SERVER_HTTP_ADDR: '127.0.0.1', GF_SERVER_HTTP_PORT: '0', GF_LOG_LEVEL: 'info', ...env } });
  processes.push(main);
  const timer = setTimeout(() => main.child.kill('SIGKILL'), 90_000);
  const code = await main.exited;
  clearTimeout(timer);
  const lines = main.stderr().split('\n').filter((l) => l.trim());
  expect(lines).toHaveLength(1);
  return { code, line: lines[0]!, stderr: main.stderr(), stdout: main.stdout() };
}

/** A configured [security] secret_key: without one, an external database refuses to start and an embedded one generates its own in the data folder. */
const KEY = { GF_SECURITY_SECRET_KEY: 'startup-failures-test-key-0123456789' };

/** Settings of the external test database, as GF_* variables. */
function external(overrides: Partial<PgConnection> = {}): Record<string, string> {
  const c = { ...database, ...overrides };
  return { ...KEY, GF_DATABASE_TYPE: 'postgres', GF_DATABASE_HOST: `${c.host}:${c.port}`, GF_DATABASE_NAME: c.database, GF_DATABASE_USER: c.user, GF_DATABASE_PASSWORD: c.password };
}

describe('the embedded database\'s folder, run as root', () => {
  it('gives the database\'s OS user search permission on a 0700 data folder of dashgate\'s, and starts', async () => {
    const data = await folder(0o700); // what `mktemp -d` makes
    const port = await freePort();
    const main = spawnMain({ env: { GF_PATHS_DATA: data, GF_SERVER_HTTP_ADDR: '127.0.0.1', GF_SERVER_HTTP_PORT: String(port), GF_LOG_LEVEL: 'info' } });
    processes.push(main);
    await listening(main);
    expect((await stat(data)).mode & 0o777).toBe(0o701);
    expect(main.logs().map((l) => l.msg)).toContain(`gave the database's OS user "postgres" search permission on ${data} (mode 0700 -> 0701)`);
    expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
    expect(await stopMain(main)).toBe(0);
  }, 120_000);

  it('names a folder above it that it may not change, with the chmod and the setting', async () => {
    const parent = await folder(0o700);
    const { code, line } = await failedStart({ GF_PATHS_DATA: join(parent, 'data') });
    expect(code).toBe(1);
    expect(line).toBe(
      `dashgate: start-up failed: the embedded PostgreSQL runs as the OS user "postgres", which cannot enter ${parent} (mode 0700); run \`chmod o+x ${parent}\`, or set [paths] data / GF_PATHS_DATA (or [database] path) to a folder it can reach`,
    );
    expect((await stat(parent)).mode & 0o777).toBe(0o700);
  }, 120_000);
});

describe('ports already in use', () => {
  it('the HTTP port', async () => {
    const port = await freePort();
    sockets.push(await occupy(port));
    const { code, line, stdout } = await failedStart({ ...external(), GF_SERVER_HTTP_PORT: String(port) });
    expect(code).toBe(1);
    expect(line).toBe(
      `dashgate: start-up failed: cannot listen for HTTP on 127.0.0.1, port ${port}: the port is already in use; stop what uses it or set [server] http_port / GF_SERVER_HTTP_PORT (and [server] http_addr / GF_SERVER_HTTP_ADDR) to a free one`,
    );
    // The log has the same one line, at fatal level, with the cause as a field.
    const fatal = stdout.split('\n').filter((l) => l.includes('"level":60'));
    expect(fatal).toHaveLength(1);
    expect(JSON.parse(fatal[0]!)).toMatchObject({ cause: 'http_port_in_use', msg: line.replace(/^dashgate: /, '') });
  }, 120_000);

  it('the embedded PostgreSQL\'s port', async () => {
    const data = await folder();
    const port = await freePort();
    sockets.push(await occupy(port));
    const { code, line } = await failedStart({ GF_PATHS_DATA: data, GF_DATABASE_EMBEDDED_PORT: String(port) });
    expect(code).toBe(1);
    expect(line).toBe(
      `dashgate: start-up failed: the embedded PostgreSQL cannot listen on 127.0.0.1 port ${port}: the port is already in use; set [database] embedded_port / GF_DATABASE_EMBEDDED_PORT to a free port, or to 0 to pick one at start`,
    );
  }, 120_000);
});

describe('disks (simulated with tmpfs mounts)', () => {
  it('a full disk under a new data folder (initdb runs out of space)', async () => {
    const disk = await smallDisk(6);
    const { code, line } = await failedStart({ GF_PATHS_DATA: join(disk, 'data') });
    expect(code).toBe(1);
    expect(line).toBe(
      `dashgate: start-up failed: no space left on the disk holding the embedded PostgreSQL's folder ${disk}/data/postgres; free space there, or set [paths] data / GF_PATHS_DATA (or [database] path) to a folder on a disk with room`,
    );
  }, 120_000);

  it('a disk that filled up under an existing cluster', async () => {
    const disk = await smallDisk(100);
    const port = await freePort();
    const first = spawnMain({ env: { GF_PATHS_DATA: join(disk, 'data'), GF_SERVER_HTTP_ADDR: '127.0.0.1', GF_SERVER_HTTP_PORT: String(port) } });
    processes.push(first);
    await listening(first);
    expect(await stopMain(first)).toBe(0);
    // Fill it: dd stops at the end of the disk with "No space left on device".
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${disk}/filler`, 'bs=1M'], { stdio: 'ignore' });
    } catch {}
    const { code, line } = await failedStart({ GF_PATHS_DATA: join(disk, 'data') });
    expect(code).toBe(1);
    expect(line).toMatch(new RegExp(`^dashgate: start-up failed: no space left on the disk holding the embedded PostgreSQL's folder ${disk}/data/postgres; free space there, or set \\[paths\\] data / GF_PATHS_DATA`));
  }, 120_000);

  it('a read-only disk, where the generated key or the cluster would go', async () => {
    const disk = await smallDisk(6, true);
    const withoutKey = await failedStart({ GF_PATHS_DATA: join(disk, 'data') });
    expect(withoutKey.code).toBe(1);
    expect(withoutKey.line).toBe(`dashgate: start-up failed: the data folder ${disk}/data is on a read-only file system; set [paths] data / GF_PATHS_DATA to a writable folder`);
    const withKey = await failedStart({ ...KEY, GF_PATHS_DATA: join(disk, 'data') });
    expect(withKey.code).toBe(1);
    expect(withKey.line).toBe(`dashgate: start-up failed: the embedded PostgreSQL's folder ${disk}/data is on a read-only file system; set [paths] data / GF_PATHS_DATA (or [database] path) to a writable folder`);
  }, 120_000);
});

describe('an external PostgreSQL', () => {
  it('refusing the password: names [database] password, and never shows it', async () => {
    const { code, line, stderr, stdout } = await failedStart(external({ password: 'not-the-password-4711' }));
    expect(code).toBe(1);
    expect(line).toBe(
      `dashgate: start-up failed: PostgreSQL at ${database.host}:${database.port} refused the password of user "${database.user}"; set [database] password / GF_DATABASE_PASSWORD to that user's password`,
    );
    expect(stdout + stderr).not.toContain('not-the-password-4711');
  }, 120_000);

  it('refusing the password given in [database] url: names the url setting, and never shows it', async () => {
    const url = `postgres://${database.user}:not-the-password-4711@${database.host}:${database.port}/${database.database}`;
    const { code, line, stderr, stdout } = await failedStart({ ...KEY, GF_DATABASE_TYPE: 'postgres', GF_DATABASE_URL: url });
    expect(code).toBe(1);
    expect(line).toBe(
      `dashgate: start-up failed: PostgreSQL at ${database.host}:${database.port} refused the password of user "${database.user}"; set it in [database] url / GF_DATABASE_URL to that user's password`,
    );
    expect(stdout + stderr).not.toContain('not-the-password-4711');
  }, 120_000);

  it('without the database: names the command that creates it and [database] name', async () => {
    const { code, line } = await failedStart(external({ database: 'no_such_database' }));
    expect(code).toBe(1);
    expect(line).toBe(
      `dashgate: start-up failed: PostgreSQL at ${database.host}:${database.port} has no database "no_such_database"; create it (createdb -h ${database.host} -p ${database.port} -U ${database.user} -O ${database.user} no_such_database) or set [database] name / GF_DATABASE_NAME to an existing one`,
    );
  }, 120_000);

  it('not listening: names [database] host', async () => {
    const port = await freePort();
    const { code, line } = await failedStart(external({ port }));
    expect(code).toBe(1);
    expect(line).toBe(`dashgate: start-up failed: cannot reach PostgreSQL at ${database.host}:${port} (connection refused); start it, or set [database] host / GF_DATABASE_HOST to where it runs`);
  }, 120_000);
});

describe('a failure without a known cause', () => {
  it('is still one line, with the error', async () => {
    const data = await folder();
    // A file where the data folder should be.
    await writeFile(join(data, 'data'), 'not a folder');
    const { code, line } = await failedStart({ GF_PATHS_DATA: join(data, 'data') });
    expect(code).toBe(1);
    expect(line).toBe(`dashgate: start-up failed: cannot read ${data}/data/secret_key: ENOTDIR: not a directory, open '${data}/data/secret_key'`);
    const withKey = await failedStart({ ...KEY, GF_PATHS_DATA: join(data, 'data') });
    expect(withKey.code).toBe(1);
    expect(withKey.line).toBe(`dashgate: start-up failed: the embedded PostgreSQL in ${data}/data/postgres did not start: EEXIST: file already exists, mkdir '${data}/data'`);
  }, 120_000);
});
