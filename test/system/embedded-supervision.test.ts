import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { LISTENER_APPLICATION_NAME } from '../../src/db/change-listener.ts';
import { load, sleep, type Sample } from '../robustness/load.ts';
import { freePort, listening, occupy, postmasterPid, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';
import { call, gql } from '../support/server.ts';

// The embedded PostgreSQL supervised by the server process that started it (src/db/supervisor.ts):
// `kill -9` of its postmaster, as the OOM killer or an operator would.

const folders: string[] = [];
const processes: MainProcess[] = [];
const sockets: Server[] = [];

afterAll(async () => {
  for (const main of processes) await stopMain(main);
  for (const socket of sockets) await new Promise((resolve) => socket.close(resolve));
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

/** A server on the embedded database in a folder of its own, with both ports fixed. */
async function startServer(): Promise<{ main: MainProcess; url: string; clusterDir: string; pgPort: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'dashgate-supervised-'));
  folders.push(dir);
  await chmod(dir, 0o755);
  const [httpPort, pgPort] = [await freePort(), await freePort()];
  const config = join(dir, 'custom.ini');
  await writeFile(config, `[paths]\ndata = ${dir}/data\n[server]\nhttp_addr = 127.0.0.1\nhttp_port = ${httpPort}\n[database]\nembedded_port = ${pgPort}\n[log]\nlevel = info\n`);
  const main = spawnMain({ config });
  processes.push(main);
  await listening(main);
  return { main, url: `http://127.0.0.1:${httpPort}`, clusterDir: `${dir}/data/postgres`, pgPort };
}

const messages = (main: MainProcess) => main.logs().map((l) => String(l.msg));

describe('the embedded PostgreSQL killed under load', () => {
  it('is restarted within a second; requests get 503 in the gap and 200 again within 5 s; no committed write is lost', async () => {
    const { main, url, clusterDir, pgPort } = await startServer();
    const server = { url };
    const updated = await Promise.all([0, 1].map(async (i) => (await call(server, 'POST', '/api/datasources', { body: { name: `updated-${i}`, type: 'loki', access: 'proxy' } })).body.id as number));

    // Writes whose answer was 200 must survive; an update answered 503 may or may not have committed.
    const created: string[] = [];
    const lastUpdate = updated.map(() => ({ acked: 0, tried: 0 }));
    let turn = 0;
    const request = async (): Promise<{ status: number; text: string }> => {
      const n = turn++;
      switch (n % 5) {
        case 0: {
          const name = `created-${n}`;
          const res = await call(server, 'POST', '/api/datasources', { body: { name, type: 'loki', access: 'proxy' } });
          if (res.status === 200) created.push(name);
          return res;
        }
        case 1: {
          const which = Math.floor(n / 5) % 2;
          const value = ++lastUpdate[which]!.tried;
          const res = await call(server, 'PUT', `/api/datasources/${updated[which]}`, { body: { name: `updated-${which}`, type: 'loki', access: 'proxy', jsonData: { value } } });
          if (res.status === 200) lastUpdate[which]!.acked = Math.max(lastUpdate[which]!.acked, value);
          return res;
        }
        case 2:
          return call(server, 'GET', `/api/datasources/${updated[0]}`);
        case 3:
          return gql(server, `{ currentOrganization { dataSource(databaseId: ${updated[1]}) { name } } }`);
        default:
          return call(server, 'GET', '/api/datasources');
      }
    };
    const traffic = load(6, request);
    await sleep(1500);
    const before = await postmasterPid(clusterDir);
    process.kill(before, 'SIGKILL');
    const killedAt = performance.now();

    // Until 200s come back, then two more seconds of them.
    while (!traffic.samples.some((s) => s.at > killedAt + 300 && s.status === 200) && performance.now() - killedAt < 10_000) await sleep(50);
    await sleep(2000);
    await traffic.stop();

    const after = (s: Sample) => s.at > killedAt;
    expect([...new Set(traffic.samples.map((s) => s.status))].filter((status) => status !== 200 && status !== 503)).toEqual([]);
    const unavailable = traffic.samples.filter((s) => s.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const s of unavailable) {
      const body = JSON.parse(s.body) as { message?: string; errors?: Array<{ message: string }> };
      expect(body.message ?? body.errors?.[0]?.message).toBe('database unavailable');
    }
    expect(unavailable.filter((s) => s.body.startsWith('{"message"')).length).toBeGreaterThan(0);
    const firstOk = traffic.samples.filter(after).find((s) => s.status === 200 && unavailable.some((u) => u.at < s.at));
    expect(firstOk).toBeDefined();
    expect(firstOk!.at - killedAt).toBeLessThan(5000);
    expect(traffic.samples.filter((s) => s.at > killedAt + 5000).every((s) => s.status === 200)).toBe(true);

    // Every write answered 200 is there.
    const list = await call<Array<{ id: number; name: string; jsonData: { value?: number } }>>(server, 'GET', '/api/datasources');
    const names = new Set(list.body.map((d) => d.name));
    expect(created.length).toBeGreaterThan(5);
    expect(created.filter((name) => !names.has(name))).toEqual([]);
    for (const [i, id] of updated.entries()) {
      const stored = list.body.find((d) => d.id === id)!.jsonData.value ?? 0;
      expect(stored).toBeGreaterThanOrEqual(lastUpdate[i]!.acked);
      expect(stored).toBeLessThanOrEqual(lastUpdate[i]!.tried);
    }

    // A new postmaster, logged and counted.
    expect(await postmasterPid(clusterDir)).not.toBe(before);
    expect(messages(main).some((m) => /^embedded PostgreSQL exited unexpectedly \(killed by SIGKILL\); starting it again in \d+ ms$/.test(m))).toBe(true);
    const exitLine = main.logs().find((l) => String(l.msg).startsWith('embedded PostgreSQL exited unexpectedly'))!;
    expect(exitLine.retryInMs).toBeLessThanOrEqual(1000);
    expect(messages(main).filter((m) => m === 'embedded PostgreSQL restarted')).toHaveLength(1);
    expect((await call(server, 'GET', '/metrics', { auth: null })).text).toMatch(/^dashgate_embedded_postgres_restarts_total 1$/m);

    // The change listener is back on the new postmaster.
    const password = (await readFile(`${clusterDir}.secret`, 'utf8')).trim();
    const client = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'postgres', password, database: 'dashgate' });
    await client.connect();
    try {
      let listeners = 0;
      for (const deadline = Date.now() + 5000; listeners !== 1 && Date.now() < deadline; await sleep(100)) {
        listeners = (await client.query('select 1 from pg_stat_activity where application_name = $1', [LISTENER_APPLICATION_NAME])).rowCount ?? 0;
      }
      expect(listeners).toBe(1);
      // The server's own connections (listener and pool) come over the cluster's Unix socket,
      // which PostgreSQL shows as client port -1; this one came over TCP.
      const own = await client.query<{ application_name: string; client_port: number }>(
        "select application_name, client_port from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()",
      );
      expect(own.rows.map((row) => row.application_name)).toContain(LISTENER_APPLICATION_NAME);
      expect(own.rows.map((row) => row.client_port)).toEqual(own.rows.map(() => -1));
      expect((await client.query<{ client_port: number }>('select client_port from pg_stat_activity where pid = pg_backend_pid()')).rows[0]!.client_port).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
    let health = 0;
    for (const deadline = Date.now() + 10_000; health !== 200 && Date.now() < deadline; await sleep(250)) health = (await call(server, 'GET', '/api/health', { auth: null })).status;
    expect(health).toBe(200);

    // Transactions cut by the kill gave their pool connections back (src/db/pool-leaks.ts).
    let inUse = '';
    for (const deadline = Date.now() + 5000; inUse !== '0' && Date.now() < deadline; await sleep(100)) {
      inUse = /^dashgate_db_pool_connections\{state="in_use"\} (\d+)$/m.exec((await call(server, 'GET', '/metrics', { auth: null })).text)?.[1] ?? '';
    }
    expect(inUse).toBe('0');

    expect(await stopMain(main)).toBe(0);
  }, 180_000);
});

