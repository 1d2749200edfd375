import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';

/** Two instances on one database, as behind a load balancer. */
let a: TestServer;
let b: TestServer;
const upstreams: Array<{ server: Server; url: string }> = [];

/** An upstream on loopback that names itself in every answer. */
async function upstream(tag: string): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ upstream: tag, path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  upstreams.push({ server, url });
  return url;
}

beforeAll(async () => {
  a = await startTestServer();
  b = await startTestServer({ connection: a.connection });
});
afterAll(async () => {
  await b.close();
  await a.close();
  for (const u of upstreams) {
    u.server.closeAllConnections();
    await new Promise((resolve) => u.server.close(resolve));
  }
});

const base = { type: 'loki', access: 'proxy' };

describe('data source writes on one instance', () => {
  it('are read back on the other at once: create, update, delete, in every lookup form', async () => {
    const created = await call(a, 'POST', '/api/datasources', { body: { ...base, name: 'shared', url: 'http://one.example', jsonData: { v: 1 } } });
    expect(created.status).toBe(200);
    const { id, uid } = created.body.datasource;
    for (const path of [`/api/datasources/${id}`, `/api/datasources/uid/${uid}`, '/api/datasources/name/shared']) {
      expect((await call(b, 'GET', path)).body).toMatchObject({ id, url: 'http://one.example', jsonData: { v: 1 } });
    }
    expect((await call(b, 'GET', '/api/datasources/id/shared')).body).toEqual({ id });

    const updated = await call(b, 'PUT', `/api/datasources/${id}`, { body: { ...base, name: 'shared-renamed', url: 'http://two.example', jsonData: { v: 2 }, version: 1 } });
    expect(updated.status).toBe(200);
    expect((await call(a, 'GET', `/api/datasources/${id}`)).body).toMatchObject({ name: 'shared-renamed', url: 'http://two.example', jsonData: { v: 2 }, version: 2 });
    expect((await call(a, 'GET', '/api/datasources/name/shared')).status).toBe(404);
    // The version written on B is the one A checks against.
    const stale = await call(a, 'PUT', `/api/datasources/${id}`, { body: { ...base, name: 'shared-renamed', version: 1 } });
    expect(stale.status).toBe(409);

    expect((await call(a, 'DELETE', `/api/datasources/${id}`)).status).toBe(200);
    expect((await call(b, 'GET', `/api/datasources/${id}`)).status).toBe(404);
    expect((await call(b, 'DELETE', `/api/datasources/${id}`)).status).toBe(404);
    expect((await call(b, 'GET', '/api/datasources')).body).toEqual([]);
  });

  it('keep names unique and one default across instances under concurrent writes', async () => {
    const creates = await Promise.all(Array.from({ length: 10 }, (_, i) => call(i % 2 ? a : b, 'POST', '/api/datasources', { body: { ...base, name: 'contended' } })));
    expect(creates.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);

    const ids: number[] = [];
    for (const name of ['d1', 'd2', 'd3', 'd4']) ids.push((await call(a, 'POST', '/api/datasources', { body: { ...base, name } })).body.id);
    const defaults = await Promise.all(ids.map((id, i) => call(i % 2 ? a : b, 'PUT', `/api/datasources/${id}`, { body: { ...base, name: `d${i + 1}`, isDefault: true } })));
    expect(defaults.every((r) => r.status === 200)).toBe(true);
    const list = (await call(b, 'GET', '/api/datasources')).body as Array<{ isDefault: boolean }>;
    expect(list.filter((d) => d.isDefault)).toHaveLength(1);
  });
});

describe('the proxy target cache', () => {
  it('follows a data source changed or deleted on the other instance from the next call on', async () => {
    const one = await upstream('one');
    const two = await upstream('two');
    const created = await call(a, 'POST', '/api/datasources', { body: { ...base, name: 'proxied', url: one } });
    const id = created.body.id as number;
    const proxied = (server: TestServer) => call(server, 'GET', `/api/datasources/proxy/${id}/ping`, { auth: ADMIN });

    for (let round = 0; round < 20; round++) {
      const [from, to] = round % 2 ? [two, one] : [one, two];
      // B serves (and caches) the current target...
      expect((await proxied(b)).body).toMatchObject({ upstream: from === one ? 'one' : 'two' });
      expect((await proxied(b)).body).toMatchObject({ upstream: from === one ? 'one' : 'two' });
      // ...A repoints it, and B's very next call goes to the new one.
      expect((await call(a, 'PUT', `/api/datasources/${id}`, { body: { ...base, name: 'proxied', url: to } })).status).toBe(200);
      expect((await proxied(b)).body).toMatchObject({ upstream: to === one ? 'one' : 'two' });
    }
    expect((await call(a, 'DELETE', `/api/datasources/${id}`)).status).toBe(200);
    expect((await proxied(b)).status).toBe(404);
  });
});
