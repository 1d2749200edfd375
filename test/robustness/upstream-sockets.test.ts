import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';
import { freePort, listening, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';
import { call } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// Thousands of refIds against a data source that never answers, sent to the server as it runs in
// production (its own process) under the common open-file limit of 1,024: the calls wait in the
// request's and the server's queues ([dataproxy] concurrent_calls_per_request and concurrent_calls,
// at their defaults) instead of opening a socket each, so the process stays well below its limit
// and every other client keeps being answered.

const OPEN_FILES = 1024;
/** The documented default. */
const PER_REQUEST = 16;
/** Below its default (256), so that two requests meet it. */
const PER_SERVER = 24;

let database: PgConnection;
let hanging: Upstream;
let main: MainProcess;
let server: { url: string };

beforeAll(async () => {
  database = await createTestDatabase();
  hanging = await startUpstream(() => {});
  const port = await freePort();
  main = spawnMain({
    openFiles: OPEN_FILES,
    env: {
      GF_SERVER_HTTP_ADDR: '127.0.0.1', GF_SERVER_HTTP_PORT: String(port), GF_LOG_LEVEL: 'info', GF_DATAPROXY_CONCURRENT_CALLS: String(PER_SERVER),
      // Past its default (1,000), so that one request holds far more refIds than the queues' slots.
      GF_QUERY_MAX_QUERIES_PER_REQUEST: '5000',
      GF_SECURITY_SECRET_KEY: 'upstream-sockets-test-key-0123456789', GF_DATABASE_TYPE: 'postgres', GF_DATABASE_HOST: `${database.host}:${database.port}`,
      GF_DATABASE_NAME: database.database, GF_DATABASE_USER: database.user, GF_DATABASE_PASSWORD: database.password,
    },
  });
  await listening(main);
  server = { url: `http://127.0.0.1:${port}` };
}, 180_000);
afterAll(async () => {
  if (main) await stopMain(main);
  await hanging?.close();
  if (database) await dropTestDatabase(database);
});

const openFiles = () => readdirSync(`/proc/${main.child.pid}/fd`).length;

/** One /api/ds/query of `refIds` Prometheus refIds on `uid`. */
function bigQuery(uid: string, refIds: number, id: number) {
  const queries = Array.from({ length: refIds }, (_, i) => ({ refId: `R${id}-${i}`, datasource: { uid }, expr: '1', instant: true }));
  return call(server, 'POST', '/api/ds/query', { body: { from: '1700000000000', to: '1700000300000', queries } });
}

describe(`refIds on a hanging upstream, under ulimit -n ${OPEN_FILES}`, () => {
  it('hold a bounded number of sockets while every other client is answered, and each refId ends with its timeout', async () => {
    const limit = readFileSync(`/proc/${main.child.pid}/limits`, 'utf8').split('\n').find((line) => line.startsWith('Max open files'))!;
    expect(limit.split(/\s{2,}/)[1]).toBe(String(OPEN_FILES));
    const created = await call(server, 'POST', '/api/datasources', { body: { name: 'hanging', uid: 'hanging', type: 'prometheus', access: 'proxy', url: hanging.url, jsonData: { timeout: 5 } } });
    expect(created.status).toBe(200);
    const baseline = openFiles();

    // One request of 5,000 refIds, then two of 3,000 at once: more than the server's slots.
    // Sampled every 100 ms while the refIds wait: the process's open files, and the sockets the
    // hanging upstream holds open (as it sees them: a socket we close goes from its count a moment later).
    const watched = async <T>(run: () => Promise<T>) => {
      let most = 0;
      let upstreamMost = 0;
      const answered: number[] = [];
      let done = false;
      const watcher = (async () => {
        while (!done) {
          most = Math.max(most, openFiles());
          upstreamMost = Math.max(upstreamMost, hanging.connections.open);
          const started = performance.now();
          // Other clients, each on a connection of its own.
          const [health, list] = await Promise.all([
            fetch(`${server.url}/api/health`, { headers: { connection: 'close' } }),
            call(server, 'GET', '/api/datasources', { headers: { connection: 'close' } }),
          ]);
          await health.text();
          expect([health.status, list.status]).toEqual([200, 200]);
          answered.push(performance.now() - started);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      try {
        return { result: await run(), most: () => most, upstreamMost: () => upstreamMost, answered };
      } finally {
        done = true;
        await watcher;
      }
    };

    const one = await watched(() => bigQuery('hanging', 5000, 0));
    expect(one.result.status).toBe(400);
    const results = Object.values(one.result.body.results) as Array<{ status: number; error: string }>;
    expect(results).toHaveLength(5000);
    for (const result of results) {
      expect(result.status).toBe(504);
      expect(result.error).toMatch(/^Post "http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query": timeout after 5s awaiting the data source's answer \(Client\.Timeout exceeded\)$/);
    }
    expect(one.upstreamMost()).toBe(PER_REQUEST);
    expect(one.most()).toBeLessThan(baseline + PER_REQUEST + 40);
    expect(one.answered.length).toBeGreaterThan(10);
    expect(Math.max(...one.answered)).toBeLessThan(2000);

    // 3,000 each: two requests of 5,000 unknown-size refIds would pass the instance's answer
    // memory ([query] max_answer_bytes_in_flight), and the second would be answered 503 at once.
    const many = await watched(() => Promise.all(Array.from({ length: 2 }, (_, i) => bigQuery('hanging', 3000, i + 1))));
    for (const res of many.result) expect([res.status, Object.keys(res.body.results ?? res.body).length]).toEqual([400, 3000]);
    expect(many.upstreamMost()).toBe(PER_SERVER);
    expect(many.most()).toBeLessThan(baseline + PER_SERVER + 40);
    expect(many.most()).toBeLessThan(OPEN_FILES / 2);
    expect(many.answered.length).toBeGreaterThan(10);
    // Answered while it all ran: none waited for the refIds.
    expect(Math.max(...many.answered)).toBeLessThan(2000);
    // Nothing is left behind: the calls' sockets are closed once they timed out.
    const deadline = Date.now() + 5000;
    while (hanging.connections.open > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(hanging.connections.open).toBe(0);
  }, 240_000);
});
