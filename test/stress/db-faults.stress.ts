import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { startEmbeddedPostgres, type EmbeddedCluster } from '../../src/db/embedded.ts';
import { ADMIN, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { createDataSource } from '../robustness/helpers.ts';
import { load, sleep, terminateBackends, type Sample } from '../robustness/load.ts';

/** Mixed reads: REST with a token and with Basic, and GraphQL. */
function mixedTraffic(server: TestServer, token: string, id: number): () => Promise<{ status: number; text: string }> {
  let turn = 0;
  return () => {
    const n = turn++ % 3;
    if (n === 0) return call(server, 'GET', `/api/datasources/${id}`, { auth: token });
    if (n === 1) return call(server, 'GET', '/api/datasources', { auth: ADMIN });
    return gql(server, `{ currentOrganization { dataSource(databaseId: ${id}) { name } } }`, {}, token).then((r) => ({ status: r.status, text: r.text }));
  };
}

function onlyOkOrUnavailable(samples: Sample[]): void {
  expect([...new Set(samples.map((s) => s.status))].filter((s) => s !== 200 && s !== 503)).toEqual([]);
  for (const s of samples.filter((x) => x.status === 503)) expect(s.body).toContain('database unavailable');
}

describe('connections terminated every 2 s for a minute', () => {
  let server: TestServer;
  afterAll(() => server?.close());

  it('keeps answering 200 or 503 and recovers after every termination', async () => {
    server = await startTestServer();
    const ds = await createDataSource(server, ADMIN, { name: 'stress-target' });
    const token = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: 'stress', role: 'Viewer' } })).body.key}`;
    const traffic = load(16, mixedTraffic(server, token, ds.id));
    const kills: number[] = [];
    for (let i = 0; i < 30; i++) {
      await sleep(2000);
      await terminateBackends(server.connection);
      kills.push(performance.now());
    }
    await sleep(3000);
    await traffic.stop();

    onlyOkOrUnavailable(traffic.samples);
    for (const [i, at] of kills.entries()) {
      const firstOk = traffic.samples.find((s) => s.at > at && s.status === 200);
      expect([i, firstOk !== undefined && firstOk.at - at < 2000]).toEqual([i, true]);
    }
    const ok = traffic.samples.filter((s) => s.status === 200).length;
    expect(ok / traffic.samples.length).toBeGreaterThan(0.9);
    expect(traffic.samples.filter((s) => s.at > kills.at(-1)! + 1500).every((s) => s.status === 200)).toBe(true);
  }, 120_000);
});

describe('PostgreSQL stopped and started five times under load', () => {
  let dir = '';
  let cluster: EmbeddedCluster | null = null;
  let server: TestServer | null = null;
  afterAll(async () => {
    await server?.close();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 promptly while down and 200 again within seconds of each start', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashgate-stress-'));
    await chmod(dir, 0o755);
    const pgDir = join(dir, 'pg');
    cluster = await startEmbeddedPostgres({ dir: pgDir, port: 0, database: 'stress' });
    const port = cluster.connection.port;
    server = await startTestServer({ connection: cluster.connection });
    const ds = await createDataSource(server, ADMIN, { name: 'stress-restarts' });
    const token = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: 'stress', role: 'Viewer' } })).body.key}`;
    const traffic = load(8, mixedTraffic(server, token, ds.id));
    const starts: number[] = [];
    for (let cycle = 0; cycle < 5; cycle++) {
      await sleep(1500);
      await cluster.stop();
      cluster = null;
      await sleep(2000);
      cluster = await startEmbeddedPostgres({ dir: pgDir, port, database: 'stress' });
      starts.push(performance.now());
    }
    await sleep(3000);
    await traffic.stop();

    onlyOkOrUnavailable(traffic.samples);
    // No request hung on the dead database.
    expect(Math.max(...traffic.samples.map((s) => s.ms))).toBeLessThan(5000);
    expect(traffic.samples.filter((s) => s.status === 503).length).toBeGreaterThan(0);
    for (const at of starts) {
      const firstOk = traffic.samples.find((s) => s.at > at && s.status === 200);
      expect(firstOk).toBeDefined();
      expect(firstOk!.at - at).toBeLessThan(5000);
    }
    expect(traffic.samples.filter((s) => s.at > starts.at(-1)! + 2000).every((s) => s.status === 200)).toBe(true);
  }, 120_000);
});