describe('an embedded PostgreSQL that cannot be started again', () => {
  it('makes the server exit 1 with one line saying why, after a few spaced attempts', async () => {
    const { main, url, clusterDir, pgPort } = await startServer();
    process.kill(await postmasterPid(clusterDir), 'SIGKILL');
    // Its port taken before the first restart attempt: every attempt fails.
    sockets.push(await occupy(pgPort));
    const killedAt = Date.now();

    expect(await main.exited).toBe(1);
    const tookMs = Date.now() - killedAt;
    const stderr = main.stderr().trim().split('\n');
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^dashgate: the embedded PostgreSQL failed 6 times within 60 s, so dashgate stopped restarting it; the last failure: could not be started again: /);
    expect(stderr[0]).toContain(`cannot listen on 127.0.0.1 port ${pgPort}: the port is already in use; set [database] embedded_port / GF_DATABASE_EMBEDDED_PORT`);
    const attempts = main.logs().filter((l) => String(l.msg).startsWith('embedded PostgreSQL could not be started again'));
    expect(attempts.map((l) => l.retryInMs)).toEqual([500, 1000, 2000, 4000]);
    // The waits add up to 7.75 s before the sixth failure.
    expect(tookMs).toBeGreaterThan(7000);
    expect(main.logs().at(-1)).toMatchObject({ level: 60, cause: 'database_restarts_failed' });
    await expect(fetch(`${url}/api/health`)).rejects.toThrow();
  }, 180_000);
});

describe('a server that dies without stopping its embedded PostgreSQL', () => {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('takes it down too: killed (as a fatal out-of-memory abort ends it, no exit handler run), its postmaster shuts down within seconds', async () => {
    const { main, clusterDir } = await startServer();
    const postmaster = await postmasterPid(clusterDir);
    expect(alive(postmaster)).toBe(true);
    main.child.kill('SIGKILL');
    await main.exited;
    const deadline = Date.now() + 15_000;
    while (alive(postmaster) && Date.now() < deadline) await sleep(50);
    expect(alive(postmaster)).toBe(false);
    // Shut down cleanly (fast shutdown): the next start needs no stale-postmaster clean-up.
    await expect(readFile(`${clusterDir}/postmaster.pid`, 'utf8')).rejects.toThrow();
  }, 120_000);

  it('stops it itself on a clean stop, its watchdog leaving without a word', async () => {
    const { main, clusterDir } = await startServer();
    const postmaster = await postmasterPid(clusterDir);
    expect(await stopMain(main)).toBe(0);
    expect(alive(postmaster)).toBe(false);
    expect(main.stderr()).not.toMatch(/watchdog/);
  }, 120_000);
});
