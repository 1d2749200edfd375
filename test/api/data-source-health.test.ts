import { lookup, type LookupAddress } from 'node:dns';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LookupFunction } from '../../src/upstream/address.ts';
import { basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Recorded, type Upstream } from '../support/upstream.ts';

// GET /api/datasources/[uid/]:ref/health against real upstream servers: each kind's own check, the
// data source's credentials and headers on the wire, and every way a check can fail.

/** `*.loop.test` resolves to 127.0.0.1: a name the egress policy only catches once resolved. */
const fakeDns: LookupFunction = (hostname, options, callback) => {
  if (!hostname.endsWith('.loop.test')) return lookup(hostname, options, callback as never);
  const answer: LookupAddress = { address: '127.0.0.1', family: 4 };
  if (options.all) callback(null, [answer]);
  else callback(null, answer.address, answer.family);
};

/** What the store answers, by path; a missing path is 404. */
type Script = Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void>;

const json = (status: number, value: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};
const text = (status: number, value: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(value);
};

/** Healthy answers of each kind's store to its check. */
const HEALTHY: Script = {
  '/prom/api/v1/query': json(200, { status: 'success', data: { resultType: 'scalar', result: [4, '2'] } }),
  '/loki/api/v1/query': json(200, { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [4, '2'] }] } }),
  '/render': json(200, [{ target: 'constantLine(100)', datapoints: [[100, 1], [100, 2]] }]),
  '/query': json(200, { results: [{ statement_id: 0, series: [{ name: 'measurements', columns: ['name'], values: [['cpu'], ['mem'], ['disk']] }] }] }),
  '/_cluster/health': json(200, { cluster_name: 'c', status: 'yellow' }),
  '/api/echo': text(200, 'echo'),
  '/api/services': json(200, { data: ['frontend'], total: 1, limit: 0, offset: 0, errors: null }),
  '/api/v2/services': json(200, ['frontend']),
  '/api/v2/query': text(200, '#datatype,string,long,string\n,result,table,name\n,_result,0,telegraf\n,_result,0,_monitoring\n'),
};

let server: TestServer;
let guarded: TestServer;
let listed: TestServer;
let store: Upstream;
let script: Script = HEALTHY;
const bodies = new Map<Recorded, string>();

