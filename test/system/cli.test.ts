import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase, testCluster } from '../support/database.ts';
import { ADMIN, basic, call, callFrom, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const root = new URL('../..', import.meta.url).pathname;
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
      [['secrets', '--help'], /^Usage: dashgate \[--config <file>\] secrets <command>/],
      [['secrets', 'rotate-key', '--help'], /^Usage: dashgate \[--config <file>\] secrets rotate-key \(--old-key-from-stdin/],
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
      [['token', 'create', '--role', 'Boss', '--name', 'ci'], 'dashgate: --role must be one of None, Viewer, Editor, Admin, got "Boss"'],
      [['token', 'create', '--role', 'Admin'], 'dashgate: --name is required'],
      [['token', 'create', '--role', 'Admin', '--name', 'ci', '--org', 'one'], 'dashgate: --org must be a whole number of at least 1, got "one"'],
      [['token', 'create', '--role', 'Admin', '--name', 'ci', '--seconds-to-live', '1.5'], 'dashgate: --seconds-to-live must be a whole number of at least 0'],
      [['token', 'create', '--role', 'Admin', '--name', 'ci', '--colour', 'red'], "dashgate: Unknown option '--colour'"],
      [['token', 'create', '--role'], "dashgate: Option '--role <value>' argument missing"],
      [['migrate', 'now'], 'dashgate: unexpected argument "now"'],
      [['secrets'], 'dashgate: secrets needs a command'],
      [['secrets', 'rotate'], 'dashgate: unknown command "secrets rotate"'],
      [['secrets', 'rotate-key'], 'dashgate: give the old key with exactly one of --old-key-from-stdin, --old-key-file or --from-default-key'],
      [['secrets', 'rotate-key', '--from-default-key', '--old-key-from-stdin'], 'dashgate: give the old key with exactly one of'],
      [['secrets', 'rotate-key', '--from-default-key', 'k3y-on-the-command-line'], 'dashgate: unexpected argument "k3y-on-the-command-line" (keys are read from stdin or files, never from the command line)'],
      [['secrets', 'rotate-key', '--old-key-file', join(root, 'no-such.key')], `dashgate: cannot read the old key from ${join(root, 'no-such.key')}: ENOENT`],
      [['secrets', 'rotate-key', '--old-key-from-stdin'], 'dashgate: the old key is empty'],
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
    // The None role, as the original's org roles have it: a member that sees what grants give, here nothing.
    const none = await dashgate(['--config', config, 'token', 'create', '--role', 'None', '--name', 'no-role']);
    expect(none.code).toBe(0);
    const [row] = await server.sql<{ role: string }>("select role from api_key where name = 'no-role'");
    expect(row!.role).toBe('None');
    const listed = await call(server, 'GET', '/api/datasources', { auth: `Bearer ${none.stdout.trim()}` });
    expect([listed.status, listed.body]).toEqual([200, []]);
    expect((await call(server, 'POST', '/api/datasources', { auth: `Bearer ${none.stdout.trim()}`, body: { name: 'nope', type: 'loki', access: 'proxy' } })).status).toBe(403);
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

  it('clears the lockouts of the admin from every address', async () => {
    const read = (address: string, password: string) => callFrom(address, server, 'GET', '/api/datasources', { auth: basic('admin', password) });
    for (const address of ['127.0.0.2', '127.0.0.3']) for (let i = 0; i < 5; i++) await read(address, `wrong-${i}`);
    expect((await read('127.0.0.2', 'from stdin pw')).status).toBe(401);
    expect((await read('127.0.0.3', 'from stdin pw')).status).toBe(401);
    expect((await read('127.0.0.1', 'from stdin pw')).status).toBe(200); // the lockout is per address
    expect(await server.sql("select ip_address, count(*)::int as n from login_attempt where username = 'admin' and ip_address <> '127.0.0.1' group by 1 order by 1"))
      .toEqual([{ ip_address: '127.0.0.2', n: 5 }, { ip_address: '127.0.0.3', n: 5 }]);

    const run = await dashgate(['--config', config, 'admin', 'reset-admin-password', '--password-from-stdin'], { stdin: 'third-pw\n' });
    expect(run.code).toBe(0);
    expect(await server.sql("select 1 from login_attempt where username = 'admin'")).toEqual([]);
    for (const address of ['127.0.0.1', '127.0.0.2', '127.0.0.3']) expect((await read(address, 'third-pw')).status).toBe(200);
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

describe('secrets rotate-key', () => {
  let db: PgConnection;
  let upstream: Upstream;
  const keyFile = async (name: string, key: string) => {
    const file = join(dir, name);
    await writeFile(file, `${key}\n`);
    return file;
  };
  const configWithKey = async (name: string, key: string) => {
    const file = join(dir, name);
    await writeFile(file, `${configFor(db)}[security]\nsecret_key = ${key}\n`);
    return file;
  };
  /** The stored blobs, read straight from the database. */
  const stored = async () => {
    const client = new pg.Client(db);
    await client.connect();
    try {
      return (await client.query('select name, secure_json_data as s from data_source order by id')).rows;
    } finally {
      await client.end();
    }
  };
  /** What the proxy sends upstream for the data source `name`, on a server with `key`. */
  const proxiedWith = async (key: string, names: string[]) => {
    const server = await startTestServer({ connection: db, overrides: { security: { secret_key: key } } });
    try {
      const seen: Array<[string, number, string]> = [];
      for (const name of names) {
        const res = await call(server, 'GET', `/api/datasources/proxy/uid/${name}/x`);
        seen.push([name, res.status, res.text]);
      }
      return seen;
    } finally {
      await server.close();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    upstream = await startUpstream((req, res) => res.end(`${req.headers.authorization} ${req.headers['x-token']}`));
    // Created by a server on the public default key, as a first production install would have.
    const first = await startTestServer({ connection: db });
    try {
      for (const [name, secrets] of [['one', { basicAuthPassword: 'ONE-PW', httpHeaderValue1: 'ONE-TOKEN' }], ['two', { basicAuthPassword: 'TWO-PW' }], ['plain', {}]] as const) {
        const res = await call(first, 'POST', '/api/datasources', {
          body: { name, uid: name, type: 'loki', access: 'proxy', url: upstream.url, basicAuth: true, basicAuthUser: name, jsonData: { httpHeaderName1: 'X-Token' }, secureJsonData: secrets },
        });
        expect(res.status).toBe(200);
      }
    } finally {
      await first.close();
    }
  });
  afterAll(async () => {
    await upstream.close();
    await dropTestDatabase(db);
  });

  const expectedOn = (status: number) => [
    ['one', status, status === 200 ? `${basic('one', 'ONE-PW')} ONE-TOKEN` : '{"message":"Unable to load datasource meta data"}'],
    ['two', status, status === 200 ? `${basic('two', 'TWO-PW')} ` : '{"message":"Unable to load datasource meta data"}'],
  ];

  it('moves every secret from the public default key to the configured one, in one go', async () => {
    const config1 = await configWithKey('key-1.ini', 'first-own-key-0123456789');
    const run = await dashgate(['--config', config1, 'secrets', 'rotate-key', '--from-default-key']);
    expect(run).toEqual({ code: 0, stdout: 'Re-encrypted 3 secret(s) of 2 data source(s) with the new key; start the servers with it\n', stderr: '' });
    expect(await proxiedWith('first-own-key-0123456789', ['one', 'two'])).toEqual(expectedOn(200));
    // The old key opens nothing any more.
    expect(await proxiedWith('SW2YcwTIb9zpOOhoPsMm', ['one', 'two'])).toEqual(expectedOn(500));
  });

  it('refuses while a server is connected, and changes nothing', async () => {
    const before = await stored();
    const running = await startTestServer({ connection: db, overrides: { security: { secret_key: 'first-own-key-0123456789' } } });
    try {
      const config2 = await configWithKey('key-2.ini', 'second-own-key-0123456789');
      const run = await dashgate(['--config', config2, 'secrets', 'rotate-key', '--old-key-file', await keyFile('old.key', 'first-own-key-0123456789')]);
      expect(run).toEqual({ code: 1, stdout: '', stderr: 'dashgate: 1 dashgate server(s) are connected to this database: stop them all first, they would go on encrypting with the old key\n' });
      expect(await stored()).toEqual(before);
    } finally {
      await running.close();
    }
  });

  it('changes nothing when a secret does not open with the old key, naming it', async () => {
    const before = await stored();
    const config2 = await configWithKey('key-2.ini', 'second-own-key-0123456789');
    const run = await dashgate(['--config', config2, 'secrets', 'rotate-key', '--old-key-from-stdin'], { stdin: 'not-the-old-key\n' });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'dashgate: secret "httpHeaderValue1" of data source "one" (org 1, uid one) does not open with the old key; nothing was changed\n' });
    expect(await stored()).toEqual(before);
  });

  it('takes the old key from stdin or a file and the new one from the configuration or a file', async () => {
    const config2 = await configWithKey('key-2.ini', 'second-own-key-0123456789');
    const fromStdin = await dashgate(['--config', config2, 'secrets', 'rotate-key', '--old-key-from-stdin'], { stdin: 'first-own-key-0123456789\n' });
    expect(fromStdin.code).toBe(0);
    expect(await proxiedWith('second-own-key-0123456789', ['one', 'two'])).toEqual(expectedOn(200));
    const toFile = await dashgate(['--config', config2, 'secrets', 'rotate-key', '--old-key-file', await keyFile('second.key', 'second-own-key-0123456789'), '--new-key-file', await keyFile('third.key', 'third-own-key-0123456789')]);
    expect(toFile.code).toBe(0);
    expect(await proxiedWith('third-own-key-0123456789', ['one', 'two'])).toEqual(expectedOn(200));
  });

  it('refuses the public default, or the old key, as the new key', async () => {
    const config3 = await configWithKey('key-3.ini', 'third-own-key-0123456789');
    const toDefault = await dashgate(['--config', config3, 'secrets', 'rotate-key', '--old-key-file', await keyFile('third.key', 'third-own-key-0123456789'), '--new-key-file', await keyFile('default.key', 'SW2YcwTIb9zpOOhoPsMm')]);
    expect(toDefault).toEqual({ code: 1, stdout: '', stderr: 'dashgate: the new key is the public default from conf/defaults.ini: set your own in the configuration or give --new-key-file\n' });
    const same = await dashgate(['--config', config3, 'secrets', 'rotate-key', '--old-key-file', await keyFile('third.key', 'third-own-key-0123456789')]);
    expect(same).toEqual({ code: 1, stdout: '', stderr: 'dashgate: the new key is the old key: set the new one in the configuration or give --new-key-file\n' });
    expect(await proxiedWith('third-own-key-0123456789', ['one', 'two'])).toEqual(expectedOn(200));
  });
});
