import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STRIPPED_RESPONSE_HEADERS } from '../../src/upstream/headers.ts';
import { ADMIN, basic, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// Forwarding, header rules and logging of the data source proxy, against a real upstream that
// echoes what it received (method, raw URL, headers, body size) as JSON.

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

/** A GET sent byte for byte as written (fetch would normalise the path, and drops some headers). */
function raw(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: Number(new URL(server.url).port), path, headers: { authorization: ADMIN, ...headers } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
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
    const res = await proxied(ds.id, 'api/services/afsd%2Fafsd/operations?query=%2Ftest%2F&x=1&x=2');
    expect(res.status).toBe(200);
    expect(res.body.url).toBe('/root/api/services/afsd%2Fafsd/operations?query=%2Ftest%2F&x=1&x=2');
    expect((await proxied(ds.id, 'path/to/folder/')).body.url).toBe('/root/path/to/folder/');
    expect((await call(server, 'GET', `/api/datasources/proxy/${ds.id}`)).body.url).toBe('/root/');
    expect((await call(server, 'GET', `/api/datasources/proxy/${ds.id}/?a=b`)).body.url).toBe('/root/?a=b');
    expect((await call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/by-uid`)).body.url).toBe('/root/by-uid');
    expect((await call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}`)).body.url).toBe('/root/');
    // After the original server's own test: %2F in both the path and the query arrive as sent. (Its
    // leading `%2F`, an empty segment once decoded, is refused here: see the path-safety tests.)
    expect((await proxied(ds.id, 'test%2Ftest%2F?query=%2Ftest%2Ftest%2F')).body.url).toBe('/root/test%2Ftest%2F?query=%2Ftest%2Ftest%2F');
    const noSlash = await createDs({ name: 'echo-bare', url: `${upstream.url}/base` });
    expect((await proxied(noSlash.id, 'x/y')).body.url).toBe('/base/x/y');
    const schemeLess = await createDs({ name: 'echo-schemeless', url: `127.0.0.1:${upstream.port}` });
    expect((await proxied(schemeLess.id, 'x')).body.url).toBe('/x');
  });

  it('sends the path WHATWG URL parsing makes of it, whether or not parsing would change it', async () => {
    const ds = await createDs({ name: 'echo-url-forms', url: `${upstream.url}/root/` });
    // Plain paths skip the parser; these would be changed by it, so they go through it.
    const rests = [
      'api/v1/query?query=up&time=1',
      'api/v1/series?match[]={job="node"}',
      'a{b}/c`d',
      "x?it's",
      'x|y^z?a=|^',
      'x/%41?b=%25&c=%',
    ];
    for (const rest of rests) {
      const parsed = new URL(`http://upstream/root/${rest}`);
      const res = await raw(`/api/datasources/proxy/${ds.id}/${rest}`);
      expect({ rest, status: res.status, url: (JSON.parse(res.body) as { url: string }).url }).toEqual({ rest, status: 200, url: parsed.pathname + parsed.search });
    }
  });

  it('forwards every method with its body', async () => {
    const ds = await createDs({ name: 'methods', url: upstream.url });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await call(server, method, `/api/datasources/proxy/${ds.id}/write`, { rawBody: 'x'.repeat(1000), headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ method, url: '/write', bodyBytes: 1000 });
      expect(res.body.headers['content-type']).toBe('text/plain');
    }
    const head = await call(server, 'HEAD', `/api/datasources/proxy/${ds.id}/h`);
    expect(head.status).toBe(200);
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'HEAD', url: '/h' });
  });

  it('answers in the original server\'s words before proxying', async () => {
    const invalidId = await call(server, 'GET', '/api/datasources/proxy/abc/x');
    expect([invalidId.status, invalidId.body]).toEqual([400, { message: 'id is invalid' }]);
    const invalidUid = await call(server, 'GET', '/api/datasources/proxy/uid/bad$uid/x');
    expect([invalidUid.status, invalidUid.body]).toEqual([400, { message: 'UID is invalid' }]);
    for (const path of ['/api/datasources/proxy/999999/x', '/api/datasources/proxy/uid/nope/x', '/api/datasources/proxy/99999999999/x']) {
      const missing = await call(server, 'GET', path);
      expect([missing.status, missing.body]).toEqual([404, { message: 'Unable to find datasource' }]);
    }
    const broken = await createDs({ name: 'no-url', url: '' });
    const noUrl = await proxied(broken.id, 'x');
    expect([noUrl.status, noUrl.body]).toEqual([400, { message: 'Invalid data source URL: ""' }]);
    // None of these reached the upstream, and none has the no-cache headers of the API.
    expect(upstream.requests.some((r) => r.url.endsWith('/x') && r.url !== '/x')).toBe(false);
    expect(noUrl.headers.get('cache-control')).toBeNull();
  });

  it('authenticates exactly like the REST API, with the same 401 bodies', async () => {
    const ds = await createDs({ name: 'auth', url: upstream.url });
    const before = upstream.requests.length;
    for (const auth of [null, basic('admin', 'wrong'), 'Bearer glsa_nope', 'Basic !!!']) {
      const viaProxy = await proxied(ds.id, 'x', { auth });
      const viaRest = await call(server, 'GET', '/api/datasources', { auth });
      expect(viaProxy.status).toBe(401);
      expect([auth, viaProxy.body]).toEqual([auth, viaRest.body]);
    }
    expect(upstream.requests.length).toBe(before);
    // API tokens work too, and their Authorization header never reaches the data source.
    const token = await call(server, 'POST', '/api/auth/keys', { body: { name: 'proxy-key', role: 'Viewer' } });
    expect(token.status).toBe(200);
    const res = await proxied(ds.id, 'x', { auth: `Bearer ${token.body.key}` });
    expect(res.status).toBe(200);
    expect(res.body.headers.authorization).toBeUndefined();
  });

  it('lets every org role query, only in the caller\'s org', async () => {
    const ds = await createDs({ name: 'roles', url: upstream.url });
    for (const role of ['Viewer', 'Editor', 'Admin']) {
      const login = `proxy-${role.toLowerCase()}`;
      const created = await call(server, 'POST', '/api/admin/users', { body: { login, password: 'pass1234' } });
      await server.sql('update org_user set role = $1 where user_id = $2', [role, created.body.id]);
      expect([role, (await proxied(ds.id, 'q', { auth: basic(login, 'pass1234') })).status]).toEqual([role, 200]);
    }
    // A user without a role in the org acts as 'None', which may not query.
    const roleless = await call(server, 'POST', '/api/admin/users', { body: { login: 'proxy-none', password: 'pass1234' } });
    await server.sql('delete from org_user where user_id = $1', [roleless.body.id]);
    const none = await proxied(ds.id, 'q', { auth: basic('proxy-none', 'pass1234') });
    expect(none.status).toBe(403);
    expect(none.body).toMatchObject({ title: 'Access denied', message: "You'll need additional permissions to perform this action. Permissions needed: datasources:query" });
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Elsewhere') returning id`);
    const outsider = await call(server, 'POST', '/api/admin/users', { body: { login: 'outsider', password: 'pass1234', orgId: org!.id } });
    expect(outsider.status).toBe(200);
    const res = await proxied(ds.id, 'q', { auth: basic('outsider', 'pass1234') });
    expect([res.status, res.body]).toEqual([404, { message: 'Unable to find datasource' }]);
    expect((await call(server, 'GET', `/api/datasources/proxy/uid/${ds.uid}/q`, { auth: basic('outsider', 'pass1234') })).status).toBe(404);
  });

  it('applies the per-kind rules with their exact messages', async () => {
    const es = await createDs({ name: 'es', type: 'elasticsearch', url: upstream.url });
    const prom = await createDs({ name: 'prom', type: 'prometheus', url: upstream.url });
    await call(server, 'POST', '/api/admin/users', { body: { login: 'prom-viewer', password: 'pass1234' } });
    const send = (id: number, method: string, path: string, auth = ADMIN) =>
      call(server, method, `/api/datasources/proxy/${id}/${path}`, { auth, ...(method === 'GET' ? {} : { rawBody: '{}', headers: { 'content-type': 'application/json' } }) });
    const before = upstream.requests.length;
    const refused: Array<[number, string, string, string, string?]> = [
      [es.id, 'DELETE', 'idx', 'deletes not allowed on proxied Elasticsearch datasource'],
      [es.id, 'PUT', 'idx', 'puts not allowed on proxied Elasticsearch datasource'],
      [es.id, 'POST', 'idx/_search', 'posts not allowed on proxied Elasticsearch datasource except on /_msearch'],
      [prom.id, 'POST', 'api/v1/label/__name__/values', 'non allow-listed POSTs not allowed on proxied Prometheus datasource'],
      [prom.id, 'PUT', 'api/v1/admin/tsdb/snapshot', 'non allow-listed PUTs not allowed on proxied Prometheus datasource'],
      [prom.id, 'DELETE', 'api/v1/admin/tsdb/delete_series', 'non allow-listed DELETEs not allowed on proxied Prometheus datasource'],
      [prom.id, 'POST', 'rules', 'plugin proxy route access denied', basic('prom-viewer', 'pass1234')],
    ];
    for (const [id, method, path, message, auth] of refused) {
      const res = await send(id, method, path, auth);
      expect([method, path, res.status, res.body]).toEqual([method, path, 403, { message }]);
    }
    expect(upstream.requests.length).toBe(before);
    for (const [id, method, path] of [
      [es.id, 'POST', '_msearch'], [es.id, 'GET', 'idx/_search'], [prom.id, 'POST', 'api/v1/query'], [prom.id, 'POST', 'api/v1/query_range'],
      [prom.id, 'GET', 'api/v1/label/__name__/values'], [prom.id, 'POST', 'rules'],
    ] as const) {
      expect([method, path, (await send(id, method, path)).status]).toEqual([method, path, 200]);
    }
    expect((await send(prom.id, 'POST', 'api/v1/series', basic('prom-viewer', 'pass1234'))).status).toBe(200);
  });
});

