import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CHANGE_CHANNEL } from '../../src/services/data-sources.ts';
import { call, type TestServer } from '../support/server.ts';
import { changeListeners, changeListenersBack, killChangeListeners, twoInstances } from '../support/instances.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// The proxy's in-memory data source cache: served from memory, invalidated on every instance by
// PostgreSQL notifications, emptied when its listening connection is lost.

let first: TestServer;
let second: TestServer;
let oldHome: Upstream;
let newHome: Upstream;

twoInstances((a, b) => ([first, second] = [a, b]));
beforeAll(async () => {
  oldHome = await startUpstream((_req, res) => res.end('old'));
  newHome = await startUpstream((_req, res) => res.end('new'));
});
afterAll(async () => {
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

/**
 * Changes the row with the notifying trigger switched off for this one transaction (as only a
 * superuser can), so only a cache miss can see it.
 */
async function silentlyMove(id: number, url: string): Promise<void> {
  expect(Number.isInteger(id) && /^http:\/\/127\.0\.0\.1:\d+$/.test(url)).toBe(true);
  await first.sql(`begin; set local session_replication_role = replica; update data_source set url = '${url}' where id = ${id}; commit;`);
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
    // ...until the change is announced on the channel the data source service writes to: the
    // next call waits for the change barrier, so it already sees it.
    await first.sql('select pg_notify($1, $2)', [CHANGE_CHANNEL, `1:${ds.id}`]);
    expect((await proxied(second, `uid/${ds.uid}/x`)).text).toBe('new');
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('new');
  });

  it('follows a URL and a secret changed by plain SQL on the very next request, on every instance', async () => {
    const echo = await startUpstream((req, res) => res.end(`${req.headers.host} ${req.headers.authorization}`));
    try {
      const ds = await createDs('plain-sql', { basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'before' } });
      const auth = (password: string) => `Basic ${Buffer.from(`u:${password}`).toString('base64')}`;
      for (const server of [first, second]) expect((await proxied(server, `${ds.id}/x`)).status).toBe(200);
      for (const server of [first, second]) expect((await proxied(server, `uid/${ds.uid}/x`)).status).toBe(200);

      // The URL, as an operator would change it with psql.
      await first.sql('update data_source set url = $1 where id = $2', [echo.url, ds.id]);
      for (const server of [second, first]) {
        expect((await proxied(server, `${ds.id}/x`)).text).toBe(`127.0.0.1:${echo.port} ${auth('before')}`);
        expect((await proxied(server, `uid/${ds.uid}/x`)).text).toBe(`127.0.0.1:${echo.port} ${auth('before')}`);
      }

      // A secret, sealed as the service seals it, written straight into the row.
      const sealed = first.app.services.dataSources.sealSecret({ orgId: 1, uid: ds.uid }, 'basicAuthPassword', 'after');
      await first.sql(`update data_source set secure_json_data = jsonb_set(secure_json_data, '{basicAuthPassword}', to_jsonb($1::text)) where id = $2`, [sealed, ds.id]);
      for (const server of [second, first]) expect((await proxied(server, `${ds.id}/x`)).text).toBe(`127.0.0.1:${echo.port} ${auth('after')}`);

      // A row deleted by hand is gone for the proxy at once.
      await first.sql('delete from data_source where id = $1', [ds.id]);
      for (const server of [second, first]) {
        expect((await proxied(server, `${ds.id}/x`)).status).toBe(404);
        expect((await proxied(server, `uid/${ds.uid}/x`)).status).toBe(404);
      }
    } finally {
      await echo.close();
    }
  });

  it('sees updates and deletes made through another instance at once', async () => {
    const ds = await createDs('two-instances', { basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'before' } });
    const echo = await startUpstream((req, res) => res.end(`${req.headers.authorization}`));
    try {
      await call(first, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'two-instances', type: 'loki', access: 'proxy', url: echo.url, basicAuth: true, basicAuthUser: 'u' } });
      expect((await proxied(second, `${ds.id}/x`)).text).toBe(`Basic ${Buffer.from('u:before').toString('base64')}`);
      // A new secret (version bump on the other instance) is used by this one's next call.
      await call(first, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'two-instances', type: 'loki', access: 'proxy', url: echo.url, basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'after' } } });
      const expected = `Basic ${Buffer.from('u:after').toString('base64')}`;
      expect((await proxied(second, `${ds.id}/x`)).text).toBe(expected);
      await call(first, 'DELETE', `/api/datasources/uid/${ds.uid}`);
      expect((await proxied(second, `uid/${ds.uid}/x`)).status).toBe(404);
      expect((await proxied(second, `${ds.id}/x`)).status).toBe(404);
    } finally {
      await echo.close();
    }
  });

  it('sees its own writes at once', async () => {
    const ds = await createDs('own-writes');
    expect((await proxied(first, `${ds.id}/x`)).text).toBe('old');
    await call(first, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'own-writes', type: 'loki', access: 'proxy', url: newHome.url } });
    expect((await proxied(first, `${ds.id}/x`)).text).toBe('new');
  });

  it('empties itself when its listening connection is lost, and caches again once it is back', async () => {
    const ds = await createDs('reconnect');
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('old');
    const before = await changeListeners(first);
    expect(before).toHaveLength(2); // one per instance
    await killChangeListeners(first);
    // A change nobody is told about: with the listener gone, nothing may be served from memory.
    await silentlyMove(ds.id, newHome.url);
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('new');
    // The listeners come back on new connections, and caching resumes.
    expect(await changeListenersBack([first, second], before)).toBe(true);
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('new');
    await silentlyMove(ds.id, oldHome.url);
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('new');
    await first.sql('select pg_notify($1, $2)', [CHANGE_CHANNEL, `1:${ds.id}`]);
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('old');
  });

  it('forgets everything when the table is truncated by hand', async () => {
    const ds = await createDs('truncated');
    expect((await proxied(second, `${ds.id}/x`)).text).toBe('old');
    await first.sql('truncate data_source cascade');
    expect((await proxied(second, `${ds.id}/x`)).status).toBe(404);
  });
});
