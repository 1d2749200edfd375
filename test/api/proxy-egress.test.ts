import { lookup, type LookupAddress } from 'node:dns';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LookupFunction } from '../../src/upstream/address.ts';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// Where the proxy may connect ([security] whitelist and deny_private) and where inside the data
// source a call may go (path safety), through real HTTP against a loopback upstream that counts
// every connection it accepts.

/** DNS with one addition: `*.loop.test` names answer 127.0.0.1 (a name that resolves to loopback). */
const lookups: string[] = [];
const fakeDns: LookupFunction = (hostname, options, callback) => {
  lookups.push(hostname);
  if (!hostname.endsWith('.loop.test')) {
    lookup(hostname, options, callback as never);
    return;
  }
  const answer: LookupAddress = { address: '127.0.0.1', family: 4 };
  if (options.all) callback(null, [answer]);
  else callback(null, answer.address, answer.family);
};

let open: TestServer;
let guarded: TestServer;
let listed: TestServer;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  open = await startTestServer({ app: { proxyResolver: fakeDns } });
  [guarded, listed] = await Promise.all([
    startTestServer({ connection: open.connection, app: { proxyResolver: fakeDns }, overrides: { security: { data_source_proxy_deny_private: 'true' } } }),
    startTestServer({ connection: open.connection, overrides: { security: { data_source_proxy_whitelist: 'allowed.example:80 other.example:8080' } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([guarded.close(), listed.close()]);
  await open.close();
  await upstream.close();
});

async function createDs(body: Record<string, unknown>): Promise<{ id: number; uid: string }> {
  const res = await call(open, 'POST', '/api/datasources', { body: { access: 'proxy', type: 'loki', ...body } });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

describe('[security] data_source_proxy_deny_private', () => {
  it('refuses loopback, private, link-local and metadata targets with zero connections, by IP or by name', async () => {
    const targets = [
      upstream.url,
      `http://localhost:${upstream.port}`,
      `http://upstream.loop.test:${upstream.port}`, // only the resolved address says it is loopback
      `http://[::1]:${upstream.port}`,
      `http://[::ffff:127.0.0.1]:${upstream.port}`,
      `http://2130706433:${upstream.port}`, // 127.0.0.1 in the URL parser's decimal form
      `http://0x7f.1:${upstream.port}`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1:9090',
      'http://192.168.1.1',
      'http://[fd00:ec2::254]',
      'http://0.0.0.0:9090',
    ];
    const created = [];
    for (const [i, url] of targets.entries()) created.push({ url, ...(await createDs({ name: `private-${i}`, url })) });
    const before = upstream.connections.total;
    lookups.length = 0;
    for (const { url, id, uid } of created) {
      const res = await call(guarded, 'GET', `/api/datasources/proxy/${id}/api/v1/query`);
      expect([url, res.status, res.body]).toEqual([url, 403, { message: 'Data proxy target address is not allowed' }]);
      const write = await call(guarded, 'POST', `/api/datasources/proxy/uid/${uid}/write`, { rawBody: 'x', headers: { 'content-type': 'text/plain' } });
      expect([url, write.status]).toEqual([url, 403]);
    }
    expect(upstream.connections.total).toBe(before);
    // The name was refused on its resolved address (the guarded lookup ran), not on its spelling.
    expect(lookups).toContain('upstream.loop.test');
    // The loopback ones are reachable: where the policy is off they are served.
    // (The upstream listens on 127.0.0.1 only, so the IPv6 forms are left out.)
    for (const { url, id } of created.filter((t) => t.url.includes(`:${upstream.port}`) && !t.url.includes('['))) {
      expect([url, (await call(open, 'GET', `/api/datasources/proxy/${id}/x`)).status]).toEqual([url, 200]);
    }
  });
});

describe('[security] data_source_proxy_whitelist', () => {
  it('refuses hosts that are not listed, before any per-kind rule, and lets listed ones through', async () => {
    const notListed = await createDs({ name: 'not-listed', type: 'elasticsearch', url: upstream.url });
    const before = upstream.connections.total;
    for (const method of ['GET', 'DELETE']) {
      const res = await call(listed, method, `/api/datasources/proxy/${notListed.id}/x`);
      expect([method, res.status, res.body]).toEqual([method, 403, { message: 'Data proxy hostname and ip are not included in whitelist' }]);
    }
    expect(upstream.connections.total).toBe(before);
    const whitelisted = await startTestServer({ connection: open.connection, overrides: { security: { data_source_proxy_whitelist: `127.0.0.1:${upstream.port}` } } });
    try {
      expect((await call(whitelisted, 'GET', `/api/datasources/proxy/${notListed.id}/x`)).status).toBe(200);
      // A default port is the same as none: `allowed.example:80` covers `http://allowed.example`.
      const defaultPort = await createDs({ name: 'default-port', url: 'http://allowed.example/' });
      const res = await call(listed, 'GET', `/api/datasources/proxy/${defaultPort.id}/x`);
      expect(res.body).not.toEqual({ message: 'Data proxy hostname and ip are not included in whitelist' });
    } finally {
      await whitelisted.close();
    }
  });
});

/** A GET with the path sent byte for byte (fetch and URL would resolve the dots before sending). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: Number(new URL(open.url).port), path, headers: { authorization: ADMIN } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

describe('path safety', () => {
  const corpus = [
    '..', '../secret', 'a/../../secret', 'a/b/../../../secret', './x', 'a/./b', '.', 'a/..',
    '%2e%2e/secret', '%2E%2E%2Fsecret', '..%2fsecret', '.%2e/secret', '%2e./secret', 'a/%2e%2e/%2e%2e/x', '%2e/x',
    '%252e%252e/secret', '%25252e%25252e/secret', '%252e%252e%252fsecret', 'a%2f..%2f..%2fsecret', '%2F..%2Fsecret',
    'a//b', '%2F%2Fevil', '%2Fabs', 'a%2F%2Fb', '%2Ftest%2Ftest%2F',
    '..\\secret', 'a\\..\\..\\secret', '%5c..%5csecret', '..%5csecret', '%255c..%255csecret',
    '..;/secret', 'a/..;/..;/secret', '..%20/secret', '..%20%20/secret',
    'a%00b', '..%00/secret', 'a%0d%0aX-Injected:%201', '%c0%ae%c0%ae/secret', '%e0%80%ae%e0%80%ae/secret',
    '%ef%bc%8e%ef%bc%8e/secret', '%ef%bc%8e%ef%bc%8e%ef%bc%8fsecret', '..%ef%bc%8fsecret', 'a%zz', '%',
  ];

  it('answers 400 to every traversal form, and the upstream never sees one', async () => {
    const ds = await createDs({ name: 'jail', url: `${upstream.url}/jail/` });
    const before = upstream.requests.length;
    for (const path of corpus) {
      for (const prefix of [`/api/datasources/proxy/${ds.id}/`, `/api/datasources/proxy/uid/${ds.uid}/`]) {
        const res = await rawGet(prefix + path);
        expect([path, res.status, res.body]).toEqual([path, 400, JSON.stringify({ message: 'invalid proxy path' })]);
      }
    }
    expect(upstream.requests.slice(before)).toEqual([]);
  });

  it('forwards ordinary paths unchanged, inside the base path', async () => {
    const ds = await createDs({ name: 'jail-ok', url: `${upstream.url}/jail/` });
    const fine = ['api/v1/query', 'a.b/c..d', '...', 'a/.hidden', '_msearch', 'trailing/', 'x%2Fy', 'q%20with%20space', 'caf%C3%A9', 'a;b=c', '~user/x'];
    for (const path of fine) {
      const res = await rawGet(`/api/datasources/proxy/${ds.id}/${path}?p=..%2F..`);
      expect([path, res.status]).toEqual([path, 200]);
      expect(JSON.parse(res.body).url).toBe(`/jail/${path}?p=..%2F..`);
    }
    for (const record of upstream.requests) expect(record.url.startsWith('/jail/') || !record.url.includes('jail')).toBe(true);
  });
});
