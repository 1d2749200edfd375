import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';
import { freePort, listening, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';
import { call } from '../support/server.ts';
import { DATA_SOURCE_CHANGED, subscribe } from '../support/sse.ts';

// SIGTERM with `[server] shutdown_drain_seconds`: the drain a load balancer needs comes first, then
// the shutdown test/system/shutdown.test.ts holds to (refused connections, streams ended, in-flight
// requests finished, exit 0).

let dir = '';
let db: PgConnection | null = null;
const started: MainProcess[] = [];

afterAll(async () => {
  for (const main of started) if (main.child.exitCode === null) main.child.kill('SIGKILL');
  if (db) await dropTestDatabase(db);
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function startServer(drainSeconds: number): Promise<{ main: MainProcess; base: string; port: number }> {
  dir ||= await mkdtemp(join(tmpdir(), 'dashgate-drain-'));
  db ??= await createTestDatabase();
  const port = await freePort();
  const config = join(dir, `drain-${port}.ini`);
  await writeFile(config, [
    '[server]', 'http_addr = 127.0.0.1', `http_port = ${port}`, `shutdown_drain_seconds = ${drainSeconds}`,
    '[database]', 'type = postgres', `host = ${db.host}:${db.port}`, `name = ${db.database}`, `user = ${db.user}`, `password = ${db.password}`,
    '[security]', 'secret_key = drain-test-key-0123456789abcdef0123', '[log]', 'level = info', '',
  ].join('\n'));
  const main = spawnMain({ config });
  started.push(main);
  await listening(main);
  return { main, base: `http://127.0.0.1:${port}`, port };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('SIGTERM with shutdown_drain_seconds', () => {
  it('fails /api/health for the drain while serving requests and streams, then stops taking connections, ends streams and exits 0', async () => {
    const { main, base, port } = await startServer(2);
    const server = { url: base };
    expect((await call(server, 'GET', '/api/health', { auth: null })).status).toBe(200);
    const stream = await subscribe(server, DATA_SOURCE_CHANGED);
    expect(stream.status).toBe(200);

    const signalledAt = Date.now();
    main.child.kill('SIGTERM');
    await until(() => main.stdout().includes('draining'), 'the drain to begin');
    const health = await call(server, 'GET', '/api/health', { auth: null });
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ database: 'ok', draining: true });
    // Still taking connections and serving them, writes included; streams still flowing.
    const created = await call(server, 'POST', '/api/datasources', { body: { name: 'drained', type: 'loki', access: 'proxy' } });
    expect(created.status).toBe(200);
    expect(created.headers.get('connection')).toBe('close');
    await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.name === 'drained');
    expect(Date.now() - signalledAt).toBeLessThan(2_000);

    // Then the shutdown proper: refused, the stream's final event, exit 0.
    const last = await stream.waitFor((e) => e.data?.errors !== undefined, 5_000);
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(2_000);
    expect(last.data.errors[0]).toMatchObject({ message: 'Server shutting down; subscribe again', extensions: { code: 'UNAVAILABLE' } });
    await stream.ended;
    expect(await refused(port)).toBe(true);
    expect(await main.exited).toBe(0);
    expect(main.stdout()).toContain('"msg":"stopped"');
  }, 120_000);

  it('a second signal ends the drain at once', async () => {
    const { main } = await startServer(60);
    const signalledAt = Date.now();
    main.child.kill('SIGTERM');
    await until(() => main.stdout().includes('draining'), 'the drain to begin');
    main.child.kill('SIGTERM');
    expect(await main.exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    expect(main.stdout()).toContain('second signal');
    await stopMain(main);
  }, 120_000);
});
