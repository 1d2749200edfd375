import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { dataFrameFromJSON } from '../support/grafana-data.ts';
import { startPrometheus, type PrometheusUnderTest } from '../support/prometheus.ts';
import { startUpstream } from '../support/upstream.ts';

// POST /api/ds/query and /api/datasources/.../resources/* against a real Prometheus (or, without
// the package, its recorded answers): every query form, the envelope's statuses and messages,
// upstream failures as refId errors, limits, and resources passed through.

// Fixed absolute times, so requests (and recordings) are the same on every run.
const FROM = '1700000000000';
const TO = '1700000300000';

let server: TestServer;
let limited: TestServer;
let prom: PrometheusUnderTest;
let slow: Server;
let slowUrl: string;
const slowCalls: Array<{ closed: boolean }> = [];
let promDs: { id: number; uid: string };
let promGet: { id: number; uid: string };
let refusedDs: { uid: string };
let slowDs: { uid: string };
let sqlDs: { uid: string };
let limitedDs: { uid: string };
const VIEWER = basic('query-viewer', 'viewer-pass-1');

async function createDs(target: TestServer, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await call(target, 'POST', '/api/datasources', { body: { access: 'proxy', ...body }, headers });
  expect(res.status).toBe(200);
  return res.body.datasource as { id: number; uid: string };
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  prom = await startPrometheus();
  // Never answers; records when each call's connection closes (a timeout, or a cancel).
  slow = createServer((req) => {
    const seen = { closed: false };
    slowCalls.push(seen);
    req.socket.once('close', () => (seen.closed = true));
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  server = await startTestServer();
  limited = await startTestServer({ connection: server.connection, overrides: { query: { max_points_per_response: '10' }, dataproxy: { response_limit: '2000' } } });
  promDs = await createDs(server, { name: 'prom', type: 'prometheus', url: prom.url, jsonData: { timeInterval: '15s' } });
  promGet = await createDs(server, { name: 'prom-get', type: 'prometheus', url: prom.url, jsonData: { httpMethod: 'GET' } });
  refusedDs = await createDs(server, { name: 'refused', type: 'prometheus', url: `http://127.0.0.1:${await closedPort()}` });
  slowDs = await createDs(server, { name: 'slow', type: 'prometheus', url: slowUrl, jsonData: { timeout: 1 } });
  sqlDs = await createDs(server, { name: 'pg', type: 'grafana-postgresql-datasource', url: 'localhost:5432' });
  limitedDs = promDs;
  expect((await call(server, 'POST', '/api/admin/users', { body: { login: 'query-viewer', password: 'viewer-pass-1', email: 'qv@example.com' } })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await limited?.close();
  await server?.close();
  slow?.closeAllConnections();
  await new Promise<void>((resolve) => slow?.close(() => resolve()));
  await prom?.close();
});

const dsQuery = (body: unknown, options: { auth?: string | null; target?: TestServer } = {}) =>
  call(options.target ?? server, 'POST', '/api/ds/query', { body, auth: options.auth });

const promQuery = (ds: { uid: string }, extra: Record<string, unknown>) => ({ refId: 'A', datasource: { type: 'prometheus', uid: ds.uid }, ...extra });

/** Every frame of every refId decodes with the original frontend's decoder. */
function decodeAll(body: { results: Record<string, { frames?: unknown[] }> }) {
  return Object.fromEntries(Object.entries(body.results).map(([refId, r]) => [refId, (r.frames ?? []).map((f) => dataFrameFromJSON(f))]));
}

describe('Prometheus queries', () => {
  it('runs a range query: one frame per series, Time and Value, the step as interval, the executed query on the first frame', async () => {
    const res = await dsQuery({ from: FROM, to: TO, queries: [promQuery(promDs, { expr: 'vector(1)', range: true, intervalMs: 15000, maxDataPoints: 1000 })] });
    expect(res.status).toBe(200);
    const frame = res.body.results.A.frames[0];
    expect(res.body.results.A.status).toBe(200);
    expect(frame.schema).toEqual({
      refId: 'A',
      meta: { type: 'timeseries-multi', typeVersion: [0, 1], custom: { resultType: 'matrix' }, executedQueryString: 'Expr: vector(1)\nStep: 15s' },
      fields: [
        { name: 'Time', type: 'time', typeInfo: { frame: 'time.Time' }, config: { interval: 15000 } },
        { name: 'Value', type: 'number', typeInfo: { frame: 'float64' }, labels: {}, config: { displayNameFromDS: 'vector(1)' } },
      ],
    });
    // Start and end aligned to the 15 s step: 21 points over 5 minutes.
    const times = frame.data.values[0] as number[];
    expect(times).toHaveLength(21);
    expect(times[0]).toBe(1700000010000 - 15000 + 15000 * Math.ceil(0));
    expect(times.every((t) => t % 15000 === 0)).toBe(true);
    expect(new Set(frame.data.values[1])).toEqual(new Set([1]));
    const decoded = decodeAll(res.body).A![0]!;
    expect(decoded.fields[1]!.values).toEqual(new Array(21).fill(1));
  });

  it('runs an instant query (a scalar is one numeric-multi frame) and both forms at once, instant first', async () => {
    const instant = await dsQuery({ from: FROM, to: TO, queries: [promQuery(promDs, { expr: '1+1', instant: true })] });
    expect(instant.status).toBe(200);
    const frame = instant.body.results.A.frames[0];
    expect(frame.schema.meta).toMatchObject({ type: 'numeric-multi', custom: { resultType: 'scalar' } });
    expect(frame.data.values).toEqual([[1700000300000], [2]]);

    const both = await dsQuery({ from: FROM, to: TO, queries: [promQuery(promDs, { expr: 'vector(2)', instant: true, range: true, intervalMs: 60000 })] });
    expect(both.status).toBe(200);
    const frames = both.body.results.A.frames;
    expect(frames.map((f: any) => f.schema.meta.custom.resultType)).toEqual(['vector', 'matrix']);
    expect(frames[0].schema.meta.executedQueryString).toBe('Expr: vector(2)\nStep: 1m0s');
    expect(frames[1].schema.meta.executedQueryString).toBe('Expr: vector(2)\nStep: 1m0s');
    decodeAll(both.body);
  });

  it('names the value field after __name__, fills legendFormat, interpolates $__interval and $__range', async () => {
    const res = await dsQuery({
      from: FROM, to: TO, queries: [
        promQuery(promDs, { refId: 'L', expr: 'label_replace(label_replace(vector(3), "job", "api", "", ""), "__name__", "requests", "", "")', instant: true, legendFormat: 'job {{job}} on {{ missing }}' }),
        promQuery(promDs, { refId: 'I', expr: 'vector($__interval_ms) + vector($__range_s)', instant: true, intervalMs: 30000 }),
      ],
    });
    expect(res.status).toBe(200);
    const field = res.body.results.L.frames[0].schema.fields[1];
    expect(field).toMatchObject({ name: 'requests', labels: { __name__: 'requests', job: 'api' }, config: { displayNameFromDS: 'job api on ' } });
    expect(res.body.results.I.frames[0].schema.meta.executedQueryString).toBe('Expr: vector(30000) + vector(300)\nStep: 30s');
    expect(res.body.results.I.frames[0].data.values[1]).toEqual([30300]);
  });

  it('sends GET when jsonData.httpMethod says so', async () => {
    const res = await dsQuery({ from: FROM, to: TO, queries: [promQuery(promGet, { expr: '3*3', instant: true })] });
    expect(res.status).toBe(200);
    expect(res.body.results.A.frames[0].data.values[1]).toEqual([9]);
  });

  it('answers grafana-client health_check as the original: results.test.frames[0].schema.meta.executedQueryString', async () => {
    const now = 1700000300;
    const res = await dsQuery({
      queries: [{
        datasource: { type: 'prometheus', uid: promDs.uid }, datasourceId: promDs.id, expr: '1+1', format: 'time_series', hide: false,
        instant: false, interval: '', intervalMs: 30000, legendFormat: '', queryType: 'timeSeriesQuery', refId: 'test', requestId: '0test', step: 300, utcOffsetSec: 0,
      }],
      from: String((now - 300) * 1000), to: String(now * 1000),
    });
    expect(res.status).toBe(200);
    expect(res.body.results.test.frames[0].schema.meta.executedQueryString).toBe('Expr: 1+1\nStep: 30s');
    // A bare scalar series has no labels: the display name is the expression itself.
    expect(res.body.results.test.frames[0].schema.fields[1].config.displayNameFromDS).toBe('1+1');
  });

  it("reports Prometheus's own errors as the refId's, with the upstream status and a frame carrying the query, and answers 400 with the full results", async () => {
    const res = await dsQuery({ from: FROM, to: TO, queries: [promQuery(promDs, { refId: 'B', expr: 'sum(', instant: true }), promQuery(promDs, { expr: '1', instant: true })] });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.results)).toEqual(['A', 'B']);
    expect(res.body.results.A.status).toBe(200);
    const b = res.body.results.B;
    expect(Object.keys(b)).toEqual(['error', 'errorSource', 'status', 'frames']);
    expect(b.error).toMatch(/^bad_data: .*parse error/);
    expect(b).toMatchObject({ errorSource: 'downstream', status: 400 });
    expect(b.frames[0].schema).toEqual({ refId: 'B', meta: { typeVersion: [0, 0], executedQueryString: 'Expr: sum(\nStep: 15s' }, fields: [] });
  });

  it('runs several data sources in one request: an unreachable one fails its refId with 502, a silent one with 504', async () => {
    const res = await dsQuery({
      from: FROM, to: TO, queries: [
        promQuery(promDs, { refId: 'ok', expr: '1', instant: true }),
        promQuery(refusedDs, { refId: 'refused', expr: '1', instant: true }),
        promQuery(slowDs, { refId: 'slow', expr: '1', instant: true }),
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.results.ok.status).toBe(200);
    expect(res.body.results.refused).toMatchObject({ errorSource: 'downstream', status: 502 });
    expect(res.body.results.refused.error).toMatch(/^Post "http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query": dial tcp .*connection refused/);
    expect(res.body.results.slow).toMatchObject({ errorSource: 'downstream', status: 504 });
  }, 20_000);

  it('fails a refId past [query] max_points_per_response and an upstream body past [dataproxy] response_limit, never the request', async () => {
    const many = await dsQuery({ from: FROM, to: TO, queries: [promQuery(limitedDs, { expr: 'vector(1)', intervalMs: 15000, maxDataPoints: 1000 })] }, { target: limited });
    expect(many.status).toBe(400);
    expect(many.body.results.A).toMatchObject({ errorSource: 'plugin', status: 400 });
    expect(many.body.results.A.error).toContain('more than 10 data points');
    const big = await dsQuery({ from: FROM, to: TO, queries: [promQuery(limitedDs, { expr: `label_replace(vector(1), "a", "${'x'.repeat(3000)}", "", "")`, instant: true })] }, { target: limited });
    expect(big.status).toBe(400);
    expect(big.body.results.A.error).toContain('response body larger than 2000 bytes');
    expect(big.body.results.A.status).toBe(502);
  });
});

describe('TestData through the envelope', () => {
  it('answers random walks reproducibly with a seed, decodes every frame, and has a scenarios resource', async () => {
    const td = await createDs(server, { name: 'testdata', type: 'grafana-testdata-datasource' });
    const body = { from: FROM, to: TO, queries: [
      { refId: 'W', datasource: { type: 'grafana-testdata-datasource', uid: td.uid }, scenarioId: 'random_walk', seriesCount: 2, seed: 7, intervalMs: 10000 },
      { refId: 'N', datasource: { uid: td.uid }, scenarioId: 'no_data_points' },
      { refId: 'E', datasource: { uid: td.uid }, scenarioId: 'random_walk_with_error', seed: 1 },
    ] };
    const [one, two] = [await dsQuery(body), await dsQuery(body)];
    expect(one.status).toBe(400);
    expect(one.text).toBe(two.text);
    expect(one.body.results.W.frames).toHaveLength(2);
    expect(one.body.results.E).toMatchObject({ errorSource: 'plugin' });
    const decoded = decodeAll(one.body);
    expect(decoded.W![0]!.fields[0]!.values).toHaveLength(30);
    const scenarios = await call(server, 'GET', `/api/datasources/uid/${td.uid}/resources/scenarios`);
    expect(scenarios.status).toBe(200);
    expect(scenarios.body.map((s: { id: string }) => s.id)).toContain('random_walk');
  });
});

describe('the way out', () => {
  it("sends the data source's credentials, custom headers and Via like the proxy, and obeys the egress policy", async () => {
    const echo = await startUpstream();
    const guarded = await startTestServer({ connection: server.connection, overrides: { security: { data_source_proxy_deny_private: 'true' } } });
    try {
      const ds = await createDs(server, {
        name: 'echo', type: 'prometheus', url: `${echo.url}/prom`, basicAuth: true, basicAuthUser: 'reader',
        jsonData: { httpHeaderName1: 'X-Scope-OrgID', customQueryParameters: 'dedup=true' }, secureJsonData: { basicAuthPassword: 's3cret', httpHeaderValue1: 'tenant-1' },
      });
      const res = await dsQuery({ from: FROM, to: TO, queries: [promQuery(ds, { expr: 'up', instant: true })] });
      expect(res.status).toBe(200);
      const seen = echo.requests.at(-1)!;
      expect(seen.method).toBe('POST');
      expect(seen.url).toBe('/prom/api/v1/query?dedup=true');
      expect(seen.headers.authorization).toBe(`Basic ${Buffer.from('reader:s3cret').toString('base64')}`);
      expect(seen.headers['x-scope-orgid']).toBe('tenant-1');
      expect(seen.headers.via).toBe('1.1 dashgate');
      expect(seen.headers['content-type']).toBe('application/x-www-form-urlencoded');
      // The secret is nowhere in the answer.
      expect(res.text).not.toContain('s3cret');

      const denied = await dsQuery({ from: FROM, to: TO, queries: [promQuery(ds, { expr: 'up', instant: true })] }, { target: guarded });
      expect(denied.status).toBe(400);
      expect(denied.body.results.A).toMatchObject({ status: 403, errorSource: 'downstream', error: 'Data proxy target address is not allowed' });
    } finally {
      await guarded.close();
      await echo.close();
    }
  });
});

describe('cancellation', () => {
  /** Posts `body` to `path`, leaves once the slow upstream has its call, and waits for that call's connection to close. */
  async function leaveMidCall(path: string, body: string): Promise<void> {
    const before = slowCalls.length;
    const url = new URL(path, server.url);
    const client = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    client.on('error', () => {});
    client.end(body);
    const deadline = Date.now() + 5000;
    while (slowCalls.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(slowCalls.length).toBe(before + 1);
    expect(slowCalls[before]!.closed).toBe(false);
    client.destroy();
    while (!slowCalls[before]!.closed && Date.now() < deadline + 5000) await new Promise((r) => setTimeout(r, 20));
    // Closed long before the data source's 60 s timeout.
    expect(slowCalls[before]!.closed).toBe(true);
  }

  it('cancels the upstream calls of a client that goes away', async () => {
    const patient = await createDs(server, { name: 'patient', type: 'prometheus', url: slowUrl, jsonData: { timeout: 60 } });
    await leaveMidCall('/api/ds/query', JSON.stringify({ from: FROM, to: TO, queries: [promQuery(patient, { expr: '1', instant: true })] }));
  }, 20_000);

  it('cancels them too when the client of a GraphQL query goes away', async () => {
    const patient = await createDs(server, { name: 'patient-graphql', type: 'prometheus', url: slowUrl, jsonData: { timeout: 60 } });
    await leaveMidCall('/graphql', JSON.stringify({
      query: 'query($q: [JSONObject!]!) { dataQuery(queries: $q, from: "1700000000000", to: "1700000300000") { status } }',
      variables: { q: [promQuery(patient, { expr: '1', instant: true })] },
    }));
  }, 20_000);
});

describe('the envelope', () => {
  it.each([
    ['no queries', { from: FROM, to: TO, queries: [] }, { statusCode: 400, messageId: 'query.noQueries', message: 'No queries found' }],
    ['no data source identifier', { queries: [{ refId: 'A', expr: '1' }] }, { statusCode: 400, messageId: 'query.invalidDatasourceId', message: 'Query does not contain a valid data source identifier' }],
  ])('refuses %s with the errutil body', async (_title, body, expected) => {
    const res = await dsQuery(body);
    expect(res.status).toBe(400);
    expect(res.text).toBe(JSON.stringify(expected));
  });

  it('refuses a duplicate refId, a body that is not JSON, and an unknown, legacy-id or other org\'s data source', async () => {
    const dup = await dsQuery({ queries: [promQuery(promDs, { expr: '1' }), promQuery(promDs, { expr: '2' })] });
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({ statusCode: 400, messageId: 'query.duplicateRefId', message: 'Multiple queries using the same RefId is not allowed ' });
    const notJson = await call(server, 'POST', '/api/ds/query', { rawBody: '{"queries":', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({ message: 'bad request data' });
    const empty = await call(server, 'POST', '/api/ds/query', { rawBody: '' });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: 'bad request data' });
    const unknown = await dsQuery({ queries: [{ refId: 'A', datasource: { uid: 'nope' } }] });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Data source not found' });
    const unknownId = await dsQuery({ queries: [{ refId: 'A', datasourceId: 987654 }] });
    expect(unknownId.status).toBe(404);

    const org = await call(server, 'POST', '/api/orgs', { body: { name: 'query-other-org' } });
    const other = await createDs(server, { name: 'prom-other', type: 'prometheus', url: prom.url }, { 'x-grafana-org-id': String(org.body.orgId) });
    const foreign = await dsQuery({ queries: [{ refId: 'A', datasource: { uid: other.uid }, expr: '1' }] });
    expect(foreign.status).toBe(404);
    const foreignId = await dsQuery({ queries: [{ refId: 'A', datasourceId: other.id, expr: '1' }] });
    expect(foreignId.status).toBe(404);
  });

  it('accepts the legacy forms: datasource as a string, datasourceId alone, refId A by default; date math', async () => {
    // 1700000000 s is 2023-11-14T22:13:20Z: the same range as FROM..TO, written as date math.
    const res = await dsQuery({ from: '2023-11-14T22:13:20Z', to: '2023-11-14T22:13:20Z||+5m', queries: [{ datasource: promDs.uid, expr: '4', instant: true }, { refId: 'B', datasourceId: promDs.id, expr: '5', instant: true }] });
    expect(res.status).toBe(200);
    expect(res.body.results.A.frames[0].data.values[1]).toEqual([4]);
    expect(res.body.results.B.frames[0].data.values[1]).toEqual([5]);
  });

  it('answers kinds this server does not query with a per-refId error naming the kind', async () => {
    const res = await dsQuery({ queries: [{ refId: 'A', datasource: { uid: sqlDs.uid }, rawSql: 'SELECT 1' }] });
    expect(res.status).toBe(400);
    expect(res.body.results.A).toEqual({ error: 'data source type "grafana-postgresql-datasource" is not supported by this server\'s query API', errorSource: 'plugin', status: 501 });
  });

  it('admits Viewers (datasources:query) and refuses anonymous callers', async () => {
    const viewer = await dsQuery({ from: FROM, to: TO, queries: [promQuery(promDs, { expr: '1', instant: true })] }, { auth: VIEWER });
    expect(viewer.status).toBe(200);
    const anonymous = await dsQuery({ queries: [] }, { auth: null });
    expect(anonymous.status).toBe(401);
  });
});

describe('resources', () => {
  it('passes any Prometheus path through, by uid and by id, with its query string and body', async () => {
    const build = await call(server, 'GET', `/api/datasources/uid/${promDs.uid}/resources/api/v1/status/buildinfo`);
    expect(build.status).toBe(200);
    expect(build.body.status).toBe('success');
    expect(typeof build.body.data.version).toBe('string');
    const labels = await call(server, 'GET', `/api/datasources/${promDs.id}/resources/api/v1/labels?start=1700000000&end=1700000300`, { auth: VIEWER });
    expect(labels.status).toBe(200);
    expect(labels.body).toMatchObject({ status: 'success' });
    expect(Array.isArray(labels.body.data)).toBe(true);
    const posted = await call(server, 'POST', `/api/datasources/uid/${promDs.uid}/resources/api/v1/query`, {
      rawBody: 'query=7&time=1700000300', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(posted.status).toBe(200);
    expect(posted.body.data).toEqual({ resultType: 'scalar', result: [1700000300, '7'] });
    const bad = await call(server, 'GET', `/api/datasources/uid/${promDs.uid}/resources/api/v1/query?query=sum(&time=1700000300`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 'error', errorType: 'bad_data' });
  });

  it('answers 404 for a kind without resources and for an unknown data source, 502 for an unreachable one', async () => {
    const none = await call(server, 'GET', `/api/datasources/uid/${sqlDs.uid}/resources/tables`);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ message: 'Not found' });
    const unknown = await call(server, 'GET', '/api/datasources/uid/nope/resources/api/v1/labels');
    expect(unknown.status).toBe(404);
    const refused = await call(server, 'GET', `/api/datasources/uid/${refusedDs.uid}/resources/api/v1/labels`);
    expect(refused.status).toBe(502);
    const anonymous = await call(server, 'GET', `/api/datasources/uid/${promDs.uid}/resources/api/v1/labels`, { auth: null });
    expect(anonymous.status).toBe(401);
  });
});

describe('queries in the graph', () => {
  const FRAME_FIELDS = 'status results { refId status error errorSource frames { refId length meta fields { name type goType nullable labels { name value } displayName numbers values } } }';

  it("gives a data source's query typed frames, from the same service as /api/ds/query", async () => {
    const res = await gql(server, `query($uid: String!, $q: [JSONObject!]!) { currentOrganization { dataSource(uid: $uid) { name query(from: "${FROM}", to: "${TO}", queries: $q) { ${FRAME_FIELDS} } } } }`,
      { uid: promDs.uid, q: [{ refId: 'A', expr: 'label_replace(vector(1), "job", "api", "", "")', intervalMs: 60000 }] });
    expect(res.body.errors).toBeUndefined();
    const result = res.body.data.currentOrganization.dataSource.query;
    expect(result.status).toBe(200);
    const frame = result.results[0].frames[0];
    expect(result.results[0]).toMatchObject({ refId: 'A', status: 200, error: null, errorSource: null });
    expect(frame.length).toBe(6);
    expect(frame.meta).toMatchObject({ type: 'timeseries-multi', executedQueryString: expect.stringContaining('Step: 1m0s') });
    expect(frame.fields[0]).toMatchObject({ name: 'Time', type: 'TIME', goType: 'time.Time', nullable: false, labels: null });
    expect(frame.fields[0].numbers.every((t: number) => t % 60000 === 0)).toBe(true);
    expect(frame.fields[1]).toMatchObject({ name: 'Value', type: 'NUMBER', labels: [{ name: 'job', value: 'api' }], displayName: '{job="api"}', numbers: [1, 1, 1, 1, 1, 1] });
  });

  it('runs mixed queries through the root field, errors per refId, and refuses as the REST route does', async () => {
    const res = await gql(server, `query($q: [JSONObject!]!) { dataQuery(from: "${FROM}", to: "${TO}", queries: $q) { ${FRAME_FIELDS} } }`, {
      q: [promQuery(promDs, { refId: 'B', expr: 'sum(', instant: true }), promQuery(promGet, { refId: 'A', expr: '2', instant: true })],
    });
    expect(res.body.errors).toBeUndefined();
    const { status, results } = res.body.data.dataQuery;
    expect(status).toBe(400);
    expect(results.map((r: { refId: string }) => r.refId)).toEqual(['A', 'B']);
    expect(results[0].frames[0].fields[1].numbers).toEqual([2]);
    expect(results[1]).toMatchObject({ status: 400, errorSource: 'downstream', error: expect.stringMatching(/^bad_data: /) });

    const missing = await gql(server, 'query { dataQuery(queries: [{refId: "A", datasource: {uid: "nope"}}]) { status } }');
    expect(missing.body.errors?.[0]).toMatchObject({ message: 'Data source not found', extensions: { code: 'NOT_FOUND' } });
    const anonymous = await gql(server, 'query { dataQuery(queries: []) { status } }', {}, null);
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

it('uses the admin credentials helper', () => {
  expect(ADMIN).toMatch(/^Basic /);
});
