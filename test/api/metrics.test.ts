import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROUTES } from '../../src/http/routes.ts';
import { COMMIT, VERSION } from '../../src/version.ts';
import { call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

let a: TestServer;
let b: TestServer;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    res.writeHead(req.url?.startsWith('/fail') ? 500 : 200, { 'content-type': 'text/plain' });
    res.end('upstream');
  });
  a = await startTestServer();
  b = await startTestServer({ connection: a.connection }); // a second app in this process, same database
});
afterAll(async () => {
  await b.close();
  await a.close();
  await upstream.close();
});

async function scrape(server: TestServer): Promise<string> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample, by metric name and exact label set as printed. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  it('keeps one registry per app: two apps in one process count only their own requests', async () => {
    for (let i = 0; i < 3; i++) await call(a, 'GET', '/api/datasources');
    await call(b, 'GET', '/api/datasources');
    const series = 'dashgate_http_requests_total{method="GET",route="/api/datasources",status="200"}';
    expect(sample(await scrape(a), series)).toBe(3);
    expect(sample(await scrape(b), series)).toBe(1);
  });

  it('labels every request with its route template, never a raw path', async () => {
    const ds = (await call(a, 'POST', '/api/datasources', { body: { name: 'metrics-up', type: 'loki', access: 'proxy', url: upstream.url } })).body;
    await call(a, 'GET', `/api/datasources/${ds.id}`);
    await call(a, 'GET', '/api/datasources/name/metrics-up');
    await call(a, 'DELETE', '/api/datasources/uid/no-such-uid');
    await call(a, 'GET', '/api/datasources/7/nothing-here');
    await call(a, 'GET', '/not-api-at-all');
    await gql(a, '{ currentOrganization { dataSources { nodes { id } } } }');
    await call(a, 'GET', `/api/datasources/proxy/${ds.id}/ok`);
    await call(a, 'GET', '/api/health', { auth: null });
    const text = await scrape(a);

    expect(sample(text, 'dashgate_http_requests_total{method="GET",route="/api/datasources/:id",status="200"}')).toBe(1);
    expect(sample(text, 'dashgate_http_requests_total{method="GET",route="/api/datasources/name/:name",status="200"}')).toBe(1);
    expect(sample(text, 'dashgate_http_requests_total{method="DELETE",route="/api/datasources/uid/:uid",status="404"}')).toBe(1);
    expect(sample(text, 'dashgate_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(2);
    expect(sample(text, 'dashgate_http_requests_total{method="POST",route="/graphql",status="200"}')).toBe(1);
    expect(sample(text, 'dashgate_http_requests_total{method="GET",route="/api/health",status="200"}')).toBe(1);
    expect(sample(text, 'dashgate_http_request_duration_seconds_count{method="GET",route="/api/datasources/:id",status="200"}')).toBe(1);

    const templates = new Set([...ROUTES.map((r) => r.path), '/graphql', '/api/health', '/metrics', '/api/openapi.json', 'unmatched']);
    const routes = [...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]!);
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) expect(templates.has(route) || route.startsWith('/api/datasources/proxy/')).toBe(true);
    expect(text).not.toContain(`/${ds.id}"`);
    expect(text).not.toContain('metrics-up');
  });

  it('counts proxied calls by upstream status and data source type, with their upstream time', async () => {
    const ds = (await call(a, 'POST', '/api/datasources', { body: { name: 'metrics-proxy', type: 'tempo', access: 'proxy', url: upstream.url } })).body;
    await call(a, 'GET', `/api/datasources/proxy/${ds.id}/ok`);
    await call(a, 'GET', `/api/datasources/proxy/${ds.id}/ok`);
    await call(a, 'GET', `/api/datasources/proxy/${ds.id}/fail`);
    const text = await scrape(a);
    expect(sample(text, 'dashgate_proxy_upstream_requests_total{status="200",type="tempo"}')).toBe(2);
    expect(sample(text, 'dashgate_proxy_upstream_requests_total{status="500",type="tempo"}')).toBe(1);
    expect(sample(text, 'dashgate_proxy_upstream_duration_seconds_count{status="200",type="tempo"}')).toBe(2);
    expect(sample(await scrape(b), 'dashgate_proxy_upstream_requests_total{status="200",type="tempo"}')).toBeUndefined();
  });

  it('reports the database pool, the build and the process', async () => {
    const text = await scrape(a);
    const total = sample(text, 'dashgate_db_pool_connections{state="total"}')!;
    const idle = sample(text, 'dashgate_db_pool_connections{state="idle"}')!;
    expect(total).toBeGreaterThanOrEqual(1); // the requests above opened at least one
    expect(sample(text, 'dashgate_db_pool_connections{state="in_use"}')).toBe(total - idle);
    expect(sample(text, 'dashgate_db_pool_waiting')).toBe(0);
    expect(sample(text, 'dashgate_db_pool_max_connections')).toBe(10);
    expect(sample(text, `dashgate_build_info{version="${VERSION}",commit="${COMMIT}"}`)).toBe(1);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE dashgate_http_request_duration_seconds histogram');
  });

  it('is not served when [metrics] enabled is false', async () => {
    const off = await startTestServer({ connection: a.connection, overrides: { metrics: { enabled: 'false' } } });
    try {
      const res = await call(off, 'GET', '/metrics', { auth: null });
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('dashgate_');
    } finally {
      await off.close();
    }
  });
});