describe('request headers', () => {
  it('strips the caller\'s credentials and client headers, and injects the data source\'s', async () => {
    const ds = await createDs({
      name: 'headers', url: upstream.url, basicAuth: true, basicAuthUser: 'svc',
      secureJsonData: { basicAuthPassword: 'ds-secret', httpHeaderValue1: 'tenant-42', httpHeaderValue2: 'two' },
      jsonData: { httpHeaderName1: 'X-Scope-OrgID', httpHeaderName2: 'X-Second', keepCookies: ['JSESSION_ID', 'b_kept', 'grafana_session'] },
    });
    const res = await proxied(ds.id, 'h', {
      headers: {
        cookie: 'grafana_session=abc; JSESSION_ID=test; other=x; b_kept=2', origin: 'http://evil', referer: 'http://evil/page',
        'x-forwarded-host': 'h', 'x-forwarded-port': '1', 'x-forwarded-proto': 'https', 'x-forwarded-for': '10.1.1.1', 'x-canary': 'kept',
        'x-grafana-user': 'spoofed', 'x-scope-orgid': 'spoofed', 'proxy-authorization': 'Basic c3B5OnNweQ==', 'user-agent': 'curl/8',
      },
    });
    const seen = res.body.headers;
    expect(seen.authorization).toBe(`Basic ${Buffer.from('svc:ds-secret').toString('base64')}`);
    // Only listed cookies, never the login cookie even when listed, sorted by name.
    expect(seen.cookie).toBe('JSESSION_ID=test; b_kept=2');
    for (const name of ['origin', 'referer', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'x-grafana-user', 'proxy-authorization']) {
      expect([name, seen[name]]).toEqual([name, undefined]);
    }
    expect(seen['x-forwarded-for']).toBe('10.1.1.1, 127.0.0.1');
    expect(seen['x-scope-orgid']).toBe('tenant-42');
    expect(seen['x-second']).toBe('two');
    expect(seen['x-canary']).toBe('kept');
    expect(seen['user-agent']).toMatch(/^dashgate\/\d+\.\d+\.\d+/);
    expect(seen.host).toBe(`127.0.0.1:${upstream.port}`);
    // Without keepCookies no cookie at all goes through; X-Forwarded-For starts with the client.
    const plain = await createDs({ name: 'no-cookies', url: upstream.url });
    const bare = await proxied(plain.id, 'h', { headers: { cookie: 'JSESSION_ID=test; grafana_session=abc' } });
    expect(bare.body.headers.cookie).toBeUndefined();
    expect(bare.body.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('drops hop-by-hop headers, including those the client lists in Connection', async () => {
    const ds = await createDs({ name: 'hop', url: upstream.url });
    const res = await raw(`/api/datasources/proxy/${ds.id}/hop`, { connection: 'keep-alive, X-Hop-Secret', 'x-hop-secret': 'private', 'keep-alive': 'timeout=5', te: 'trailers', 'x-end-to-end': 'yes' });
    const seen = JSON.parse(res.body).headers;
    expect(seen['x-hop-secret']).toBeUndefined();
    expect(seen['keep-alive']).toBeUndefined();
    expect(seen.te).toBeUndefined();
    expect(seen['x-end-to-end']).toBe('yes');
    // The upstream connection is ours and kept alive, whatever the client asked for its own.
    expect(seen.connection).toBe('keep-alive');
  });

  it('moves X-DS-Authorization to Authorization and never forwards the caller\'s own', async () => {
    const ds = await createDs({ name: 'ds-auth', url: upstream.url });
    const res = await proxied(ds.id, 'h', { headers: { 'x-ds-authorization': 'Bearer upstream-token' } });
    expect(res.body.headers.authorization).toBe('Bearer upstream-token');
    expect(res.body.headers['x-ds-authorization']).toBeUndefined();
    const plain = await proxied(ds.id, 'h');
    expect(plain.body.headers.authorization).toBeUndefined();
  });

  it('sends user + password as Basic when basicAuth is off (any kind, influxdb included)', async () => {
    const influx = await createDs({ name: 'influx', type: 'influxdb', url: upstream.url, user: 'reader', secureJsonData: { password: 'influx-pw' } });
    expect((await proxied(influx.id, 'query')).body.headers.authorization).toBe(`Basic ${Buffer.from('reader:influx-pw').toString('base64')}`);
    const other = await createDs({ name: 'user-only', url: upstream.url, user: 'someone' });
    expect((await proxied(other.id, 'q')).body.headers.authorization).toBe(`Basic ${Buffer.from('someone:').toString('base64')}`);
    // basicAuth wins over user + password, and over X-DS-Authorization.
    const both = await createDs({ name: 'both', url: upstream.url, user: 'u', basicAuth: true, basicAuthUser: 'b', secureJsonData: { password: 'p', basicAuthPassword: 'bp' } });
    const res = await proxied(both.id, 'q', { headers: { 'x-ds-authorization': 'Bearer x' } });
    expect(res.body.headers.authorization).toBe(`Basic ${Buffer.from('b:bp').toString('base64')}`);
  });

  it('honours [dataproxy] send_user_header and user_agent, and [auth] login_cookie_name', async () => {
    const ds = await createDs({ name: 'settings', url: upstream.url, jsonData: { keepCookies: ['my_session', 'grafana_session'] } });
    const configured = await startTestServer({
      connection: server.connection,
      overrides: { dataproxy: { send_user_header: 'true', user_agent: 'Custom Agent/1.0' }, auth: { login_cookie_name: 'my_session' } },
    });
    try {
      const res = await proxied(ds.id, 'q', { headers: { cookie: 'my_session=s; grafana_session=g' } }, configured);
      expect(res.body.headers['x-grafana-user']).toBe('admin');
      expect(res.body.headers['user-agent']).toBe('Custom Agent/1.0');
      expect(res.body.headers.cookie).toBe('grafana_session=g');
      // Off by default.
      expect((await proxied(ds.id, 'q')).body.headers['x-grafana-user']).toBeUndefined();
    } finally {
      await configured.close();
    }
  });
});

describe('responses', () => {
  it('passes status, headers and body through, minus Set-Cookie, plus the sandbox CSP', async () => {
    const custom = await startUpstream((_req, res) => {
      res.writeHead(207, { 'content-type': 'application/x-custom', 'x-upstream': 'yes', 'set-cookie': ['a=1', 'b=2'], 'cache-control': 'max-age=60' });
      res.end('custom body');
    });
    try {
      const ds = await createDs({ name: 'custom', url: custom.url });
      const res = await proxied(ds.id, 'x');
      expect(res.status).toBe(207);
      expect(res.text).toBe('custom body');
      expect(res.headers.get('content-type')).toBe('application/x-custom');
      expect(res.headers.get('x-upstream')).toBe('yes');
      expect(res.headers.get('cache-control')).toBe('max-age=60');
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(res.headers.get('content-security-policy')).toBe('sandbox');
      // No API default headers on proxied answers (no-cache in particular).
      const echo = await proxied((await createDs({ name: 'no-cache', url: upstream.url })).id, 'x');
      expect(echo.headers.get('cache-control')).toBeNull();
      expect(echo.headers.get('pragma')).toBeNull();
      expect(echo.headers.get('expires')).toBeNull();
    } finally {
      await custom.close();
    }
  });

  it('drops every header with which a data source could set policy for our whole origin', async () => {
    // What an upstream could send to pin, wipe or open up dashgate's origin; hop-by-hop headers
    // are left out here because our own server sets its own connection headers.
    const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'trailer', 'te']);
    const hostile = [...STRIPPED_RESPONSE_HEADERS].filter((name) => !hopByHop.has(name));
    const sending = await startUpstream((_req, res) => {
      for (const name of hostile) res.setHeader(name, name === 'set-cookie' ? ['grafana_session=planted; Path=/', 'x=1'] : 'planted');
      res.setHeader('x-kept', 'yes');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('body');
    });
    try {
      const ds = await createDs({ name: 'hostile-headers', url: sending.url });
      const res = await proxied(ds.id, 'x');
      expect(res.status).toBe(200);
      expect(res.text).toBe('body');
      expect(hostile).toEqual(expect.arrayContaining(['strict-transport-security', 'set-cookie', 'alt-svc', 'clear-site-data', 'public-key-pins', 'expect-ct', 'service-worker-allowed']));
      const leaked = hostile.filter((name) => name !== 'content-security-policy' && res.headers.has(name));
      expect(leaked).toEqual([]);
      expect(res.headers.get('content-security-policy')).toBe('sandbox');
      expect(res.headers.get('x-kept')).toBe('yes');
      expect(sending.requests).toHaveLength(1);
    } finally {
      await sending.close();
    }
  });

  it('turns an upstream 401 into a plain-text 400', async () => {
    const denying = await startUpstream((_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Basic', 'content-type': 'application/json', 'set-cookie': 'x=1' });
      res.end('{"message":"upstream says no"}');
    });
    try {
      const ds = await createDs({ name: 'denying', url: denying.url });
      const res = await proxied(ds.id, 'x');
      expect(res.status).toBe(400);
      expect(res.text).toBe('Authentication to data source failed');
      expect(res.headers.get('content-type')).toBeNull();
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(res.headers.get('content-security-policy')).toBe('sandbox');
      // The keep-alive connection survives: the next call works.
      expect((await proxied(ds.id, 'again')).status).toBe(400);
    } finally {
      await denying.close();
    }
  });
});

describe('[dataproxy] logging', () => {
  it('logs method, path, kind and ids of each proxied call, never headers, bodies or secrets', async () => {
    const ds = await createDs({
      name: 'logged', type: 'prometheus', url: upstream.url, basicAuth: true, basicAuthUser: 'svc',
      secureJsonData: { basicAuthPassword: 'LOGGED-DS-SECRET', httpHeaderValue1: 'LOGGED-HEADER-SECRET' }, jsonData: { httpHeaderName1: 'X-Token' },
    });
    const logging = await startTestServer({ connection: server.connection, overrides: { dataproxy: { logging: 'true' } } });
    try {
      const res = await call(logging, 'POST', `/api/datasources/proxy/${ds.id}/api/v1/query?query=LOGGED-QUERY-SECRET`, {
        rawBody: 'query=LOGGED-BODY-SECRET', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-ds-authorization': 'Bearer LOGGED-CALLER-SECRET' },
      });
      expect(res.status).toBe(200);
      const line = logging.logs.find((l) => l.component === 'dataproxy' && l.msg === 'proxying request');
      expect(line).toMatchObject({ method: 'POST', uri: `/api/datasources/proxy/${ds.id}/api/v1/query`, dsType: 'prometheus', dsId: ds.id, userId: 1, orgId: 1 });
      const text = logging.logText();
      for (const secret of ['LOGGED-DS-SECRET', 'LOGGED-HEADER-SECRET', 'LOGGED-QUERY-SECRET', 'LOGGED-BODY-SECRET', 'LOGGED-CALLER-SECRET', Buffer.from('admin:admin').toString('base64')]) {
        expect([secret, text.includes(secret)]).toEqual([secret, false]);
      }
      // Off by default: the other instance logged no proxied call.
      await proxied(ds.id, 'api/v1/labels');
      expect(server.logs.some((l) => l.component === 'dataproxy' && l.msg === 'proxying request')).toBe(false);
    } finally {
      await logging.close();
    }
  });
});
