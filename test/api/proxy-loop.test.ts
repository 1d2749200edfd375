import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// Data sources that point at a dashgate proxy URL leading back to where the call came from. Each
// hop authenticates to the next with the data source's own Basic credentials, so nothing but the
// Via header can stop the recursion.

const LOOP = { message: 'data source proxy loop detected' };

let a: TestServer;
/** A second instance of A's deployment: same database, same settings. */
let a2: TestServer;
/** Another deployment, with its own database and pseudonym. */
let b: TestServer;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  a = await startTestServer();
  a2 = await startTestServer({ connection: a.connection });
  b = await startTestServer({ overrides: { dataproxy: { via_pseudonym: 'dashgate-b' } } });
});
afterAll(async () => {
  await b.close();
  await a2.close();
  await a.close();
  await upstream.close();
});

/** A data source on `on` that calls `url` as dashgate's admin (every instance's admin is admin:admin). */
async function dashgateDs(on: TestServer, uid: string, url: string): Promise<void> {
  const res = await call(on, 'POST', '/api/datasources', {
    body: { name: uid, uid, type: 'prometheus', access: 'proxy', url, basicAuth: true, basicAuthUser: 'admin', secureJsonData: { basicAuthPassword: 'admin' } },
  });
  expect(res.status).toBe(200);
}

/** Proxy calls each server logged, by status. */
function proxyCalls(server: TestServer): number[] {
  return server.logs.filter((l) => l.msg === 'request' && String(l.route).startsWith('/api/datasources/proxy/')).map((l) => Number(l.status));
}

async function settled(servers: TestServer[], total: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (servers.reduce((n, s) => n + proxyCalls(s).length, 0) < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

describe('Via on proxied requests', () => {
  it('adds this deployment\'s entry after the ones received, with the protocol version received', async () => {
    const ds = await call(a, 'POST', '/api/datasources', { body: { name: 'echo', type: 'loki', access: 'proxy', url: upstream.url } });
    const id = ds.body.id;
    const plain = await call(a, 'GET', `/api/datasources/proxy/${id}/x`);
    expect(plain.status).toBe(200);
    expect(plain.body.headers.via).toBe('1.1 dashgate');
    const behindEdge = await call(a, 'GET', `/api/datasources/proxy/${id}/x`, { headers: { via: 'HTTP/1.0 edge (Apache), 1.1 dashgate-b' } });
    expect(behindEdge.body.headers.via).toBe('HTTP/1.0 edge (Apache), 1.1 dashgate-b, 1.1 dashgate');
  });

  it('refuses a request that already carries it with 508 and JSON, before looking up the data source', async () => {
    const before = upstream.requests.length;
    for (const via of ['1.1 dashgate', '1.0 edge, 1.1 DASHGATE (dashgate)']) {
      for (const path of ['/api/datasources/proxy/1/x', '/api/datasources/proxy/uid/no-such-uid/x']) {
        const res = await call(a, 'GET', path, { headers: { via } });
        expect(res.status).toBe(508);
        expect(res.headers.get('content-type')).toBe('application/json');
        expect(res.body).toEqual(LOOP);
      }
    }
    expect(upstream.requests.length).toBe(before);
    // Authentication comes first, as on every route.
    expect((await call(a, 'GET', '/api/datasources/proxy/1/x', { auth: null, headers: { via: '1.1 dashgate' } })).status).toBe(401);
    // Another deployment's name, or a name in a comment, is not a loop.
    expect((await call(a, 'GET', '/api/datasources/proxy/uid/none/x', { headers: { via: '1.1 dashgate-b, 1.1 edge (dashgate)' } })).status).toBe(404);
  });
});

describe('proxy loops', () => {
  it('through one instance: a data source pointing at its own proxy URL answers 508 after one hop', async () => {
    await dashgateDs(a, 'self-loop', `${a.url}/api/datasources/proxy/uid/self-loop`);
    const before = proxyCalls(a).length;
    const started = performance.now();
    const res = await call(a, 'GET', '/api/datasources/proxy/uid/self-loop/api/v1/query?query=up');
    expect(res.status).toBe(508);
    expect(res.body).toEqual(LOOP);
    expect(performance.now() - started).toBeLessThan(1000);
    await settled([a], before + 2);
    // The client's call, and the one hop it made to itself.
    expect(proxyCalls(a).slice(before).sort()).toEqual([508, 508]);
  });

  it('through two instances of one deployment: A\'s data source calls the other instance, which calls A back', async () => {
    // Shared database: both instances see both data sources.
    await dashgateDs(a, 'to-second', `${a2.url}/api/datasources/proxy/uid/to-first/q`);
    await dashgateDs(a, 'to-first', `${a.url}/api/datasources/proxy/uid/to-second/q`);
    const [beforeA, beforeA2] = [proxyCalls(a).length, proxyCalls(a2).length];
    const res = await call(a, 'GET', '/api/datasources/proxy/uid/to-second/x');
    expect(res.status).toBe(508);
    expect(res.body).toEqual(LOOP);
    await settled([a, a2], beforeA + beforeA2 + 2);
    // The second instance refuses the first hop: it recognises the deployment's entry.
    expect(proxyCalls(a).slice(beforeA)).toEqual([508]);
    expect(proxyCalls(a2).slice(beforeA2)).toEqual([508]);
  });

  it('through two deployments: A calls B, B calls A back, and A refuses its own entry', async () => {
    await dashgateDs(a, 'a-to-b', `${b.url}/api/datasources/proxy/uid/b-to-a`);
    await dashgateDs(b, 'b-to-a', `${a.url}/api/datasources/proxy/uid/a-to-b`);
    const [beforeA, beforeB] = [proxyCalls(a).length, proxyCalls(b).length];
    const res = await call(a, 'GET', '/api/datasources/proxy/uid/a-to-b/x');
    expect(res.status).toBe(508);
    expect(res.body).toEqual(LOOP);
    await settled([a, b], beforeA + beforeB + 3);
    // A (client call), B (A's hop), A again (B's hop, refused): three calls in all.
    expect(proxyCalls(a).slice(beforeA)).toEqual([508, 508]);
    expect(proxyCalls(b).slice(beforeB)).toEqual([508]);
  });

  it('deployments with their own names may still proxy through each other when there is no loop', async () => {
    await dashgateDs(b, 'b-to-echo', upstream.url);
    await dashgateDs(a, 'a-to-b-echo', `${b.url}/api/datasources/proxy/uid/b-to-echo`);
    const res = await call(a, 'GET', '/api/datasources/proxy/uid/a-to-b-echo/api/v1/labels');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ url: '/api/v1/labels', headers: { via: '1.1 dashgate, 1.1 dashgate-b' } });
  });
});