beforeAll(async () => {
  store = await startUpstream((req, res, record) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      bodies.set(record, body);
      const handler = script[(req.url ?? '').split('?')[0]!];
      if (handler) handler(req, res, body);
      else text(404, 'no such path')(req, res);
    });
  });
  server = await startTestServer({ app: { proxyResolver: fakeDns } });
  [guarded, listed] = await Promise.all([
    startTestServer({ connection: server.connection, app: { proxyResolver: fakeDns }, overrides: { security: { data_source_proxy_deny_private: 'true' } } }),
    startTestServer({ connection: server.connection, overrides: { security: { data_source_proxy_whitelist: 'allowed.example:80' } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([guarded.close(), listed.close()]);
  await server.close();
  await store.close();
});

let created = 0;
async function createDs(body: Record<string, unknown>): Promise<{ id: number; uid: string }> {
  const res = await call(server, 'POST', '/api/datasources', { body: { access: 'proxy', name: `ds-${created++}`, ...body } });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

function health(target: TestServer, uid: string, auth?: string) {
  return call(target, 'GET', `/api/datasources/uid/${uid}/health`, auth ? { auth } : {});
}

/** A port nothing listens on (bound, then closed again). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('a healthy data source of each kind', () => {
  const kinds: Array<[string, string, Record<string, unknown>, string, string]> = [
    ['prometheus', '/prom', {}, 'Successfully queried the Prometheus API.', 'POST /prom/api/v1/query'],
    ['loki', '', {}, 'Successfully queried the Loki API.', 'GET /loki/api/v1/query'],
    ['graphite', '', {}, 'Successfully connected to Graphite', 'POST /render'],
    ['influxdb', '', { database: 'telegraf' }, 'datasource is working. 3 measurements found', 'GET /query'],
    ['elasticsearch', '', {}, 'Elasticsearch data source is healthy.', 'GET /_cluster/health'],
    ['tempo', '', {}, 'Data source is working', 'GET /api/echo'],
    ['jaeger', '', {}, 'Data source is working', 'GET /api/services'],
    ['zipkin', '', {}, 'Data source is working', 'GET /api/v2/services'],
  ];

  it('answers 200 {"message","status":"OK"} with its kind\'s message, by uid and by id, after calling the store as the original does', async () => {
    for (const [type, path, extra, message, call_] of kinds) {
      const ds = await createDs({
        type,
        url: `${store.url}${path}`,
        basicAuth: true,
        basicAuthUser: 'reader',
        secureJsonData: { basicAuthPassword: 's3cret', httpHeaderValue1: 'tenant-7' },
        jsonData: { httpHeaderName1: 'X-Scope-OrgID' },
        ...extra,
      });
      const before = store.requests.length;
      const byUid = await health(server, ds.uid);
      expect([type, byUid.status, byUid.text]).toEqual([type, 200, JSON.stringify({ message, status: 'OK' })]);
      const sent = store.requests.slice(before);
      expect([type, sent.map((r) => `${r.method} ${r.url.split('?')[0]}`)]).toEqual([type, [call_]]);
      // The data source's own credentials and custom headers, as the proxy sends them.
      expect(sent[0]!.headers.authorization).toBe(basic('reader', 's3cret'));
      expect(sent[0]!.headers['x-scope-orgid']).toBe('tenant-7');
      expect(sent[0]!.headers['user-agent']).toMatch(/^dashgate\//);
      const byId = await call(server, 'GET', `/api/datasources/${ds.id}/health`);
      expect([type, byId.status, byId.body]).toEqual([type, 200, { message, status: 'OK' }]);
    }
  });

  it('sends each kind\'s own query', async () => {
    const prom = await createDs({ type: 'prometheus', url: `${store.url}/prom` });
    let before = store.requests.length;
    await health(server, prom.uid);
    expect(bodies.get(store.requests[before]!)).toBe('query=1%2B1&time=4');
    const promGet = await createDs({ type: 'prometheus', url: `${store.url}/prom`, jsonData: { httpMethod: 'GET' } });
    before = store.requests.length;
    expect((await health(server, promGet.uid)).status).toBe(200);
    expect(store.requests[before]!).toMatchObject({ method: 'GET', url: '/prom/api/v1/query?query=1%2B1&time=4' });

    const loki = await createDs({ type: 'loki', url: store.url });
    before = store.requests.length;
    await health(server, loki.uid);
    expect(new URL(store.requests[before]!.url, 'http://x').searchParams.get('query')).toBe('vector(1)+vector(1)');

    const graphite = await createDs({ type: 'graphite', url: store.url });
    before = store.requests.length;
    await health(server, graphite.uid);
    expect(new URLSearchParams(bodies.get(store.requests[before]!)).get('target')).toBe('constantLine(100)');

    const influx = await createDs({ type: 'influxdb', url: store.url, database: 'telegraf' });
    before = store.requests.length;
    await health(server, influx.uid);
    const influxQuery = new URL(store.requests[before]!.url, 'http://x').searchParams;
    expect([influxQuery.get('db'), influxQuery.get('q')]).toEqual(['telegraf', 'SHOW measurements']);

    const elastic = await createDs({ type: 'elasticsearch', url: store.url });
    before = store.requests.length;
    await health(server, elastic.uid);
    expect(store.requests[before]!.url).toBe('/_cluster/health?wait_for_status=yellow');

    // InfluxDB 2 (Flux): buckets() with the data source's token, as the original's Flux check.
    const flux = await createDs({ type: 'influxdb', url: store.url, jsonData: { version: 'Flux', organization: 'acme' }, secureJsonData: { token: 'flux-token' } });
    before = store.requests.length;
    expect((await health(server, flux.uid)).body).toEqual({ message: 'datasource is working. 2 buckets found', status: 'OK' });
    expect(store.requests[before]!).toMatchObject({ method: 'POST', url: '/api/v2/query?org=acme' });
    expect(store.requests[before]!.headers.authorization).toBe('Token flux-token');
    expect(JSON.parse(bodies.get(store.requests[before]!)!)).toMatchObject({ query: 'buckets()' });
  });

  it('answers over GraphQL with the same verdict', async () => {
    const ds = await createDs({ type: 'loki', url: store.url });
    const res = await gql(server, 'query($uid: String!, $id: Int!) { a: currentOrganization { dataSource(uid: $uid) { health { status message details } } } b: currentOrganization { dataSource(databaseId: $id) { health { status } } } }', { uid: ds.uid, id: ds.id });
    expect(res.body).toEqual({ data: { a: { dataSource: { health: { status: 'OK', message: 'Successfully queried the Loki API.', details: null } } }, b: { dataSource: { health: { status: 'OK' } } } } });
  });
});

describe('failed checks answer 400 with the same shape, saying what failed', () => {
  it('connection refused', async () => {
    const port = await closedPort();
    const prom = await createDs({ type: 'prometheus', url: `http://127.0.0.1:${port}` });
    const res = await health(server, prom.uid);
    expect(res.status).toBe(400);
    expect(res.text).toBe(JSON.stringify({
      message: `Post "http://127.0.0.1:${port}/api/v1/query": dial tcp 127.0.0.1:${port}: connect: connection refused - There was an error returned querying the Prometheus API.`,
      status: 'ERROR',
    }));
    const elastic = await createDs({ type: 'elasticsearch', url: `http://127.0.0.1:${port}` });
    expect((await health(server, elastic.uid)).body).toEqual({
      message: `Health check failed: Failed to connect to Elasticsearch: Get "http://127.0.0.1:${port}/_cluster/health?wait_for_status=yellow": dial tcp 127.0.0.1:${port}: connect: connection refused`,
      status: 'ERROR',
    });
  });

  it('timeout (here the data source\'s own jsonData.timeout, which wins over [dataproxy] timeout)', async () => {
    script = { ...HEALTHY, '/loki/api/v1/query': () => {} }; // never answers
    try {
      const ds = await createDs({ type: 'loki', url: store.url, jsonData: { timeout: 1 } });
      const started = Date.now();
      const res = await health(server, ds.uid);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(res.status).toBe(400);
      expect(res.body.status).toBe('ERROR');
      expect(res.body.message).toBe(
        `There was an error returned querying the Loki API.: Get "${store.url}/loki/api/v1/query?query=vector%281%29%2Bvector%281%29&time=4000000000&limit=1": `
        + 'timeout after 1s awaiting the data source\'s answer (Client.Timeout exceeded)',
      );
    } finally {
      script = HEALTHY;
    }
  });

  it('401 from the data source', async () => {
    script = Object.fromEntries(Object.keys(HEALTHY).map((path) => [path, text(401, 'unauthorized')]));
    try {
      const cases: Array<[string, string, Record<string, unknown>]> = [
        ['loki', 'There was an error returned querying the Loki API.: request failed: 401 Unauthorized', {}],
        ['prometheus', 'request failed: 401 Unauthorized - There was an error returned querying the Prometheus API.', {}],
        ['elasticsearch', 'Health check failed: Elasticsearch data source is not healthy. Status: 401 Unauthorized', {}],
        ['zipkin', 'invalid response from zipkin with status code 401', {}],
        ['jaeger', 'request failed: 401 Unauthorized', {}],
        ['tempo', 'request failed: 401 Unauthorized', {}],
        ['influxdb', 'request failed: 401 Unauthorized error performing influxQL query', {}],
        ['graphite', 'Graphite health check failed. See details below', { details: { verboseMessage: 'request failed: 401 Unauthorized' } }],
      ];
      for (const [type, message, extra] of cases) {
        const ds = await createDs({ type, url: type === 'prometheus' ? `${store.url}/prom` : store.url });
        const res = await health(server, ds.uid);
        expect([type, res.status, res.body]).toEqual([type, 400, { ...extra, message, status: 'ERROR' }]);
      }
      // Details come first, as the original's map keys are sorted.
      const graphite = await createDs({ type: 'graphite', url: store.url });
      expect((await health(server, graphite.uid)).text).toMatch(/^\{"details":\{"verboseMessage":/);
    } finally {
      script = HEALTHY;
    }
  });

  it('a bad answer', async () => {
    script = {
      ...HEALTHY,
      '/prom/api/v1/query': text(200, '<html>not prometheus</html>'),
      '/loki/api/v1/query': json(200, { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [4, '3'] }] } }),
      '/_cluster/health': text(200, 'x'.repeat(300)),
      '/api/echo': text(200, 'hello'),
    };
    try {
      const prom = await createDs({ type: 'prometheus', url: `${store.url}/prom` });
      expect((await health(server, prom.uid)).body).toEqual({
        message: 'invalid response: not JSON (200 OK, 27 bytes) - There was an error returned querying the Prometheus API.',
        status: 'ERROR',
      });
      const loki = await createDs({ type: 'loki', url: store.url });
      expect((await health(server, loki.uid)).body).toEqual({ message: 'There was an error returned querying the Loki API.: invalid response', status: 'ERROR' });
      const elastic = await createDs({ type: 'elasticsearch', url: store.url });
      const res = await health(server, elastic.uid);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: `Health check failed: Failed to parse response from Elasticsearch. Response received: ${'x'.repeat(200)}...`, status: 'UNKNOWN' });
      const tempo = await createDs({ type: 'tempo', url: store.url });
      expect((await health(server, tempo.uid)).body).toEqual({ message: 'invalid response: expected "echo", got "hello"', status: 'ERROR' });
    } finally {
      script = HEALTHY;
    }
  });

  it('a kind with no check over HTTP answers UNKNOWN "Health check not implemented", calling nothing', async () => {
    const before = store.requests.length;
    for (const type of ['postgres', 'mysql', 'mssql', 'cloudwatch', 'some-plugin']) {
      const ds = await createDs({ type, url: store.url });
      const res = await health(server, ds.uid);
      expect([type, res.status, res.text]).toEqual([type, 400, '{"message":"Health check not implemented","status":"UNKNOWN"}']);
    }
    expect(store.requests.length).toBe(before);
    // TestData answers without calling anything, as the original's does.
    const testdata = await createDs({ type: 'testdata' });
    expect((await health(server, testdata.uid)).body).toEqual({ message: 'Data source is working', status: 'OK' });
  });
});

describe('refusals', () => {
  it('an address the egress policy denies: 403 as the proxy answers, with no connection, by IP or by resolved name', async () => {
    const before = store.connections.total;
    for (const url of [store.url, `http://store.loop.test:${store.port}`, `http://localhost:${store.port}`]) {
      const ds = await createDs({ type: 'prometheus', url: `${url}/prom` });
      const res = await health(guarded, ds.uid);
      expect([url, res.status, res.body]).toEqual([url, 403, { message: 'Data proxy target address is not allowed' }]);
    }
    expect(store.connections.total).toBe(before);
    // Where the policy is off, the same name is reached.
    const open = await createDs({ type: 'prometheus', url: `http://store.loop.test:${store.port}/prom` });
    expect((await health(server, open.uid)).status).toBe(200);
  });

  it('a host off the whitelist: 403 "Access denied", as the original\'s request validator, whatever the kind', async () => {
    for (const type of ['loki', 'postgres']) {
      const ds = await createDs({ type, url: store.url });
      expect(await health(listed, ds.uid).then((r) => [type, r.status, r.body])).toEqual([type, 403, { message: 'Access denied' }]);
    }
  });

  it('unknown, invalid and foreign references; every org role may check, nobody unauthenticated', async () => {
    expect(await health(server, 'no-such-uid').then((r) => [r.status, r.body])).toEqual([404, { message: 'Data source not found' }]);
    expect(await call(server, 'GET', '/api/datasources/999999/health').then((r) => [r.status, r.body])).toEqual([404, { message: 'Data source not found' }]);
    expect(await health(server, 'bad.uid!').then((r) => [r.status, r.body])).toEqual([400, { message: 'UID is invalid' }]);
    expect(await call(server, 'GET', '/api/datasources/abc/health').then((r) => [r.status, r.body])).toEqual([400, { message: 'id is invalid' }]);
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Health Other Org') returning id`);
    await server.sql(`insert into data_source (org_id, uid, name, type, access, url) values ($1, 'foreign-ds', 'foreign', 'loki', 'proxy', $2)`, [org!.id, store.url]);
    expect(await health(server, 'foreign-ds').then((r) => [r.status, r.body])).toEqual([404, { message: 'Data source not found' }]);

    const ds = await createDs({ type: 'zipkin', url: store.url });
    const viewer = await call(server, 'POST', '/api/admin/users', { body: { login: 'health-viewer', password: 'viewer-pass-1' } });
    expect(viewer.status).toBe(200);
    expect((await health(server, ds.uid, basic('health-viewer', 'viewer-pass-1'))).status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/uid/${ds.uid}/health`, { auth: null })).status).toBe(401);
  });

  it('never shows a secret in its answer', async () => {
    script = { ...HEALTHY, '/api/echo': (req, res) => text(500, `you sent ${req.headers.authorization}`)(req, res) };
    try {
      const ds = await createDs({ type: 'tempo', url: store.url, basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'hunter2-secret' } });
      const res = await health(server, ds.uid);
      expect(res.body).toEqual({ message: 'request failed: 500 Internal Server Error', status: 'ERROR' });
      expect(res.text).not.toContain('hunter2');
      expect(server.logText()).not.toContain('hunter2');
    } finally {
      script = HEALTHY;
    }
  });
});
