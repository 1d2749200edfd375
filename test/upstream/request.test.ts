import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LookupFunction } from '../../src/upstream/address.ts';
import { UpstreamError, type DataSourceHandle, type UpstreamCaller } from '../../src/upstream/index.ts';
import { call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// The upstream layer's buffered call, as query and resource code uses it: what callers say, what
// the layer adds, and how each failure comes back (a typed UpstreamError worded as Go's client).

let server: TestServer;
let guarded: TestServer;
let echo: Upstream;

/** Every name resolves to loopback, which `guarded` may not call. */
const toLoopback: LookupFunction = (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

beforeAll(async () => {
  server = await startTestServer({ overrides: { dataproxy: { send_user_header: 'true', response_limit: '4096' } } });
  guarded = await startTestServer({ overrides: { security: { data_source_proxy_deny_private: 'true' } }, app: { proxyResolver: toLoopback } });
  echo = await startUpstream();
});
afterAll(async () => {
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

describe('upstream.request', () => {
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
    expect((await failure(t.call({ method: 'GET', path: '' }))).kind).toBe('denied');
    // A literal address the policy denies is refused before any connection, with the proxy's words.
    const literal = await target(guarded, echo.url);
    expect(literal.verdict).toBe('Data proxy target address is not allowed');
    expect(await failure(literal.call({ method: 'GET', path: '' }))).toMatchObject({ kind: 'denied', message: 'Data proxy target address is not allowed' });
  });
});
