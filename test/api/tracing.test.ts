import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { subscribe } from '../support/sse.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { startUpstream, type Recorded, type Upstream } from '../support/upstream.ts';

// OpenTelemetry traces against an OTLP/HTTP receiver the test runs (what the JSON exporter sends,
// decoded) and a real upstream that records what reaches it: a request's spans form one trace
// with the client's, the data source is told that trace, nothing secret is exported, and with
// tracing off nothing is sent and no trace header is added.

const SERVER_SPAN = 2;
const CLIENT_SPAN = 3;

let receiver: OtlpReceiver;
let upstream: Upstream;
let server: TestServer;

/** Secrets of the data source, the caller's password and its Basic header, and a query string's token. */
const SECRETS = { basicAuthPassword: 'DS-BASIC-PW-5f1c', header: 'DS-HEADER-SECRET-93ab', userPassword: 'USER-PW-c0ffee-77', queryToken: 'QS-TOKEN-d00d-42' };
const VIEWER = basic('trace-viewer', SECRETS.userPassword);

async function createDs(target: TestServer, name: string, url: string): Promise<{ id: number; uid: string }> {
  const res = await call(target, 'POST', '/api/datasources', {
    body: {
      name, type: 'prometheus', access: 'proxy', url, basicAuth: true, basicAuthUser: 'svc',
      jsonData: { httpHeaderName1: 'X-Scope-OrgID', httpMethod: 'GET' },
      secureJsonData: { basicAuthPassword: SECRETS.basicAuthPassword, httpHeaderValue1: SECRETS.header },
    },
  });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

/** What reached the upstream while `run` ran. */
async function reaching<T>(run: () => Promise<T>): Promise<{ result: T; calls: Recorded[] }> {
  const before = upstream.requests.length;
  const result = await run();
  return { result, calls: upstream.requests.slice(before) };
}

function traceparentOf(call: Recorded): { traceId: string; parentId: string; flags: string } {
  const value = call.headers.traceparent;
  expect(typeof value).toBe('string');
  const [version, traceId, parentId, flags] = (value as string).split('-');
  expect(version).toBe('00');
  return { traceId: traceId!, parentId: parentId!, flags: flags! };
}

/** The request's server span (by route) of the trace `traceId`, once exported, with every span of its trace. */
async function traceOf(target: TestServer, match: (span: ReceivedSpan) => boolean): Promise<{ root: ReceivedSpan; spans: ReceivedSpan[] }> {
  await target.app.tracing!.flush();
  const [root] = await receiver.waitFor((span) => span.kind === SERVER_SPAN && match(span));
  return { root: root!, spans: receiver.spans.filter((span) => span.traceId === root!.traceId) };
}

beforeAll(async () => {
  [receiver, upstream] = await Promise.all([startOtlpReceiver(), startUpstream()]);
  server = await startTestServer({
    overrides: {
      'tracing.opentelemetry.otlp': { address: receiver.address },
      'tracing.opentelemetry': { service_name: 'dashgate-test', custom_attributes: 'deployment:test,region:here' },
      server: { router_logging: 'true' },
      dataproxy: { logging: 'true' },
      live: { min_refresh: '200ms' },
    },
  });
  expect((await call(server, 'POST', '/api/admin/users', { body: { login: 'trace-viewer', password: SECRETS.userPassword } })).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([receiver?.close(), upstream?.close()]);
});

describe('a REST request through the proxy', () => {
  it('is one trace: the front door, its SQL and the upstream call, and the upstream is told the same trace', async () => {
    const ds = await createDs(server, 'traced-proxy', upstream.url);
    const { result, calls } = await reaching(() => call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/api/v1/query?query=up&token=${SECRETS.queryToken}`, { auth: VIEWER }));
    expect(result.status).toBe(200);
    expect(calls).toHaveLength(1);

    const { root, spans } = await traceOf(server, (s) => s.attributes['http.route'] === '/api/datasources/proxy/uid/:uid/*');
    expect(root.name).toBe('GET /api/datasources/proxy/uid/:uid/*');
    expect(root.parentSpanId).toBe('');
    expect(root.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 200, 'url.scheme': 'http' });
    expect(root.resource).toMatchObject({ 'service.name': 'dashgate-test', deployment: 'test', region: 'here' });

    // The statements that loaded the caller and the data source, under the request.
    const sql = spans.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    expect(sql.length).toBeGreaterThan(0);
    for (const statement of sql) {
      expect(statement.kind).toBe(CLIENT_SPAN);
      expect(statement.attributes['db.operation.name']).toMatch(/^[A-Z]+$/);
      expect(statement.attributes['db.query.text']).toBeUndefined();
    }
    expect(sql.some((s) => s.attributes['db.collection.name'] === 'data_source')).toBe(true);

    const upstreamSpans = spans.filter((s) => s.kind === CLIENT_SPAN && s.attributes.datasource_uid !== undefined);
    expect(upstreamSpans).toHaveLength(1);
    const out = upstreamSpans[0]!;
    expect(out.parentSpanId).toBe(root.spanId);
    expect(out.attributes).toMatchObject({
      datasource_uid: ds.uid, datasource_type: 'prometheus', 'http.request.method': 'GET', 'http.response.status_code': 200,
      'server.address': '127.0.0.1', 'server.port': upstream.port, 'url.scheme': 'http',
    });

    // The upstream continues the same trace, under the upstream call's span.
    const sent = traceparentOf(calls[0]!);
    expect(sent).toEqual({ traceId: root.traceId, parentId: out.spanId, flags: '01' });
  });

  it("continues the client's trace (traceparent and tracestate) and passes it on", async () => {
    const ds = await createDs(server, 'traced-continued', upstream.url);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const { result, calls } = await reaching(() => call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/api/v1/labels`, {
      auth: VIEWER, headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=abc' },
    }));
    expect(result.status).toBe(200);
    const { root, spans } = await traceOf(server, (s) => s.traceId === traceId);
    expect(root.parentSpanId).toBe(parentId);
    const out = spans.find((s) => s.kind === CLIENT_SPAN && s.attributes.datasource_uid === ds.uid)!;
    expect(traceparentOf(calls[0]!)).toEqual({ traceId, parentId: out.spanId, flags: '01' });
    expect(calls[0]!.headers.tracestate).toBe('vendor=abc');
  });

  it("keeps a client's decision not to sample: no span is exported, the upstream is told the trace unsampled", async () => {
    const ds = await createDs(server, 'traced-unsampled', upstream.url);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const { calls } = await reaching(() => call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/x`, {
      auth: VIEWER, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-00` },
    }));
    const sent = traceparentOf(calls[0]!);
    expect(sent.traceId).toBe(traceId);
    expect(sent.flags).toBe('00');
    await server.app.tracing!.flush();
    expect(receiver.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });

  it('starts a new trace for a malformed traceparent, and sends its own in place of it', async () => {
    const ds = await createDs(server, 'traced-malformed', upstream.url);
    const { calls } = await reaching(() => call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/x`, {
      auth: VIEWER, headers: { traceparent: '00-zzzz-not-a-trace' },
    }));
    const sent = traceparentOf(calls[0]!);
    expect(sent.traceId).toMatch(/^[0-9a-f]{32}$/);
    const { root } = await traceOf(server, (s) => s.traceId === sent.traceId);
    expect(root.parentSpanId).toBe('');
  });
});

describe('every call through the one way out carries the trace', () => {
  it('queries, resources and health checks: each upstream call is told the request\'s trace, under its own span', async () => {
    const ds = await createDs(server, 'traced-calls', upstream.url);
    const requests: Array<{ route: string; run: () => Promise<{ status: number }> }> = [
      {
        route: '/api/ds/query',
        run: () => call(server, 'POST', '/api/ds/query', { auth: VIEWER, body: { from: 'now-1h', to: 'now', queries: [{ refId: 'A', datasource: { uid: ds.uid }, expr: 'up' }] } }),
      },
      { route: '/api/datasources/uid/:uid/resources/*', run: () => call(server, 'GET', `/api/datasources/uid/${ds.uid}/resources/api/v1/labels`, { auth: VIEWER }) },
      { route: '/api/datasources/uid/:uid/health', run: () => call(server, 'GET', `/api/datasources/uid/${ds.uid}/health`) },
    ];
    for (const { route, run } of requests) {
      const { calls } = await reaching(run);
      expect(calls.length).toBeGreaterThan(0);
      const sent = calls.map(traceparentOf);
      const { root, spans } = await traceOf(server, (s) => s.traceId === sent[0]!.traceId);
      expect(root.attributes['http.route']).toBe(route);
      for (const { traceId, parentId } of sent) {
        expect(traceId).toBe(root.traceId);
        const out = spans.find((s) => s.spanId === parentId)!;
        expect(out.kind).toBe(CLIENT_SPAN);
        expect(out.attributes.datasource_uid).toBe(ds.uid);
      }
    }
  });
});

describe('live queries', () => {
  it("make a trace of each refresh, and tell the data source its trace, under the call's span", async () => {
    const ds = await createDs(server, 'traced-live', upstream.url);
    const before = upstream.requests.length;
    const stream = await subscribe(server, 'subscription($q: [JSONObject!]!) { liveQuery(queries: $q, from: "now-10s", to: "now", refresh: "200ms") { refreshedAt } }', {
      variables: { q: [{ refId: 'A', datasource: { uid: ds.uid }, expr: 'up', range: true, intervalMs: 1000 }] },
    });
    try {
      await stream.waitFor((event) => event.event === 'next', 5000);
    } finally {
      stream.close();
    }
    const calls = upstream.requests.slice(before);
    expect(calls.length).toBeGreaterThan(0);
    const sent = traceparentOf(calls[0]!);
    await server.app.tracing!.flush();
    const [out] = await receiver.waitFor((s) => s.spanId === sent.parentId);
    expect(out).toMatchObject({ traceId: sent.traceId, kind: CLIENT_SPAN });
    expect(out!.attributes.datasource_uid).toBe(ds.uid);
    // Shared by every viewer, a refresh is a trace of its own, not part of the subscriber's request.
    const [refresh] = await receiver.waitFor((s) => s.spanId === out!.parentSpanId);
    expect(refresh).toMatchObject({ name: 'live query refresh', parentSpanId: '', traceId: sent.traceId });
    expect(refresh!.attributes).toMatchObject({ queries: 1 });
  });
});

describe('GraphQL', () => {
  it('has a span per operation, with its type and name, under the request and over its SQL', async () => {
    const res = await gql(server, 'query TracedList { currentOrganization { dataSources { nodes { id name } } } }');
    expect(res.status).toBe(200);
    const { root, spans } = await traceOf(server, (s) => s.attributes['http.route'] === '/graphql' && receiver.spans.some((o) => o.traceId === s.traceId && o.name === 'query TracedList'));
    const operation = spans.find((s) => s.name === 'query TracedList')!;
    expect(operation.parentSpanId).toBe(root.spanId);
    expect(operation.attributes).toEqual({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'TracedList' });
    expect(spans.some((s) => s.parentSpanId === operation.spanId && s.attributes['db.system.name'] === 'postgresql')).toBe(true);
  });

  it('gives REST rows, which run operations too, their operation span', async () => {
    const res = await call(server, 'GET', '/api/datasources');
    expect(res.status).toBe(200);
    const { root, spans } = await traceOf(server, (s) => s.name === 'GET /api/datasources');
    const operation = spans.find((s) => s.parentSpanId === root.spanId && s.attributes['graphql.operation.type'] === 'query');
    expect(operation).toBeDefined();
  });

  it("keeps a client's operation name short in the span", async () => {
    const name = `Long${'x'.repeat(5000)}`;
    expect((await gql(server, `query ${name} { currentOrganization { dataSources { nodes { id } } } }`)).status).toBe(200);
    await server.app.tracing!.flush();
    const [operation] = await receiver.waitFor((s) => s.name.startsWith('query Longxxx'));
    expect(operation!.name).toBe(`query ${name.slice(0, 128)}`);
    expect(operation!.attributes['graphql.operation.name']).toBe(name.slice(0, 128));
  });

  it('marks a failed operation with its error code, never its message', async () => {
    const res = await gql(server, 'mutation TracedDenied { dataSourceCreate(input: { name: "nope-none", type: "loki", access: "proxy" }) { dataSource { id } } }', {}, VIEWER);
    const code = res.body.errors?.[0]?.extensions?.code;
    expect(code).toMatch(/^[A-Z_]+$/);
    await server.app.tracing!.flush();
    const [operation] = await receiver.waitFor((s) => s.name === 'mutation TracedDenied');
    expect(operation!.status).toBe(2);
    expect(operation!.attributes['error.type']).toBe(code);
    expect(JSON.stringify(operation)).not.toContain(res.body.errors![0]!.message);
  });
});

describe('log lines', () => {
  it("carry the request's trace id", async () => {
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4736';
    const res = await call(server, 'GET', '/api/datasources', { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const line = server.logs.find((l) => l.msg === 'request' && l.trace_id === traceId);
    expect(line).toMatchObject({ route: '/api/datasources', status: 200 });
  });

  it('carry the trace and span ids of the work they were written in', async () => {
    const ds = await createDs(server, 'traced-logged', upstream.url);
    const traceId = '6bf92f3577b34da6a3ce929d0e0e4736';
    await call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/x`, { auth: VIEWER, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    const { root } = await traceOf(server, (s) => s.traceId === traceId);
    // The proxy's own line, written while the request is served.
    const line = server.logs.find((l) => l.msg === 'proxying request' && l.trace_id === traceId);
    expect(line).toMatchObject({ span_id: root.spanId, dsType: 'prometheus' });
  });
});

describe('secrets', () => {
  it('appear in no exported span: not the data source\'s, not the caller\'s credentials, not a query string', async () => {
    await server.app.tracing!.flush();
    const exported = receiver.bodies.join('\n');
    expect(exported.length).toBeGreaterThan(0);
    const basicHeader = VIEWER.slice('Basic '.length);
    for (const secret of [...Object.values(SECRETS), basicHeader, Buffer.from(`svc:${SECRETS.basicAuthPassword}`).toString('base64')]) {
      expect(exported).not.toContain(secret);
    }
    // Nor any path with a value in it, or a header.
    expect(exported).not.toContain('api/v1/query');
    expect(exported).not.toContain('X-Scope-OrgID');
    expect(receiver.requests.every((r) => r.method === 'POST' && r.path === '/v1/traces' && r.contentType.startsWith('application/json'))).toBe(true);
  });
});

describe('Jaeger propagation, and operational endpoints left out', () => {
  it("continues a client's uber-trace-id and sends the data source its own, with no traceparent; /api/health has no span", async () => {
    const jaeger = await startTestServer({
      connection: server.connection,
      overrides: {
        'tracing.opentelemetry.jaeger': { address: `http://${receiver.address}`, propagation: 'jaeger' },
        'tracing.opentelemetry': { filter_operational_endpoints: 'true' },
      },
    });
    try {
      const ds = await createDs(jaeger, 'traced-jaeger', upstream.url);
      const traceId = '7bf92f3577b34da6a3ce929d0e0e4736';
      const { calls } = await reaching(() => call(jaeger, 'GET', `/api/datasources/proxy/uid/${ds.uid}/x`, {
        auth: VIEWER, headers: { 'uber-trace-id': `${traceId}:00f067aa0ba902b7:0:1` },
      }));
      expect(calls[0]!.headers.traceparent).toBeUndefined();
      const [sentTrace, sentSpan, , flags] = String(calls[0]!.headers['uber-trace-id']).split(':');
      expect([sentTrace, flags]).toEqual([traceId, '1']);
      const { root, spans } = await traceOf(jaeger, (s) => s.traceId === traceId);
      expect(root.parentSpanId).toBe('00f067aa0ba902b7');
      expect(spans.find((s) => s.spanId === sentSpan)?.attributes.datasource_uid).toBe(ds.uid);

      expect((await call(jaeger, 'GET', '/api/health', { auth: null })).status).toBe(200);
      expect((await call(jaeger, 'GET', '/api/datasources')).status).toBe(200);
      await jaeger.app.tracing!.flush();
      await receiver.waitFor((s) => s.name === 'GET /api/datasources' && s.resource['service.name'] === 'dashgate');
      expect(receiver.spans.filter((s) => s.attributes['http.route'] === '/api/health' && s.resource['service.name'] === 'dashgate')).toEqual([]);
    } finally {
      await jaeger.close();
    }
  });
});

describe('a receiver that is down', () => {
  it('costs a warning in the log now and then, never a request', async () => {
    const gone = await startOtlpReceiver();
    await gone.close();
    const orphan = await startTestServer({ connection: server.connection, overrides: { 'tracing.opentelemetry.otlp': { address: gone.address } } });
    let closed = false;
    try {
      // Two failed exports (each retried by the exporter for some seconds), one line.
      for (let i = 0; i < 2; i++) {
        expect((await call(orphan, 'GET', '/api/datasources')).status).toBe(200);
        await orphan.app.tracing!.flush();
      }
      const warnings = orphan.logs.filter((l) => l.msg === 'span export failed');
      expect(warnings).toHaveLength(1);
      expect(orphan.logs.filter((l) => l.component === 'tracing')).toEqual(warnings);
      expect(warnings[0]).toMatchObject({ level: 40, component: 'tracing' });
      const started = performance.now();
      closed = true;
      await orphan.close();
      expect(performance.now() - started).toBeLessThan(8000);
    } finally {
      if (!closed) await orphan.close();
    }
  });
});

describe('tracing off (the default)', () => {
  it('sends nothing and adds no trace header to any upstream call', async () => {
    const quiet = await startOtlpReceiver();
    const off = await startTestServer({ connection: server.connection });
    try {
      expect(off.app.tracing).toBeNull();
      const ds = await createDs(off, 'untraced', upstream.url);
      const { calls } = await reaching(async () => {
        await call(off, 'GET', `/api/datasources/proxy/uid/${ds.uid}/api/v1/query?query=up`, { auth: VIEWER });
        await call(off, 'POST', '/api/ds/query', { auth: VIEWER, body: { from: 'now-1h', to: 'now', queries: [{ refId: 'A', datasource: { uid: ds.uid }, expr: 'up' }] } });
        await call(off, 'GET', `/api/datasources/uid/${ds.uid}/resources/api/v1/labels`, { auth: VIEWER });
        await call(off, 'GET', `/api/datasources/uid/${ds.uid}/health`);
      });
      expect(calls.length).toBeGreaterThanOrEqual(4);
      for (const reached of calls) {
        expect(reached.headers.traceparent).toBeUndefined();
        expect(reached.headers.tracestate).toBeUndefined();
        expect(reached.headers.baggage).toBeUndefined();
      }
      await call(off, 'GET', '/api/datasources');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(quiet.requests).toEqual([]);
      expect(off.logs.some((l) => 'trace_id' in l && l.trace_id !== undefined)).toBe(false);
    } finally {
      await off.close();
      await quiet.close();
    }
  });
});
