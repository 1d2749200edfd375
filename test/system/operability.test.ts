import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { basic, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

let server: TestServer;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  server = await startTestServer({ overrides: { server: { router_logging: 'true' }, dataproxy: { logging: 'true' }, log: { level: 'info' } } });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

describe('GET /api/health', () => {
  it('answers without credentials', async () => {
    const res = await call(server, 'GET', '/api/health', { auth: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ database: 'ok', version: expect.any(String), commit: expect.any(String) });
  });

  it('reports a failing database with 503 instead of hanging', async () => {
    const doomed = await startTestServer();
    expect((await call(doomed, 'GET', '/api/health', { auth: null })).status).toBe(200);
    // The database goes away: existing connections are killed and new ones refused.
    const admin = new pg.Client({ ...doomed.connection, database: 'postgres' });
    await admin.connect();
    await admin.query(`alter database ${doomed.connection.database} allow_connections false`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [doomed.connection.database]);
    await new Promise((resolve) => setTimeout(resolve, 3_100)); // past the probe cache
    const started = Date.now();
    const res = await call(doomed, 'GET', '/api/health', { auth: null });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ database: 'failing' });
    expect(Date.now() - started).toBeLessThan(3_000);
    await admin.query(`alter database ${doomed.connection.database} allow_connections true`);
    await admin.end();
    // And it recovers without a restart.
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    expect((await call(doomed, 'GET', '/api/health', { auth: null })).status).toBe(200);
    await doomed.close();
  });
});

describe('GET /metrics', () => {
  it('counts requests by route template, proxy upstream calls and pool use', async () => {
    const ds = (await call(server, 'POST', '/api/datasources', { body: { name: 'metered', type: 'loki', access: 'proxy', url: upstream.url } })).body;
    await call(server, 'GET', `/api/datasources/${ds.id}`);
    await call(server, 'GET', '/api/datasources/999999');
    await call(server, 'GET', `/api/datasources/proxy/${ds.id}/x`);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('dashgate_http_requests_total{method="GET",route="/api/datasources/:id",status="200"} 1');
    expect(text).toContain('dashgate_http_requests_total{method="GET",route="/api/datasources/:id",status="404"} 1');
    expect(text).not.toContain(`route="/api/datasources/${ds.id}"`);
    expect(text).toMatch(/dashgate_http_request_duration_seconds_bucket\{le="[\d.]+",method="POST",route="\/api\/datasources",status="200"\}/);
    expect(text).toContain('dashgate_proxy_upstream_requests_total{status="200",type="loki"} 1');

    expect(text).toMatch(/dashgate_db_pool_connections\{state="total"\} \d+/);
  });

  it('can be switched off', async () => {
    const off = await startTestServer({ connection: server.connection, overrides: { metrics: { enabled: 'false' } } });
    try {
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('logging', () => {
  it('writes one structured line per request and never a secret', async () => {
    const ds = await call(server, 'POST', '/api/datasources', {
      body: { name: 'logged', type: 'loki', access: 'proxy', url: upstream.url, secureJsonData: { token: 'LOG-CANARY-DS' }, password: 'LOG-CANARY-LEGACY' },
    });
    await call(server, 'POST', '/api/admin/users', { body: { login: 'log-user', password: 'LOG-CANARY-PW' } });
    await call(server, 'GET', '/api/datasources', { auth: basic('log-user', 'LOG-CANARY-PW') });
    await call(server, 'GET', '/api/datasources', { auth: basic('log-user', 'LOG-CANARY-WRONG') });
    const key = (await call(server, 'POST', '/api/auth/keys', { body: { name: 'log-key', role: 'Viewer' } })).body.key;
    await call(server, 'GET', `/api/datasources/${ds.body.id}`, { auth: `Bearer ${key}` });
    await call(server, 'GET', `/api/datasources/proxy/${ds.body.id}/q?secret=LOG-CANARY-QUERY`, { headers: { cookie: 'grafana_session=LOG-CANARY-COOKIE' } });
    await call(server, 'PUT', '/api/admin/users/1/password', { body: { password: 'admin' } });

    const lines = server.logs.filter((l) => l.msg === 'request');
    const line = lines.find((l) => l.route === '/api/datasources/:id' && l.status === 200);
    expect(line).toMatchObject({ method: 'GET', route: '/api/datasources/:id', status: 200, orgId: 1, level: 30 });
    expect(typeof line!.durationMs).toBe('number');
    expect(lines.some((l) => l.route === '/api/datasources/proxy/:id/*')).toBe(true);
    expect(server.logs.some((l) => l.component === 'dataproxy')).toBe(true);
    const text = server.logText();
    expect(text).not.toContain('LOG-CANARY');
    expect(text).not.toContain(key);
    expect(text).not.toContain(Buffer.from('log-user:LOG-CANARY-PW').toString('base64'));
  });
});
