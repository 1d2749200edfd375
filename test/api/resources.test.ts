import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, startTestServer, type TestServer } from '../support/server.ts';
import { startPrometheus, type PrometheusUnderTest } from '../support/prometheus.ts';
import { startUpstream, type Recorded, type Upstream } from '../support/upstream.ts';

// /api/datasources/[uid/]:ref/resources/* attacked as a Viewer would attack it: the data source's
// own headers and credentials, the methods and paths its type allows, traversal in every encoding,
// hop-by-hop and client identity headers. Resources obey the data source proxy's rules, so each
// answer is checked against what the proxy answers, and against what reached the upstream.

let server: TestServer;
let echo: Upstream;
let prom: PrometheusUnderTest;
const VIEWER = basic('res-viewer', 'viewer-pass-1');
/** Each kind's data source on the echoing upstream, all set up alike: tenant-a and the service's credentials. */
const ds: Record<'prometheus' | 'loki' | 'graphite' | 'testdata', { id: number; uid: string }> = {} as never;
let realProm: { id: number; uid: string };

const CONFIGURED = {
  basicAuth: true, basicAuthUser: 'svc', secureJsonData: { basicAuthPassword: 'svc-pw', httpHeaderValue1: 'tenant-a' },
  jsonData: { httpHeaderName1: 'X-Scope-OrgID', keepCookies: ['kept'] },
};
const SERVICE_AUTH = `Basic ${Buffer.from('svc:svc-pw').toString('base64')}`;

