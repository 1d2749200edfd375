import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { PgConnection } from '../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase, testCluster } from './support/database.ts';
import { ADMIN, basic, call, startTestServer, type TestServer } from './support/server.ts';

const root = new URL('..', import.meta.url).pathname;
let dir = '';
let connection: PgConnection;
let config = '';
let server: TestServer;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI launcher as a user would (`bin/dashgate.js`, which `npx dashgate` runs). */
function dashgate(args: string[], options: { stdin?: string; command?: string[] } = {}): Promise<Run> {
  const command = options.command ?? [process.execPath, join(root, 'bin/dashgate.js')];
  const child = spawn(command[0]!, [...command.slice(1), ...args], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function configFor(db: PgConnection): string {
  return `[database]\ntype = postgres\nhost = ${db.host}:${db.port}\nname = ${db.database}\nuser = ${db.user}\npassword = ${db.password}\n[paths]\ndata = ${dir}/data\n`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashgate-cli-'));
  connection = await createTestDatabase();
  config = join(dir, 'custom.ini');
  await writeFile(config, configFor(connection));
  server = await startTestServer({ connection });
});
afterAll(async () => {
  await server.close();
  await dropTestDatabase(connection);
  await rm(dir, { recursive: true, force: true });
});

describe('help and usage errors', () => {
  it('prints help for the top level and every command, with exit code 0', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--help'], /^Usage: dashgate \[--config <file>\] <command>/],
      [['help'], /^Usage: dashgate \[--config <file>\] <command>/],
      [['admin', '--help'], /^Usage: dashgate \[--config <file>\] admin <command>/],
      [['admin', 'reset-admin-password', '--help'], /^Usage: dashgate \[--config <file>\] admin reset-admin-password/],
      [['token', '-h'], /^Usage: dashgate \[--config <file>\] token <command>/],
      [['token', 'create', '--help'], /^Usage: dashgate \[--config <file>\] token create --role <role> --name <name>/],
      [['migrate', '--help'], /^Usage: dashgate \[--config <file>\] migrate/],
    ];
    const runs = await Promise.all(cases.map(([args]) => dashgate(args)));
    runs.forEach((run, i) => {
      expect({ args: cases[i]![0], code: run.code, stderr: run.stderr }).toEqual({ args: cases[i]![0], code: 0, stderr: '' });
      expect(run.stdout).toMatch(cases[i]![1]);
    });
  });

  it('answers bad arguments with a message on stderr, nothing on stdout and exit code 2', async () => {
    const cases: Array<[string[], string]> = [
      [[], 'dashgate: no command given'],
      [['frobnicate'], 'dashgate: unknown command "frobnicate"'],
      [['admin'], 'dashgate: admin needs a command'],
      [['admin', 'reset-everything'], 'dashgate: unknown command "admin reset-everything"'],
      [['admin', 'reset-admin-password'], 'dashgate: the new password is missing'],
      [['admin', 'reset-admin-password', 'abc'], 'dashgate: the new password must have at least 4 characters'],
      [['admin', 'reset-admin-password', 'one', 'two'], 'dashgate: too many arguments'],
      [['token', 'create', '--name', 'ci'], 'dashgate: --role is required'],
      [['token', 'create', '--role', 'Boss', '--name', 'ci'], 'dashgate: --role must be one of Viewer, Editor, Admin, got "Boss"'],
      [['token', 'create', '--role', 'Admin'], 'dashgate: --name is required'],
      [['token', 'create', '--role', 'Admin', '--name', 'ci', '--org', 'one'], 'dashgate: --org must be a whole number of at least 1, got "one"'],
      [['token', 'create', '--role', 'Admin', '--name', 'ci', '--seconds-to-live', '1.5'], 'dashgate: --seconds-to-live must be a whole number of at least 0'],
      [['token', 'create', '--role', 'Admin', '--name', 'ci', '--colour', 'red'], "dashgate: Unknown option '--colour'"],
      [['token', 'create', '--role'], "dashgate: Option '--role <value>' argument missing"],
      [['migrate', 'now'], 'dashgate: unexpected argument "now"'],
      [['--config'], 'dashgate: --config needs a file name'],
      [['--config', join(root, 'no-such.ini'), 'migrate'], `dashgate: cannot read config file ${join(root, 'no-such.ini')}`],
    ];
    const runs = await Promise.all(cases.map(([args]) => dashgate(args)));
    runs.forEach((run, i) => {
      expect({ args: cases[i]![0], code: run.code, stdout: run.stdout }).toEqual({ args: cases[i]![0], code: 2, stdout: '' });
      expect(run.stderr.startsWith(cases[i]![1])).toBe(true);
      expect(run.stderr).toContain('Usage: dashgate');
    });
  });

  it('runs through npx from the repository', async () => {
    const run = await dashgate(['token', 'create', '--help'], { command: ['npx', '--no-install', 'dashgate'] });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: dashgate \[--config <file>\] token create/);
  }, 60_000);
});

