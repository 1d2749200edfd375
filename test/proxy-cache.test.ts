import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LISTENER_APPLICATION_NAME } from '../src/proxy/cache.ts';
import { CHANGE_CHANNEL } from '../src/services/data-sources.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { startUpstream, type Upstream } from './support/upstream.ts';

// The proxy's in-memory data source cache: served from memory, invalidated on every instance by
// PostgreSQL notifications, emptied when its listening connection is lost.

let first: TestServer;
let second: TestServer;
let oldHome: Upstream;
let newHome: Upstream;

beforeAll(async () => {
  oldHome = await startUpstream((_req, res) => res.end('old'));
  newHome = await startUpstream((_req, res) => res.end('new'));
  first = await startTestServer();
  second = await startTestServer({ connection: first.connection });
});
afterAll(async () => {
  await second.close();
  await first.close();
  await oldHome.close();
  await newHome.close();
});

async function createDs(name: string, extra: Record<string, unknown> = {}): Promise<{ id: number; uid: string }> {
  const res = await call(first, 'POST', '/api/datasources', { body: { name, type: 'loki', access: 'proxy', url: oldHome.url, ...extra } });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

function proxied(server: TestServer, path: string) {
  return call(server, 'GET', `/api/datasources/proxy/${path}`);
}

/** Polls `probe` until it returns `expected` or `ms` pass; returns what it last saw. */
async function eventually<T>(probe: () => Promise<T>, expected: T, ms = 1000): Promise<T> {
  const deadline = Date.now() + ms;
  let seen = await probe();
  while (seen !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    seen = await probe();
  }
  return seen;
}

/** Changes the row behind the service's back: no notification, so only a cache miss can see it. */
async function silentlyMove(id: number, url: string): Promise<void> {
  await first.sql('update data_source set url = $1 where id = $2', [url, id]);
}

describe('proxy data source cache', () => {
  it('serves from memory once loaded, by id and by uid', async () => {
    const ds = await createDs('memory');
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('old');
    expect((await proxied(second, `uid/${ds.uid}/x`)).text).toBe('old');
    await silentlyMove(ds.id, newHome.url);
    // Both keys are cached, so neither form notices the unannounced change...
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('old');
    expect((await proxied(second, `uid/${ds.uid}/x`)).text).toBe('old');
    // ...until the change is announced on the channel the data source service writes to.
    await first.sql('select pg_notify($1, $2)', [CHANGE_CHANNEL, `1:${ds.id}`]);
    expect(await eventually(async () => (await proxied(second, `uid/${ds.uid}/x`)).text, 'new')).toBe('new');
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('new');
  });

  it('sees updates and deletes made through another instance at once', async () => {
    const ds = await createDs('two-instances', { basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'before' } });
    const echo = await startUpstream((req, res) => res.end(`${req.headers.authorization}`));
    try {
      await call(first, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'two-instances', type: 'loki', access: 'proxy', url: echo.url, basicAuth: true, basicAuthUser: 'u' } });
      expect((await proxied(second, `${ds.id}/x`)).text).toBe(`Basic ${Buffer.from('u:before').toString('base64')}`);
      // A new secret (version bump on the other instance) is used by this one within the poll.
      const started = Date.now();
      await call(first, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'two-instances', type: 'loki', access: 'proxy', url: echo.url, basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'after' } } });
      const expected = `Basic ${Buffer.from('u:after').toString('base64')}`;
      expect(await eventually(async () => (await proxied(second, `${ds.id}/x`)).text, expected)).toBe(expected);
      expect(Date.now() - started).toBeLessThan(1000);
      await call(first, 'DELETE', `/api/datasources/uid/${ds.uid}`);
      expect(await eventually(async () => (await proxied(second, `uid/${ds.uid}/x`)).status, 404)).toBe(404);
      expect((await proxied(second, `${ds.id}/x`)).status).toBe(404);
    } finally {
      await echo.close();
    }
  });

  it('sees its own writes without waiting for the notification', async () => {
    const ds = await createDs('own-writes');
    expect((await proxied(first, `${ds.id}/x`)).text).toBe('old');
    await call(first, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'own-writes', type: 'loki', access: 'proxy', url: newHome.url } });
    expect((await proxied(first, `${ds.id}/x`)).text).toBe('new');
  });

  it('empties itself when its listening connection is lost, and caches again once it is back', async () => {
    const ds = await createDs('reconnect');
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('old');
    const listenerPids = async () =>
      (await first.sql<{ pid: number }>(
        `select pid from pg_stat_activity where application_name = $1 and datname = current_database() and query ilike 'listen %' and state = 'idle'`,
        [LISTENER_APPLICATION_NAME],
      )).map((r) => r.pid);
    const before = await listenerPids();
    expect(before).toHaveLength(2); // one per instance
    await first.sql('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME]);
    // A change nobody is told about: with the listener gone, nothing may be served from memory.
    await silentlyMove(ds.id, newHome.url);
    expect(await eventually(async () => (await proxied(second, `${ds.id}/x`)).text, 'new')).toBe('new');
    expect((await proxied(second, `${ds.id}/x`)).status).toBe(200);
    // The listeners come back on new connections, and caching resumes.
    const reconnected = await eventually(async () => (await listenerPids()).filter((pid) => !before.includes(pid)).length, 2, 5000);
    expect(reconnected).toBe(2);
    await eventually(async () => (await proxied(second, `${ds.id}/x`)).text, 'new');
    await silentlyMove(ds.id, oldHome.url);
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('new');
    await first.sql('select pg_notify($1, $2)', [CHANGE_CHANNEL, `1:${ds.id}`]);
    expect(await eventually(async () => (await proxied(second, `${ds.id}/x`)).text, 'old')).toBe('old');
  });
});
