import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { startEmbeddedPostgres, type EmbeddedCluster } from '../../src/db/embedded.ts';
import { ADMIN, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { createDataSource } from './helpers.ts';
import { load, sleep, terminateBackends } from './load.ts';

describe('PostgreSQL connections terminated under load', () => {
  let server: TestServer;
  afterAll(() => server?.close());

  it('never crashes or answers 500, and is back to 200s within seconds', async () => {
    server = await startTestServer();
    const ds = await createDataSource(server, ADMIN, { name: 'under-fire', url: 'http://upstream.invalid' });
    const token = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: 'load', role: 'Viewer' } })).body.key}`;
    const query = `{ currentOrganization { dataSource(databaseId: ${ds.id}) { name } } }`;
    let turn = 0;
    const traffic = load(8, () => (turn++ % 4 === 0
      ? gql(server, query, {}, token).then((r) => ({ status: r.status, text: r.text }))
      : call(server, 'GET', `/api/datasources/${ds.id}`, { auth: token })));

    await sleep(700);
    const kills: number[] = [];
    let lastKill = 0;
    for (let round = 0; round < 3; round++) {
      kills.push(await terminateBackends(server.connection));
      lastKill = performance.now();
      await sleep(500);
    }
    // Recovery: the first success after the last termination, then a stretch of nothing but 200s.
    await sleep(1500);
    await traffic.stop();

    expect(kills.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const statuses = new Set(traffic.samples.map((s) => s.status));
    expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);
    for (const failed of traffic.samples.filter((s) => s.status === 503)) {
      expect(failed.body).toMatch(/"message":"database unavailable"/);
    }
    const after = traffic.samples.filter((s) => s.at > lastKill);
    const firstOk = after.find((s) => s.status === 200);
    expect(firstOk).toBeDefined();
    expect(firstOk!.at - lastKill).toBeLessThan(3000);
    const tail = traffic.samples.filter((s) => s.at > lastKill + 1000);
    expect(tail.length).toBeGreaterThan(20);
    expect(tail.every((s) => s.status === 200)).toBe(true);
    expect((await call(server, 'GET', '/api/health', { auth: null })).status).toBe(200);
  }, 30_000);
});

describe('PostgreSQL stopped and started again (a cluster of this test\'s own)', () => {
  let dir = '';
  let cluster: EmbeddedCluster | null = null;
  let server: TestServer | null = null;
  afterAll(async () => {
    await server?.close();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers JSON 503s at once while it is down and recovers without a restart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashgate-faults-'));
    await chmod(dir, 0o755); // reachable by the postgres user the cluster runs as under root
    const pgDir = join(dir, 'pg');
    cluster = await startEmbeddedPostgres({ dir: pgDir, port: 0, database: 'faults' });
    const port = cluster.connection.port;
    server = await startTestServer({ connection: cluster.connection });
    const ds = await createDataSource(server, ADMIN, { name: 'survivor' });
    const token = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: 'restart', role: 'Viewer' } })).body.key}`;
    expect((await call(server, 'GET', `/api/datasources/${ds.id}`, { auth: token })).status).toBe(200);

    await cluster.stop();
    cluster = null;
    for (const auth of [token, ADMIN]) {
      const started = performance.now();
      const rest = await call(server, 'GET', `/api/datasources/${ds.id}`, { auth });
      expect(performance.now() - started).toBeLessThan(2000);
      expect([rest.status, rest.body]).toEqual([503, { message: 'database unavailable' }]);
    }
    const graphql = await gql(server, `{ currentOrganization { dataSource(databaseId: ${ds.id}) { name } } }`, {}, token);
    expect(graphql.status).toBe(503);
    expect(graphql.body.errors?.[0]).toMatchObject({ message: 'database unavailable', extensions: { code: 'UNAVAILABLE' } });
    const write = await call(server, 'POST', '/api/datasources', { auth: ADMIN, body: { name: 'while-down', type: 'loki', access: 'proxy' } });
    expect(write.status).toBe(503);
    const proxied = await call(server, 'GET', `/api/datasources/proxy/${ds.id}/api/v1/labels`, { auth: token });
    expect([proxied.status, proxied.body]).toEqual([503, { message: 'database unavailable' }]);
    const health = await call(server, 'GET', '/api/health', { auth: null });
    expect(health.status).toBe(503);
    expect(health.body.database).toBe('failing');

    cluster = await startEmbeddedPostgres({ dir: pgDir, port, database: 'faults' });
    const restarted = performance.now();
    let status = 0;
    while (status !== 200 && performance.now() - restarted < 10_000) {
      status = (await call(server, 'GET', `/api/datasources/${ds.id}`, { auth: token })).status;
      if (status !== 200) await sleep(100);
    }
    expect(status).toBe(200);
    expect(performance.now() - restarted).toBeLessThan(5000);
    expect((await call(server, 'POST', '/api/datasources', { auth: ADMIN, body: { name: 'after-restart', type: 'loki', access: 'proxy' } })).status).toBe(200);
    expect((await gql(server, `{ currentOrganization { dataSource(databaseId: ${ds.id}) { name } } }`, {}, token)).body.data.currentOrganization.dataSource.name).toBe('survivor');
    // The health probe is cached for a few seconds; it must turn healthy again by itself.
    let healthy = 0;
    while (healthy !== 200 && performance.now() - restarted < 15_000) {
      healthy = (await call(server, 'GET', '/api/health', { auth: null })).status;
      if (healthy !== 200) await sleep(250);
    }
    expect(healthy).toBe(200);
  }, 60_000);
});
