import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LookupFunction } from '../../src/upstream/address.ts';
import { UpstreamError, type DataSourceHandle, type UpstreamCaller } from '../../src/upstream/index.ts';
import { call, startTestServer, type TestServer } from '../support/server.ts';
import { storeDataSource } from '../support/stored-data-source.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// A data source opened through the upstream layer, and the calls made through its handle (handle.ts,
// request.ts, queue.ts), as query, resource and health code make them: what callers say, what
// the layer adds, and how each failure comes back (a typed UpstreamError worded as Go's client).

let server: TestServer;
let guarded: TestServer;
/** [dataproxy] timeout 2 s, 3 calls in flight at once, 2 per request. */
let tight: TestServer;
let echo: Upstream;
/** Accepts connections and never answers. */
let hanging: Upstream;

/** Every name resolves to loopback, which `guarded` may not call. */
const toLoopback: LookupFunction = (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

beforeAll(async () => {
  server = await startTestServer({ overrides: { dataproxy: { send_user_header: 'true', response_limit: '4096' } } });
  guarded = await startTestServer({ overrides: { security: { data_source_proxy_deny_private: 'true' } }, app: { proxyResolver: toLoopback } });
  tight = await startTestServer({ connection: server.connection, overrides: { dataproxy: { timeout: '2', concurrent_calls: '3', concurrent_calls_per_request: '2' } } });
  echo = await startUpstream();
  hanging = await startUpstream(() => {});
});
afterAll(async () => {
  await hanging?.close();
  await tight?.close();
  await echo?.close();
  await guarded?.close();
  await server?.close();
});

/** The server's admin as the caller of data sources, for one request. */
function adminCaller(on: TestServer, extra: Partial<UpstreamCaller> = {}): UpstreamCaller {
  return { principal: { orgId: 1, orgRole: 'Admin', userId: 1, login: 'admin' }, em: () => on.orm.em.fork(), changeMark: on.app.services.changes.mark(), ...extra };
}

/** A new data source, opened as the admin. */
async function target(on: TestServer, url: string, extra: Record<string, unknown> = {}, caller: Partial<UpstreamCaller> = {}): Promise<DataSourceHandle> {
  const res = await call(on, 'POST', '/api/datasources', { body: { name: `req-${Math.random()}`, type: 'prometheus', access: 'proxy', url, ...extra } });
  expect(res.status).toBe(200);
  return on.app.upstream.open(adminCaller(on, caller), { id: res.body.id });
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('the call did not fail');
}

describe('a data source\'s calls', () => {
  it('joins the path below the data source URL and adds its credentials, the user agent and the user header', async () => {
    const t = await target(server, `${echo.url}/base/`, { basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'p' } });
    const res = await t.call({ method: 'POST', path: 'api/v1/query', query: 'a=1', headers: { 'Content-Type': 'text/plain' }, body: 'hello', forwarded: { 'x-from-client': 'yes' } });
    expect([res.status, res.statusText]).toEqual([200, 'OK']);
    const seen = JSON.parse(res.body.toString());
    expect(seen).toMatchObject({ method: 'POST', url: '/base/api/v1/query?a=1', bodyBytes: 5 });
    expect(seen.headers).toMatchObject({
      authorization: `Basic ${Buffer.from('u:p').toString('base64')}`,
      'user-agent': server.app.upstream.userAgent,
      'x-grafana-user': 'admin',
      'x-from-client': 'yes',
      'content-type': 'text/plain',
      'content-length': '5',
      via: '1.1 dashgate',
    });
  });

  it('carries our Via entry, so a data source leading back to this proxy is refused as a loop', async () => {
    const first = await target(server, echo.url);
    const loop = await target(server, `${server.url}/api/datasources/proxy/${first.target.id}/`, { basicAuth: true, basicAuthUser: 'admin', secureJsonData: { basicAuthPassword: 'admin' } });
    const res = await loop.call({ method: 'GET', path: 'x' });
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([508, { message: 'data source proxy loop detected' }]);
    expect(echo.requests.filter((r) => r.url === '/x')).toEqual([]);
  });

  it('fails with a kind and Go words: refused, timeout, too large, aborted, invalid URL', async () => {
    const refused = await target(server, 'http://127.0.0.1:1');
    const e1 = await failure(refused.call({ method: 'GET', path: 'x' }));
    expect([e1.kind, e1.message]).toEqual(['unreachable', 'Get "http://127.0.0.1:1/x": dial tcp 127.0.0.1:1: connect: connection refused']);

    const slow = await startUpstream((_req, res) => setTimeout(() => res.end('late'), 2000));
    const big = await startUpstream((_req, res) => res.end('x'.repeat(10_000)));
    try {
      const e2 = await failure((await target(server, slow.url)).call({ method: 'GET', path: 'q', timeoutMs: 200 }));
      expect([e2.kind, e2.message]).toEqual(['timeout', `Get "${slow.url}/q": timeout after 0.2s awaiting the data source's answer (Client.Timeout exceeded)`]);

      // [dataproxy] response_limit by default, or the caller's limit.
      const bigTarget = await target(server, big.url);
      expect((await failure(bigTarget.call({ method: 'GET', path: '' }))).kind).toBe('too-large');
      expect((await bigTarget.call({ method: 'GET', path: '', bodyLimit: 20_000 })).body.length).toBe(10_000);

      const controller = new AbortController();
      const pending = (await target(server, slow.url, {}, { signal: controller.signal })).call({ method: 'GET', path: 'q' });
      setTimeout(() => controller.abort(), 100);
      const e3 = await failure(pending);
      expect([e3.kind, e3.message]).toEqual(['aborted', `Get "${slow.url}/q": context canceled`]);
      // The upstream sees its connection go.
      const deadline = Date.now() + 2000;
      while (slow.connections.open > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(slow.connections.open).toBe(0);
    } finally {
      await slow.close();
      await big.close();
    }

    const invalid = await target(server, '');
    expect(await failure(invalid.call({ method: 'GET', path: '' }))).toMatchObject({ kind: 'invalid-url', message: 'Invalid data source URL: ""' });
  });

  it('waits for 100 Continue when asked, and sends the body anyway after [dataproxy] expect_continue_timeout_seconds', async () => {
    const t = await target(server, echo.url);
    const started = Date.now();
    const res = await t.call({ method: 'POST', path: 'c', headers: { expect: '100-continue' }, body: 'payload' });
    expect(JSON.parse(res.body.toString()).bodyBytes).toBe(7);
    // node's server answers 100 Continue at once, so the body does not wait for the timeout.
    expect(Date.now() - started).toBeLessThan(900);

    const silent = await startUpstream();
    // A server that never says 100 Continue: the body goes after the wait, as Go's client sends it.
    silent.server.removeAllListeners('checkContinue');
    silent.server.on('checkContinue', (req, res) => silent.server.emit('request', req, res));
    try {
      const begun = Date.now();
      const late = await (await target(server, silent.url)).call({ method: 'POST', path: 'c', headers: { expect: '100-continue' }, body: 'payload' });
      expect(JSON.parse(late.body.toString()).bodyBytes).toBe(7);
      expect(Date.now() - begun).toBeGreaterThanOrEqual(900);
    } finally {
      await silent.close();
    }
  });

  it('refuses an address the egress policy denies, as it resolves', async () => {
    const t = await target(guarded, `http://upstream.test:${echo.port}`);
    expect(t.verdict).toBeNull();
    // In the proxy's words, never naming the address the name resolved to.
    expect(await failure(t.call({ method: 'GET', path: '' }))).toMatchObject({ kind: 'denied', message: 'Data proxy target address is not allowed' });
    // A literal address the policy denies is refused before any connection, with the proxy's words.
    const literal = await target(guarded, echo.url);
    expect(literal.verdict).toBe('Data proxy target address is not allowed');
    expect(await failure(literal.call({ method: 'GET', path: '' }))).toMatchObject({ kind: 'denied', message: 'Data proxy target address is not allowed' });
  });
});

describe('calls in flight', () => {
  it('are bounded per request and per server; the rest wait in order, the wait counting against the timeout', async () => {
    const first = adminCaller(tight);
    const second = adminCaller(tight);
    const dsOf = async (caller: UpstreamCaller) => {
      const res = await call(tight, 'POST', '/api/datasources', { body: { name: `hang-${Math.random()}`, type: 'prometheus', access: 'proxy', url: hanging.url } });
      return tight.app.upstream.open(caller, { id: res.body.id });
    };
    // Two data sources opened by one request share its queue.
    const [a1, a2, b] = [await dsOf(first), await dsOf(first), await dsOf(second)];
    const started = Date.now();
    const calls = [
      ...Array.from({ length: 20 }, (_, i) => (i % 2 ? a1 : a2).call({ method: 'GET', path: `a${i}` })),
      ...Array.from({ length: 20 }, (_, i) => b.call({ method: 'GET', path: `b${i}` })),
    ].map((pending) => pending.then(() => null, (error: UpstreamError) => error));
    // Sampled while they wait (a socket we close leaves the upstream's count a moment later).
    let mostOpen = 0;
    const sampler = setInterval(() => (mostOpen = Math.max(mostOpen, hanging.connections.open)), 50);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hanging.connections.open).toBe(3);
    // The first request holds its 2; the second holds 1 of its 2, the other waits for the server's
    // third; the rest wait in their request's queue.
    expect(tight.app.upstream.calls).toEqual({ busy: 3, waiting: 1 });
    const failures = await Promise.all(calls);
    clearInterval(sampler);
    // Every call ends at its deadline, waiting or not: none outlives the timeout by a queue's length.
    expect(Date.now() - started).toBeLessThan(4000);
    expect(mostOpen).toBeLessThanOrEqual(3);
    for (const [i, error] of failures.entries()) {
      expect(error).toBeInstanceOf(UpstreamError);
      const path = i < 20 ? `a${i}` : `b${i - 20}`;
      expect([error!.kind, error!.status, error!.message]).toEqual(['timeout', 504, `Get "${hanging.url}/${path}": timeout after 2s awaiting the data source's answer (Client.Timeout exceeded)`]);
    }
    expect(tight.app.upstream.calls).toEqual({ busy: 0, waiting: 0 });
  }, 20_000);

  it('a waiting call ends when its client leaves, holding no slot', async () => {
    const controller = new AbortController();
    const res = await call(tight, 'POST', '/api/datasources', { body: { name: `hang-${Math.random()}`, type: 'prometheus', access: 'proxy', url: hanging.url } });
    const ds = await tight.app.upstream.open(adminCaller(tight, { signal: controller.signal }), { id: res.body.id });
    const calls = Array.from({ length: 5 }, (_, i) => ds.call({ method: 'GET', path: `c${i}` }).then(() => null, (error: UpstreamError) => error));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // 2 in flight, 3 waiting in the request's own queue.
    expect([tight.app.upstream.calls, hanging.connections.open]).toEqual([{ busy: 2, waiting: 0 }, 2]);
    controller.abort();
    for (const error of await Promise.all(calls)) expect([error!.kind, error!.status]).toEqual(['aborted', 499]);
    expect(tight.app.upstream.calls).toEqual({ busy: 0, waiting: 0 });
  });
});

