import { request } from 'node:http';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, startTestServer, type TestServer } from './support/server.ts';
import { startUpstream, type Upstream } from './support/upstream.ts';

let server: TestServer;
let upstream: Upstream;

async function createDs(body: Record<string, unknown>, target: TestServer = server): Promise<{ id: number; uid: string }> {
  const res = await call(target, 'POST', '/api/datasources', { body: { access: 'proxy', type: 'loki', ...body } });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

function proxied(id: number | string, rest: string, options: Parameters<typeof call>[3] = {}, target: TestServer = server) {
  return call(target, 'GET', `/api/datasources/proxy/${id}/${rest}`, options);
}

beforeAll(async () => {
  upstream = await startUpstream();
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

describe('forwarding', () => {
  it('joins the data source path, keeps the query string and encoded slashes', async () => {
    const ds = await createDs({ name: 'echo', url: `${upstream.url}/root/` });
    const res = await proxied(ds.id, 'api/services/afsd%2Fafsd/operations?query=%2Ftest%2F&x=1');
    expect(res.status).toBe(200);
    expect(res.body.url).toBe('/root/api/services/afsd%2Fafsd/operations?query=%2Ftest%2F&x=1');
    expect((await proxied(ds.id, 'path/to/folder/')).body.url).toBe('/root/path/to/folder/');
    expect((await call(server, 'GET', `/api/datasources/proxy/${ds.id}`)).body.url).toBe('/root/');
    expect((await call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/by-uid`)).body.url).toBe('/root/by-uid');
  });

  it('forwards every method with its body', async () => {
    const ds = await createDs({ name: 'methods', url: upstream.url });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await call(server, method, `/api/datasources/proxy/${ds.id}/write`, { rawBody: 'x'.repeat(1000), headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ method, url: '/write', bodyBytes: 1000 });
    }
  });

  it('answers in the original server\'s words before proxying', async () => {
    expect((await call(server, 'GET', '/api/datasources/proxy/abc/x')).body).toEqual({ message: 'id is invalid' });
    expect((await call(server, 'GET', '/api/datasources/proxy/uid/bad$uid/x')).body).toEqual({ message: 'UID is invalid' });
    const missing = await call(server, 'GET', '/api/datasources/proxy/999999/x');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Unable to find datasource' });
    expect((await call(server, 'GET', '/api/datasources/proxy/1/x', { auth: null })).status).toBe(401);
  });

  it('lets any org role query, and only in the caller\'s org', async () => {
    const ds = await createDs({ name: 'roles', url: upstream.url });
    await call(server, 'POST', '/api/admin/users', { body: { login: 'proxy-viewer', password: 'pass1234' } });
    expect((await proxied(ds.id, 'q', { auth: basic('proxy-viewer', 'pass1234') })).status).toBe(200);
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Elsewhere') returning id`);
    const outsider = await call(server, 'POST', '/api/admin/users', { body: { login: 'outsider', password: 'pass1234', orgId: org!.id } });
    expect(outsider.status).toBe(200);
    const res = await proxied(ds.id, 'q', { auth: basic('outsider', 'pass1234') });
    expect(res.status).toBe(404);
  });

  it('applies the per-kind method rules', async () => {
    const es = await createDs({ name: 'es', type: 'elasticsearch', url: upstream.url });
    const prom = await createDs({ name: 'prom', type: 'prometheus', url: upstream.url });
    const send = (id: number, method: string, path: string) =>
      call(server, method, `/api/datasources/proxy/${id}/${path}`, method === 'GET' ? {} : { rawBody: '{}', headers: { 'content-type': 'application/json' } });
    expect((await send(es.id, 'DELETE', 'idx')).body).toEqual({ message: 'deletes not allowed on proxied Elasticsearch datasource' });
    expect((await send(es.id, 'PUT', 'idx')).body).toEqual({ message: 'puts not allowed on proxied Elasticsearch datasource' });
    expect((await send(es.id, 'POST', 'idx/_search')).body).toEqual({ message: 'posts not allowed on proxied Elasticsearch datasource except on /_msearch' });
    expect((await send(es.id, 'POST', '_msearch')).status).toBe(200);
    expect((await send(prom.id, 'POST', 'api/v1/query')).status).toBe(200);
    const denied = await send(prom.id, 'POST', 'api/v1/label/__name__/values');
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: 'non allow-listed POSTs not allowed on proxied Prometheus datasource' });
    expect((await send(prom.id, 'GET', 'api/v1/label/__name__/values')).status).toBe(200);
  });
});

describe('headers', () => {
  it('strips the caller\'s credentials and client headers, and injects the data source\'s', async () => {
    const ds = await createDs({
      name: 'headers', url: upstream.url, basicAuth: true, basicAuthUser: 'svc',
      secureJsonData: { basicAuthPassword: 'ds-secret', httpHeaderValue1: 'tenant-42' },
      jsonData: { httpHeaderName1: 'X-Scope-OrgID', keepCookies: ['JSESSION_ID'] },
    });
    const res = await proxied(ds.id, 'h', {
      headers: {
        cookie: 'grafana_session=abc; JSESSION_ID=test; other=x', origin: 'http://evil', referer: 'http://evil/page',
        'x-forwarded-host': 'h', 'x-forwarded-port': '1', 'x-forwarded-proto': 'https', 'x-forwarded-for': '10.1.1.1', 'x-canary': 'kept',
      },
    });
    const seen = res.body.headers;
    expect(seen.authorization).toBe(`Basic ${Buffer.from('svc:ds-secret').toString('base64')}`);
    expect(seen.cookie).toBe('JSESSION_ID=test');
    for (const name of ['origin', 'referer', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'x-grafana-user']) expect(seen[name]).toBeUndefined();
    expect(seen['x-forwarded-for']).toBe('10.1.1.1, 127.0.0.1');
    expect(seen['x-scope-orgid']).toBe('tenant-42');
    expect(seen['x-canary']).toBe('kept');
    expect(seen['user-agent']).toMatch(/^dashgate\//);
    expect(seen.host).toBe(`127.0.0.1:${upstream.port}`);
    // And on the way back:
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('content-security-policy')).toBe('sandbox');
    expect(res.headers.get('cache-control')).toBeNull();
  });

  it('moves X-DS-Authorization to Authorization and never forwards the caller\'s own', async () => {
    const ds = await createDs({ name: 'ds-auth', url: upstream.url });
    const res = await proxied(ds.id, 'h', { headers: { 'x-ds-authorization': 'Bearer upstream-token' } });
    expect(res.body.headers.authorization).toBe('Bearer upstream-token');
    expect(res.body.headers['x-ds-authorization']).toBeUndefined();
    const plain = await proxied(ds.id, 'h');
    expect(plain.body.headers.authorization).toBeUndefined();
  });

  it('sends user + password as Basic for kinds that use them, and the user header when configured', async () => {
    const influx = await createDs({ name: 'influx', type: 'influxdb', url: upstream.url, user: 'reader', secureJsonData: { password: 'influx-pw' } });
    expect((await proxied(influx.id, 'query')).body.headers.authorization).toBe(`Basic ${Buffer.from('reader:influx-pw').toString('base64')}`);
    const withUser = await startTestServer({ connection: server.connection, overrides: { dataproxy: { send_user_header: 'true' } } });
    try {
      expect((await proxied(influx.id, 'query', {}, withUser)).body.headers['x-grafana-user']).toBe('admin');
    } finally {
      await withUser.close();
    }
  });

  it('turns an upstream 401 into a 400', async () => {
    const denying = await startUpstream((_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Basic' });
      res.end('nope');
    });
    try {
      const ds = await createDs({ name: 'denying', url: denying.url });
      const res = await proxied(ds.id, 'x');
      expect(res.status).toBe(400);
      expect(res.text).toBe('Authentication to data source failed');
    } finally {
      await denying.close();
    }
  });
});

describe('failures', () => {
  it('answers an empty 504 on timeout and an empty 502 when the upstream refuses or resets', async () => {
    const slow = await startUpstream((_req, res) => setTimeout(() => res.end('late'), 3000));
    const resetting = await startUpstream((req) => req.socket.destroy());
    const closedPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    try {
      const slowDs = await createDs({ name: 'slow', url: slow.url, jsonData: { timeout: 1 } });
      const started = Date.now();
      const timeout = await proxied(slowDs.id, 'x');
      expect(timeout.status).toBe(504);
      expect(timeout.text).toBe('');
      expect(Date.now() - started).toBeLessThan(2500);
      const refusedDs = await createDs({ name: 'refused', url: `http://127.0.0.1:${closedPort}` });
      const refused = await proxied(refusedDs.id, 'x');
      expect(refused.status).toBe(502);
      expect(refused.text).toBe('');
      const resetDs = await createDs({ name: 'reset', url: resetting.url });
      expect((await proxied(resetDs.id, 'x')).status).toBe(502);
      // Still serving.
      expect((await call(server, 'GET', '/api/datasources')).status).toBe(200);
    } finally {
      await slow.close();
      await resetting.close();
    }
  });

  it('closes the upstream socket at once when the client aborts', async () => {
    const streaming = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('tick\n'), 20);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const ds = await createDs({ name: 'streaming', url: streaming.url });
      const port = Number(new URL(server.url).port);
      const clients = await Promise.all(Array.from({ length: 50 }, () => new Promise<import('node:http').ClientRequest>((resolve) => {
        const req = request({ host: '127.0.0.1', port, path: `/api/datasources/proxy/${ds.id}/stream`, headers: { authorization: ADMIN } }, (res) => {
          res.once('data', () => resolve(req));
        });
        req.on('error', () => {});
        req.end();
      })));
      expect(streaming.connections.open).toBe(50);
      for (const client of clients) client.destroy();
      const deadline = Date.now() + 2000;
      while (streaming.connections.open > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(streaming.connections.open).toBe(0);
      expect((await call(server, 'GET', '/api/datasources')).status).toBe(200);
    } finally {
      await streaming.close();
    }
  });

  it('streams 200 MB each way without buffering', async () => {
    const sink = await startUpstream((req, res, record) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        Readable.from(chunks(200)).pipe(res);
        return;
      }
      req.on('data', (c: Buffer) => (record.bodyBytes += c.length));
      req.on('end', () => res.end(String(record.bodyBytes)));
    });
    try {
      const ds = await createDs({ name: 'bulk', url: sink.url });
      const before = process.memoryUsage().rss;
      const port = Number(new URL(server.url).port);
      const uploaded = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/api/datasources/proxy/${ds.id}/upload`, headers: { authorization: ADMIN, 'content-type': 'application/octet-stream' } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        Readable.from(chunks(200)).pipe(req);
      });
      expect(uploaded).toBe(String(200 * 1024 * 1024));
      const downloaded = await new Promise<number>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: `/api/datasources/proxy/${ds.id}/download`, headers: { authorization: ADMIN } }, (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => (bytes += c.length));
          res.on('end', () => resolve(bytes));
        }).on('error', reject).end();
      });
      expect(downloaded).toBe(200 * 1024 * 1024);
      // Test client, proxy and upstream share this process: growth far below 200 MB means no buffering.
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
    } finally {
      await sink.close();
    }
  }, 60_000);
});

function rawStatus(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: Number(new URL(server.url).port), path, headers: { authorization: ADMIN } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject).end();
  });
}

function* chunks(megabytes: number): Generator<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024, 7);
  for (let i = 0; i < megabytes; i++) yield chunk;
}

describe('egress policy and path safety', () => {
  it('never lets a traversal reach the upstream', async () => {
    const ds = await createDs({ name: 'jail', url: `${upstream.url}/jail/` });
    const corpus = [
      '..', '../secret', 'a/../../secret', '%2e%2e/secret', '%2E%2E%2Fsecret', '..%2fsecret', '.%2e/secret', '%252e%252e/secret',
      'a/%2e%2e/%2e%2e/x', '%2e/x', './x', 'a//b', '%2F%2Fevil', '..%5csecret', '%5c..%5csecret', 'a%00b', 'a/%2e%2e%2f..%2fx', '%c0%ae%c0%ae/x',
    ];
    const before = upstream.requests.length;
    for (const path of corpus) {
      // node:http sends the path verbatim (fetch would normalise the dots away before sending).
      const status = await rawStatus(`/api/datasources/proxy/${ds.id}/${path}`);
      expect([status, path]).toEqual([400, path]);
    }
    expect(upstream.requests.length).toBe(before);
    for (const path of ['api/v1/query', 'a.b/c..d', '_msearch', 'trailing/']) expect((await proxied(ds.id, path)).status).toBe(200);
  });

  it('with deny_private on, a loopback target receives zero connections; the whitelist is enforced', async () => {
    const guarded = await startTestServer({ connection: server.connection, overrides: { security: { data_source_proxy_deny_private: 'true' } } });
    const listed = await startTestServer({ connection: server.connection, overrides: { security: { data_source_proxy_whitelist: 'allowed.example:80' } } });
    try {
      const byIp = await createDs({ name: 'loop-ip', url: upstream.url });
      const byName = await createDs({ name: 'loop-name', url: `http://localhost:${upstream.port}` });
      const before = upstream.connections.total;
      for (const id of [byIp.id, byName.id]) {
        const res = await proxied(id, 'x', {}, guarded);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ message: 'Data proxy target address is not allowed' });
      }
      expect(upstream.connections.total).toBe(before);
      const notListed = await proxied(byIp.id, 'x', {}, listed);
      expect(notListed.status).toBe(403);
      expect(notListed.body).toEqual({ message: 'Data proxy hostname and ip are not included in whitelist' });
    } finally {
      await guarded.close();
      await listed.close();
    }
  });
});

describe('data source cache', () => {
  it('sees writes made on another instance at once', async () => {
    const other = await startTestServer({ connection: server.connection });
    const moved = await startUpstream((_req, res) => res.end('moved'));
    try {
      const ds = await createDs({ name: 'cached', url: upstream.url });
      expect((await proxied(ds.id, 'x', {}, other)).status).toBe(200); // now cached on `other`
      await call(server, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'cached', type: 'loki', access: 'proxy', url: moved.url } });
      const deadline = Date.now() + 1000;
      let text = '';
      while (Date.now() < deadline && (text = (await proxied(ds.id, 'x', {}, other)).text) !== 'moved') await new Promise((r) => setTimeout(r, 10));
      expect(text).toBe('moved');
      await call(server, 'DELETE', `/api/datasources/${ds.id}`);
      const gone = Date.now() + 1000;
      let status = 0;
      while (Date.now() < gone && (status = (await proxied(ds.id, 'x', {}, other)).status) !== 404) await new Promise((r) => setTimeout(r, 10));
      expect(status).toBe(404);
    } finally {
      await other.close();
      await moved.close();
    }
  });
});