describe('token create', () => {
  it('prints only the token, once, and the token works with its role', async () => {
    const admin = await dashgate(['--config', config, 'token', 'create', '--org', '1', '--role', 'Admin', '--name', 'ci']);
    expect(admin.stderr).toBe('');
    expect(admin.code).toBe(0);
    expect(admin.stdout).toMatch(/^\S+\n$/);
    const token = admin.stdout.trim();
    const created = await call(server, 'POST', '/api/datasources', { auth: `Bearer ${token}`, body: { name: 'from-cli-token', type: 'loki', access: 'proxy' } });
    expect(created.status).toBe(200);
    // Stored hashed only.
    expect(JSON.stringify(await server.sql('select * from api_key'))).not.toContain(token);

    const viewer = (await dashgate(['token', 'create', '--role', 'Viewer', '--name', 'read-only', '--config', config])).stdout.trim();
    expect((await call(server, 'GET', '/api/datasources', { auth: `Bearer ${viewer}` })).status).toBe(200);
    expect((await call(server, 'POST', '/api/datasources', { auth: `Bearer ${viewer}`, body: { name: 'nope', type: 'loki', access: 'proxy' } })).status).toBe(403);
  });

  it('sets an expiry with --seconds-to-live', async () => {
    const before = Date.now();
    const run = await dashgate([`--config=${config}`, 'token', 'create', '--role', 'Editor', '--name', 'short-lived', '--seconds-to-live', '3600']);
    expect(run.code).toBe(0);
    const [row] = await server.sql<{ expires: Date; role: string }>("select expires, role from api_key where name = 'short-lived'");
    expect(row!.role).toBe('Editor');
    expect(row!.expires.getTime()).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
    expect(row!.expires.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000);
  });

  it('fails with exit code 1 and a message for an unknown org or a taken name', async () => {
    const [unknownOrg, duplicate] = await Promise.all([
      dashgate(['--config', config, 'token', 'create', '--org', '42', '--role', 'Admin', '--name', 'x']),
      dashgate(['--config', config, 'token', 'create', '--role', 'Admin', '--name', 'ci']),
    ]);
    expect(unknownOrg).toEqual({ code: 1, stdout: '', stderr: 'dashgate: organization 42 does not exist\n' });
    expect(duplicate).toEqual({ code: 1, stdout: '', stderr: 'dashgate: API key, organization ID and name must be unique\n' });
  });
});

describe('admin reset-admin-password', () => {
  it('sets the admin password and unblocks an admin locked out by failed logins', async () => {
    expect((await call(server, 'GET', '/api/datasources', { auth: ADMIN })).status).toBe(200); // now cached as verified
    for (let i = 0; i < 5; i++) await call(server, 'GET', '/api/datasources', { auth: basic('admin', `wrong-${i}`) });
    expect((await call(server, 'GET', '/api/datasources', { auth: ADMIN })).status).toBe(401); // blocked

    const run = await dashgate(['--config', config, 'admin', 'reset-admin-password', 'brand-new-pw']);
    expect(run).toEqual({ code: 0, stdout: 'Admin password changed successfully\n', stderr: '' });
    expect(await server.sql("select 1 from login_attempt where username = 'admin'")).toEqual([]);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('admin', 'brand-new-pw') })).status).toBe(200);
    expect((await call(server, 'GET', '/api/datasources', { auth: ADMIN })).status).toBe(401);
  });

  it('reads the password from stdin with --password-from-stdin', async () => {
    const run = await dashgate(['--config', config, 'admin', 'reset-admin-password', '--password-from-stdin'], { stdin: 'from stdin pw\nignored\n' });
    expect(run.code).toBe(0);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('admin', 'from stdin pw') })).status).toBe(200);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('admin', 'brand-new-pw') })).status).toBe(401);
  });
});

describe('migrate', () => {
  it('migrates an empty database once, and the server then runs on it', async () => {
    const cluster = testCluster();
    const name = `cli_${Date.now().toString(36)}`;
    const admin = new pg.Client({ ...cluster, database: 'postgres' });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const empty: PgConnection = { ...cluster, database: name };
    const emptyConfig = join(dir, 'empty.ini');
    await writeFile(emptyConfig, configFor(empty));
    try {
      const first = await dashgate(['--config', emptyConfig, 'migrate']);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^Applied \d+ migration\(s\): Migration\d+_initial/);
      const second = await dashgate(['--config', emptyConfig, 'migrate']);
      expect(second).toEqual({ code: 0, stdout: 'Database schema is up to date\n', stderr: '' });

      const onMigrated = await startTestServer({ connection: empty });
      try {
        expect((await call(onMigrated, 'GET', '/api/datasources')).status).toBe(200);
      } finally {
        await onMigrated.close();
      }
    } finally {
      await dropTestDatabase(empty);
    }
  });

  it('fails with exit code 1 and the reason when the database cannot be reached', async () => {
    const unreachable = join(dir, 'unreachable.ini');
    await writeFile(unreachable, configFor({ ...connection, host: '127.0.0.1', port: 1 }));
    const run = await dashgate(['--config', unreachable, 'migrate']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^dashgate: .*ECONNREFUSED/);
    expect(run.stderr).not.toContain(connection.password);
  });
});