describe('jsonData.timeout', () => {
  it('is used when it is a positive finite number, and never beyond [dataproxy] timeout', async () => {
    const cases: Array<[unknown, number]> = [[1, 1000], ['1', 1000], [0.5, 500], [1.5, 1500], [2, 2000], [60, 2000], [3000000, 2000], [1e308, 2000],
      ['1e308', 2000], [0, 2000], [-5, 2000], ['abc', 2000], ['', 2000], [null, 2000], [true, 2000], [[1], 2000], [{ s: 1 }, 2000]];
    for (const [timeout, ms] of cases) {
      const ds = await target(tight, hanging.url, { jsonData: { timeout } });
      expect([timeout, ds.timeoutMs]).toEqual([timeout, ms]);
    }
    // 1e308 seconds used to make every call time out at once ("timeout after Infinitys").
    const huge = await target(tight, hanging.url, { jsonData: { timeout: 1e308 } });
    const started = Date.now();
    const error = await failure(huge.call({ method: 'GET', path: 'h' }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(error.message).toBe(`Get "${hanging.url}/h": timeout after 2s awaiting the data source's answer (Client.Timeout exceeded)`);
  });
});

describe('a data source no call can succeed with', () => {
  it('fails every call, before any connection, with why: TLS material by field, unreadable secrets', async () => {
    const before = echo.connections.total;
    const https = `https://127.0.0.1:${echo.port}`;
    const path = await storeDataSource(server, { type: 'prometheus', url: https, jsonData: { tlsAuthWithCACert: true } }, { tlsCACert: '/etc/ssl/certs/ca.pem' });
    const pathError = await failure((await server.app.upstream.open(adminCaller(server), path)).call({ method: 'GET', path: 'x' }));
    expect([pathError.kind, pathError.status, pathError.message]).toEqual(['tls-config', 502,
      'the data source\'s TLS settings are unusable: secureJsonData.tlsCACert holds no PEM certificate: it looks like a file path, and the certificate\'s PEM text is expected']);
    const garbage = await storeDataSource(server, { type: 'loki', url: https, jsonData: { tlsAuth: true } }, { tlsClientCert: 'garbage', tlsClientKey: 'garbage' });
    expect((await failure((await server.app.upstream.open(adminCaller(server), garbage)).call({ method: 'GET', path: 'x' }))).message)
      .toBe('the data source\'s TLS settings are unusable: secureJsonData.tlsClientCert holds no PEM certificate');
    // Over http the TLS settings are not read, as the original reads them.
    const plain = await storeDataSource(server, { type: 'prometheus', url: echo.url, jsonData: { tlsAuthWithCACert: true } }, { tlsCACert: 'garbage' });
    expect((await (await server.app.upstream.open(adminCaller(server), plain)).call({ method: 'GET', path: 'x' })).status).toBe(200);
    const connected = echo.connections.total;

    const unreadable = await storeDataSource(server, { type: 'prometheus', url: echo.url, jsonData: { httpHeaderName1: 'X-Key' } }, { httpHeaderValue1: 'k' });
    await server.sql('update data_source set secure_json_data = $1 where id = $2', [JSON.stringify({ httpHeaderValue1: 'not-a-sealed-value' }), unreadable.id]);
    const secrets = await failure((await server.app.upstream.open(adminCaller(server), unreadable)).call({ method: 'GET', path: 'x' }));
    expect([secrets.kind, secrets.status, secrets.message]).toEqual(['secrets', 500, 'Unable to load datasource meta data']);
    expect(echo.connections.total).toBe(connected);
    expect(connected - before).toBeLessThanOrEqual(1);
  });
});

