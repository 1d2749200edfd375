import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { createDataSource } from '../robustness/helpers.ts';
import { load, sleep } from '../robustness/load.ts';

/** A garbage collection on demand, without starting node with --expose-gc. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let server: TestServer;

beforeAll(async () => {
  // At warn, the harness keeps no access-log line per request (which would look like a leak).
  server = await startTestServer({ overrides: { log: { level: 'warn' } } });
});
afterAll(() => server.close());

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(100);
  }
  return process.memoryUsage().heapUsed;
}

describe('a minute of mixed traffic', () => {
  it('leaves the heap where it started', async () => {
    const ds = await createDataSource(server, ADMIN, { name: 'soaked', jsonData: { a: 1 } });
    const token = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: 'soak', role: 'Admin' } })).body.key}`;
    let turn = 0;
    const request = () => {
      const n = turn++ % 5;
      if (n === 0) return call(server, 'GET', `/api/datasources/${ds.id}`, { auth: token });
      if (n === 1) return call(server, 'GET', '/api/datasources', { auth: ADMIN });
      if (n === 2) return call(server, 'PUT', `/api/datasources/${ds.id}`, { auth: token, body: { name: 'soaked', type: 'loki', access: 'proxy', jsonData: { a: turn } } });
      if (n === 3) return call(server, 'GET', '/api/datasources/name/does-not-exist', { auth: token });
      return gql(server, `{ dataSource(id: ${ds.id}) { name jsonData } }`, {}, token).then((r) => ({ status: r.status, text: r.text }));
    };
    const warm = load(8, request);
    await sleep(5000);
    await warm.stop();
    const before = await settledHeap();
    const soak = load(8, request);
    await sleep(60_000);
    await soak.stop();
    const after = await settledHeap();
    expect(soak.samples.length).toBeGreaterThan(5000);
    expect(soak.samples.every((s) => s.status === 200 || s.status === 404)).toBe(true);
    expect((after - before) / 1024 / 1024).toBeLessThan(20);
  }, 120_000);
});
