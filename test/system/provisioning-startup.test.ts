import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';
import { ADMIN } from '../support/server.ts';

const root = new URL('../..', import.meta.url).pathname;
let dir = '';
let connection: PgConnection;
let config = '';
let port = 0;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `node src/main.ts --config <file>` with extra environment; resolves once it listens or exits. */
function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--experimental-async-context-frame', 'src/main.ts', '--config', config], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000);
    const started = { child, output: () => output, exited };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('dashgate listening')) {
        clearTimeout(timer);
        resolve(started);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      resolve(started);
    });
  });
}

async function stop(started: Started): Promise<number | null> {
  started.child.kill('SIGTERM');
  return started.exited;
}

function logLines(output: string): Array<Record<string, unknown>> {
  return output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: ADMIN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function sql<T>(text: string): Promise<T[]> {
  const client = new pg.Client(connection);
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

const FILE = `apiVersion: 1
datasources:
  - name: provisioned-prom
    type: prometheus
    url: $PROM_URL
    isDefault: true
    secureJsonData:
      httpHeaderValue1: \${PROM_TOKEN}
    jsonData:
      httpHeaderName1: Authorization
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashgate-prov-start-'));
  connection = await createTestDatabase();
  port = await freePort();
  config = join(dir, 'custom.ini');
  await mkdir(join(dir, 'provisioning', 'datasources'), { recursive: true });
  await writeFile(join(dir, 'provisioning', 'datasources', 'prom.yaml'), FILE);
  await writeFile(config, `[paths]
data = ${dir}/data
provisioning = ${dir}/provisioning
[database]
type = postgres
host = ${connection.host}:${connection.port}
name = ${connection.database}
user = ${connection.user}
password = ${connection.password}
[server]
http_addr = 127.0.0.1
http_port = ${port}
[log]
level = info
[security]
secret_key = provisioning-test-key-0123456789
`);
});
afterAll(async () => {
  await dropTestDatabase(connection);
  await rm(dir, { recursive: true, force: true });
});

describe('provisioning at start-up', () => {
  const env = { PROM_URL: 'http://prometheus.internal:9090', PROM_TOKEN: 'Bearer START-CANARY' };

  it('creates the declared data sources read-only, from the process environment, and a restart changes nothing', async () => {
    const first = await start(env);
    const [created] = logLines(first.output()).filter((l) => l.msg === 'data sources provisioned');
    expect(created).toMatchObject({ files: 1, created: 1, updated: 0, unchanged: 0 });
    const shown = await api('GET', '/api/datasources/name/provisioned-prom');
    expect(shown.body).toMatchObject({ url: 'http://prometheus.internal:9090', isDefault: true, readOnly: true, version: 1, secureJsonFields: { httpHeaderValue1: true } });
    const put = await api('PUT', `/api/datasources/${shown.body.id}`, { name: 'provisioned-prom', type: 'prometheus', access: 'proxy', url: 'http://other' });
    expect(put).toEqual({ status: 403, body: { message: 'Cannot update read-only data source' } });
    expect(await api('DELETE', '/api/datasources/name/provisioned-prom')).toEqual({ status: 403, body: { message: 'Cannot delete read-only data source' } });
    expect(await stop(first)).toBe(0);
    expect(first.output()).not.toContain('START-CANARY');
    // [log] level = info and router_logging off (the default): request lines are debug, so not written.
    expect(logLines(first.output()).filter((l) => l.msg === 'request')).toEqual([]);
    expect(logLines(first.output()).some((l) => l.msg === 'stopped')).toBe(true);

    const [before] = await sql<{ updated: Date; version: number }>("select updated, version from data_source where name = 'provisioned-prom'");
    const second = await start(env);
    const [again] = logLines(second.output()).filter((l) => l.msg === 'data sources provisioned');
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 1 });
    expect(await stop(second)).toBe(0);
    const [after] = await sql<{ updated: Date; version: number }>("select updated, version from data_source where name = 'provisioned-prom'");
    expect(after).toEqual(before);
    expect(after!.version).toBe(1);
  }, 120_000);

  it('refuses to start on a bad file, naming the file and line, and exits 1', async () => {
    const broken = join(dir, 'provisioning', 'datasources', 'zz-broken.yaml');
    await writeFile(broken, 'apiVersion: 1\ndatasources:\n  - name: fine\n    type: loki\n    orgId: first\n');
    try {
      const run = await start(env);
      expect(await run.exited).toBe(1);
      expect(run.output()).not.toContain('dashgate listening');
      expect(run.output()).toContain(`dashgate: start-up failed: ${broken}:5:12: datasources[0].orgId must be an integer, got "first"`);
    } finally {
      await rm(broken);
    }
  }, 60_000);
});