async function createDs(body: Record<string, unknown>): Promise<{ id: number; uid: string }> {
  const res = await call(server, 'POST', '/api/datasources', { body: { access: 'proxy', ...body } });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

beforeAll(async () => {
  [echo, prom, server] = await Promise.all([startUpstream(), startPrometheus({ adminApi: true }), startTestServer()]);
  for (const type of ['prometheus', 'loki', 'graphite', 'testdata'] as const) ds[type] = await createDs({ name: `res-${type}`, type, url: echo.url, ...CONFIGURED });
  realProm = await createDs({ name: 'res-real-prometheus', type: 'prometheus', url: prom.url });
  expect((await call(server, 'POST', '/api/admin/users', { body: { login: 'res-viewer', password: 'viewer-pass-1' } })).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([echo?.close(), prom?.close()]);
});

/** A request sent byte for byte (fetch and URL would resolve dots and refuse some headers). */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: Number(new URL(server.url).port), method, path, headers: { authorization: VIEWER, ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const resource = (ref: { uid: string }, path: string) => `/api/datasources/uid/${ref.uid}/resources/${path}`;
const resourceById = (ref: { id: number }, path: string) => `/api/datasources/${ref.id}/resources/${path}`;
const proxied = (ref: { uid: string }, path: string) => `/api/datasources/proxy/uid/${ref.uid}/${path}`;

/** What reached the echoing upstream while `run` ran. */
async function reaching(run: () => Promise<unknown>): Promise<Recorded[]> {
  const before = echo.requests.length;
  await run();
  return echo.requests.slice(before);
}

describe('headers', () => {
  /** A Viewer's worst: another tenant, someone else's credentials, hop-by-hop tricks, a forged identity. */
  const HOSTILE = {
    'X-Scope-OrgID': 'tenant-b',
    'X-DS-Authorization': 'Basic c3ZjOnN0b2xlbg==',
    'Proxy-Authorization': 'Basic cHJveHk6c2VjcmV0',
    Connection: 'keep-alive, X-Scope-OrgID, X-Hidden',
    'X-Hidden': 'hop',
    'Keep-Alive': 'timeout=5',
    TE: 'trailers',
    Upgrade: 'websocket',
    'X-Forwarded-For': '203.0.113.7',
    'X-Forwarded-Host': 'evil.example',
    'User-Agent': 'forged-agent/1.0',
    'X-Grafana-User': 'admin',
    Cookie: 'grafana_session=stolen; kept=yes; other=no',
    Origin: 'https://evil.example',
    Accept: 'application/json',
  };
  /** What the proxy's rules say the upstream must see, whichever way the request came. */
  const expectPolicy = (seen: Recorded) => {
    expect(seen.headers['x-scope-orgid']).toBe('tenant-a');
    expect(seen.headers.authorization).toBe(SERVICE_AUTH);
    for (const name of ['proxy-authorization', 'x-hidden', 'keep-alive', 'te', 'upgrade', 'x-forwarded-host', 'x-grafana-user', 'x-ds-authorization', 'origin']) {
      expect([name, seen.headers[name]]).toEqual([name, undefined]);
    }
    expect(seen.headers['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1');
    expect(seen.headers['user-agent']).toMatch(/^dashgate\//);
    expect(seen.headers.cookie).toBe('kept=yes');
    expect(seen.headers.via).toBe('1.1 dashgate');
  };

  it('Prometheus: the data source\'s tenant and credentials always win, as through the proxy', async () => {
    const [viaResource] = await reaching(() => raw('GET', resource(ds.prometheus, 'api/v1/labels?start=1'), HOSTILE));
    const [viaProxy] = await reaching(() => raw('GET', proxied(ds.prometheus, 'api/v1/labels?start=1'), HOSTILE));
    expectPolicy(viaResource!);
    expectPolicy(viaProxy!);
    expect(viaResource!.url).toBe('/api/v1/labels?start=1');
    // The same headers reach the data source either way, but for the ones the buffered call sets itself.
    const comparable = (seen: Recorded) => Object.fromEntries(Object.entries(seen.headers).filter(([name]) => !['connection', 'content-length', 'accept-encoding'].includes(name)));
    expect(comparable(viaResource!)).toEqual(comparable(viaProxy!));
    // By id too, and for a POST with a body.
    const [posted] = await reaching(() => raw('POST', resourceById(ds.prometheus, 'api/v1/labels'), { ...HOSTILE, 'Content-Type': 'application/x-www-form-urlencoded' }, 'match[]=up'));
    expectPolicy(posted!);
    expect([posted!.method, posted!.bodyBytes, posted!.headers['content-type']]).toEqual(['POST', 10, 'application/x-www-form-urlencoded']);
  });

  it('Loki: its calls carry the data source\'s tenant and credentials, never the client\'s', async () => {
    const [seen] = await reaching(() => raw('GET', resource(ds.loki, 'labels?start=1'), HOSTILE));
    expect(seen!.url).toBe('/loki/api/v1/labels?start=1');
    expect([seen!.headers['x-scope-orgid'], seen!.headers.authorization, seen!.headers['proxy-authorization'], seen!.headers.cookie]).toEqual(['tenant-a', SERVICE_AUTH, undefined, undefined]);
  });

  it('answers with the proxy\'s cleaned headers: no cookie or origin-wide policy of the data source\'s', async () => {
    const hostileUpstream = await startUpstream((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json', 'set-cookie': 'grafana_session=planted; Path=/', 'strict-transport-security': 'max-age=31536000',
        'clear-site-data': '"cookies"', 'access-control-allow-origin': '*', 'x-prometheus-api-version': 'v1',
      });
      res.end('{"status":"success","data":[]}');
    });
    try {
      const hostileDs = await createDs({ name: 'res-hostile-answers', type: 'prometheus', url: hostileUpstream.url });
      const res = await raw('GET', resource(hostileDs, 'api/v1/labels'));
      expect(res.status).toBe(200);
      for (const name of ['set-cookie', 'strict-transport-security', 'clear-site-data', 'access-control-allow-origin']) expect([name, res.headers[name]]).toEqual([name, undefined]);
      expect(res.headers['x-prometheus-api-version']).toBe('v1');
      expect(res.body).toBe('{"status":"success","data":[]}');
    } finally {
      await hostileUpstream.close();
    }
  });
});

describe('methods and paths', () => {
  const PROM_POST = { message: 'non allow-listed POSTs not allowed on proxied Prometheus datasource' };

  it('a Viewer\'s writes to Prometheus\'s admin API are refused as the proxy refuses them, and never reach it', async () => {
    const cases: Array<[string, string, number, unknown]> = [
      ['POST', 'api/v1/admin/tsdb/snapshot', 403, PROM_POST],
      ['POST', 'api/v1/admin/tsdb/delete_series?match[]=up', 403, PROM_POST],
      ['PUT', 'api/v1/admin/tsdb/delete_series', 403, { message: 'non allow-listed PUTs not allowed on proxied Prometheus datasource' }],
      ['DELETE', 'api/v1/admin/tsdb/delete_series', 403, { message: 'non allow-listed DELETEs not allowed on proxied Prometheus datasource' }],
      ['POST', 'rules', 403, { message: 'plugin proxy route access denied' }],
      ['DELETE', 'rules/x', 403, { message: 'plugin proxy route access denied' }],
    ];
    const seen = await reaching(async () => {
      for (const [method, path, status, body] of cases) {
        const viaResource = await raw(method, resource(ds.prometheus, path), {}, '');
        const viaProxy = await raw(method, proxied(ds.prometheus, path), {}, '');
        expect([method, path, viaResource.status, JSON.parse(viaResource.body)]).toEqual([method, path, status, body]);
        expect([method, path, viaProxy.status, JSON.parse(viaProxy.body)]).toEqual([method, path, status, body]);
      }
    });
    expect(seen).toEqual([]);
    // What the original's Prometheus front end sends still passes.
    const allowed = await reaching(async () => {
      expect((await raw('POST', resource(ds.prometheus, 'api/v1/labels'), { 'content-type': 'application/x-www-form-urlencoded' }, 'start=1')).status).toBe(200);
      expect((await raw('POST', resource(ds.prometheus, 'api/v1/query'), { 'content-type': 'application/x-www-form-urlencoded' }, 'query=up')).status).toBe(200);
      expect((await raw('GET', resource(ds.prometheus, 'api/v1/label/job/values'))).status).toBe(200);
    });
    expect(allowed.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /api/v1/labels', 'POST /api/v1/query', 'GET /api/v1/label/job/values']);
  });

  it('against a real Prometheus with its admin API on: no snapshot, whoever asks', async () => {
    if (prom.replaying) return;
    const before = prom.snapshots().length;
    for (const auth of [VIEWER, ADMIN]) {
      const res = await raw('POST', resource(realProm, 'api/v1/admin/tsdb/snapshot'), { authorization: auth }, '');
      expect([res.status, JSON.parse(res.body)]).toEqual([403, PROM_POST]);
    }
    expect(prom.seen.filter((line) => line.includes('admin'))).toEqual([]);
    expect(prom.snapshots().length).toBe(before);
    // The attack is real: asked directly, this Prometheus does make one.
    const direct = await fetch(`${prom.url}/api/v1/admin/tsdb/snapshot`, { method: 'POST' });
    expect(direct.status).toBe(200);
    expect(prom.snapshots().length).toBe(before + 1);
  });

  it('Loki and Graphite keep their own handlers\' rules', async () => {
    const seen = await reaching(async () => {
      expect(await raw('POST', resource(ds.loki, 'labels'), {}, '{}').then((r) => [r.status, JSON.parse(r.body)])).toEqual([405, { message: 'invalid HTTP method: POST' }]);
      expect(await raw('DELETE', resource(ds.loki, 'labels')).then((r) => r.status)).toBe(405);
      expect(await raw('GET', resource(ds.loki, 'delete?query=x')).then((r) => [r.status, JSON.parse(r.body)])).toEqual([400, { message: 'invalid URL: delete?query=x' }]);
      expect(await raw('GET', resource(ds.graphite, 'admin')).then((r) => r.status)).toBe(404);
    });
    expect(seen).toEqual([]);
  });
});

describe('paths that would leave the data source', () => {
  const corpus = [
    '..', '../admin', 'api/v1/../../admin', './x', 'a/./b', '%2e%2e', '%2e%2e/admin', '%2E%2E%2Fadmin', '..%2fadmin', '..%2Fadmin',
    'api%2f..%2f..%2fadmin', '.%2e/admin', '%2e./admin', '%252e%252e/admin', '%25252e%25252e/admin', '%252e%252e%252fadmin',
    '..;/admin', 'api/..;/..;/admin', '..\\admin', 'api\\..\\..\\admin', '%5c..%5cadmin', '..%5cadmin', '%255c..%255cadmin',
    '..%20/admin', '%c0%ae%c0%ae/admin', '%ef%bc%8e%ef%bc%8e/admin', '..%00/admin', 'a%0d%0aX-Injected:%201', '%2F%2Fevil', 'a//b',
  ];

  it('are refused with 400 as the proxy refuses them, for every kind, and nothing reaches the upstream', async () => {
    const seen = await reaching(async () => {
      for (const path of corpus) {
        const viaProxy = await raw('GET', proxied(ds.prometheus, path));
        expect([path, viaProxy.status, viaProxy.body]).toEqual([path, 400, '{"message":"invalid proxy path"}']);
        for (const kind of ['prometheus', 'loki', 'graphite', 'testdata'] as const) {
          for (const url of [resource(ds[kind], path), resourceById(ds[kind], path)]) {
            const res = await raw('GET', url);
            expect([kind, path, res.status, res.body]).toEqual([kind, path, 400, viaProxy.body]);
          }
        }
      }
    });
    expect(seen).toEqual([]);
  });

  it('ordinary paths with dots and encoded slashes still pass, inside the data source', async () => {
    const seen = await reaching(async () => {
      for (const path of ['api/v1/label/a.b/values', 'api/v1/label/...', 'api/v1/x%2Fy', 'api/v1/status/buildinfo']) {
        expect([path, (await raw('GET', resource(ds.prometheus, path))).status]).toEqual([path, 200]);
      }
    });
    expect(seen.map((r) => r.url)).toEqual(['/api/v1/label/a.b/values', '/api/v1/label/...', '/api/v1/x%2Fy', '/api/v1/status/buildinfo']);
  });
});
