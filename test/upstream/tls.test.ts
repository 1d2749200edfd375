import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { call, startTestServer, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';
import { opensslAvailable, startTlsUpstream, TestPki, type KeyPair, type TlsUpstream } from '../support/tls.ts';

// Data sources behind HTTPS, through the proxy and the health checks, against real TLS servers on
// loopback with certificates made here by the openssl command.

const haveOpenssl = opensslAvailable();
if (!haveOpenssl) console.log('openssl not found: skipping the TLS upstream tests');
const describeTls = haveOpenssl ? describe : describe.skip;

let pki: TestPki;
let ca: KeyPair;
let otherCa: KeyPair;
let serverCert: KeyPair;
let clientA: KeyPair;
let clientB: KeyPair;
const upstreams: TlsUpstream[] = [];

beforeAll(() => {
  if (!haveOpenssl) return;
  pki = new TestPki();
  ca = pki.ca('test-ca');
  otherCa = pki.ca('other-ca');
  serverCert = pki.leaf(ca, 'server', { san: 'DNS:localhost,IP:127.0.0.1', usage: 'serverAuth' });
  clientA = pki.leaf(ca, 'client-a', { usage: 'clientAuth' });
  clientB = pki.leaf(ca, 'client-b', { usage: 'clientAuth' });
});
afterAll(async () => {
  for (const upstream of upstreams) await upstream.close();
  pki?.remove();
});

async function tlsUpstream(options: Parameters<typeof startTlsUpstream>[0]): Promise<TlsUpstream> {
  const upstream = await startTlsUpstream(options);
  upstreams.push(upstream);
  return upstream;
}

let seq = 0;
async function createDs(server: TestServer, url: string, jsonData: Record<string, unknown> = {}, secureJsonData: Record<string, string> = {}) {
  const res = await call(server, 'POST', '/api/datasources', { body: { name: `tls-${++seq}`, type: 'prometheus', access: 'proxy', url, jsonData, secureJsonData } });
  expect(res.status).toBe(200);
  return res.body.datasource as { id: number; uid: string; name: string };
}

const proxied = (server: TestServer, id: number, path = 'x') => call(server, 'GET', `/api/datasources/proxy/${id}/${path}`);
const health = (server: TestServer, uid: string) => call(server, 'GET', `/api/datasources/uid/${uid}/health`);

/** Every line of a PEM body (the base64 text), to look for in answers and logs. */
const pemLines = (pem: string) => pem.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'));

describeTls('TLS per data source', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ overrides: { dataproxy: { tls_handshake_timeout_seconds: '1' } } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('accepts a private CA only when it is configured, and a bundle of several', async () => {
    const upstream = await tlsUpstream({ cert: serverCert });
    const plain = await createDs(server, upstream.url);
    expect((await proxied(server, plain.id)).status).toBe(502);
    const refused = await health(server, plain.uid);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(`Post "${upstream.url}/api/v1/query": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
    // The proxy answers as the original (an empty 502) and logs what failed, without the URL.
    expect(server.logs).toContainEqual(expect.objectContaining({ msg: 'Proxy request failed', dsId: plain.id, status: 502, error: 'tls: failed to verify certificate: x509: certificate signed by unknown authority' }));

    // The CA sent without tlsAuthWithCACert is not used, as in the original.
    const unused = await createDs(server, upstream.url, {}, { tlsCACert: ca.cert });
    expect((await proxied(server, unused.id)).status).toBe(502);

    const trusted = await createDs(server, upstream.url, { tlsAuthWithCACert: true }, { tlsCACert: ca.cert });
    const res = await proxied(server, trusted.id);
    expect(res.status).toBe(200);
    expect(res.body.client).toBe('');
    expect(await health(server, trusted.uid)).toMatchObject({ status: 200, body: { status: 'OK' } });

    const bundle = await createDs(server, upstream.url, { tlsAuthWithCACert: true }, { tlsCACert: otherCa.cert + ca.cert });
    expect((await proxied(server, bundle.id)).status).toBe(200);

    // Another CA alone replaces the system roots and still does not vouch for this server.
    const wrongCa = await createDs(server, upstream.url, { tlsAuthWithCACert: true }, { tlsCACert: otherCa.cert });
    expect((await health(server, wrongCa.uid)).body.message).toContain('x509: certificate signed by unknown authority');
  });

  it('skips verification when told to', async () => {
    const upstream = await tlsUpstream({ cert: serverCert });
    const ds = await createDs(server, upstream.url, { tlsSkipVerify: true });
    expect((await proxied(server, ds.id)).status).toBe(200);
    expect(await health(server, ds.uid)).toMatchObject({ status: 200, body: { status: 'OK' } });
  });

  it('sends serverName as SNI and verifies the certificate against it', async () => {
    const named = pki.leaf(ca, 'named', { san: 'DNS:upstream.test', usage: 'serverAuth' });
    const upstream = await tlsUpstream({ cert: named });
    const byIp = await createDs(server, upstream.url, { tlsAuthWithCACert: true }, { tlsCACert: ca.cert });
    expect((await health(server, byIp.uid)).body.message).toContain("x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs");
    const wrong = await createDs(server, upstream.url, { tlsAuthWithCACert: true, serverName: 'wrong.test' }, { tlsCACert: ca.cert });
    expect((await health(server, wrong.uid)).body.message).toContain('tls: failed to verify certificate: x509: certificate is valid for upstream.test, not wrong.test');

    const ds = await createDs(server, upstream.url, { tlsAuthWithCACert: true, serverName: 'upstream.test' }, { tlsCACert: ca.cert });
    const res = await proxied(server, ds.id);
    expect(res.status).toBe(200);
    expect(res.body.servername).toBe('upstream.test');
    // The Host header still names the URL's host: only the TLS layer uses the server name.
    expect(res.body.headers.host).toBe(`127.0.0.1:${upstream.port}`);
  });

  it('says an expired certificate is expired', async () => {
    const expired = pki.leaf(ca, 'expired', { san: 'IP:127.0.0.1', usage: 'serverAuth', days: -1 });
    const upstream = await tlsUpstream({ cert: expired });
    const ds = await createDs(server, upstream.url, { tlsAuthWithCACert: true }, { tlsCACert: ca.cert });
    expect((await proxied(server, ds.id)).status).toBe(502);
    expect((await health(server, ds.uid)).body.message).toContain('tls: failed to verify certificate: x509: certificate has expired or is not yet valid');
  });

  it('refuses mutual TLS without the client certificate and passes with it, each data source on its own connections', async () => {
    const upstream = await tlsUpstream({ cert: serverCert, clientCa: ca.cert });
    const without = await createDs(server, upstream.url, { tlsAuthWithCACert: true }, { tlsCACert: ca.cert });
    expect((await proxied(server, without.id)).status).toBe(502);
    const refused = await health(server, without.uid);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/remote error: tls: (certificate required|bad certificate|handshake failure)/);

    const a = await createDs(server, upstream.url, { tlsAuthWithCACert: true, tlsAuth: true }, { tlsCACert: ca.cert, tlsClientCert: clientA.cert, tlsClientKey: clientA.key });
    const b = await createDs(server, upstream.url, { tlsAuthWithCACert: true, tlsAuth: true }, { tlsCACert: ca.cert, tlsClientCert: clientB.cert, tlsClientKey: clientB.key });
    // Interleaved and concurrent: a pooled socket of one never carries a call of the other.
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all([proxied(server, a.id), proxied(server, b.id), proxied(server, a.id), proxied(server, b.id)]);
      expect(answers.map((r) => [r.status, r.body.client])).toEqual([[200, 'client-a'], [200, 'client-b'], [200, 'client-a'], [200, 'client-b']]);
    }
    expect(await health(server, a.uid)).toMatchObject({ status: 200, body: { status: 'OK' } });
  });

  it('answers a handshake that never ends with the original words: 504 from the proxy, a 400 health answer', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const ds = await createDs(server, url, { tlsSkipVerify: true });
      const started = Date.now();
      expect((await proxied(server, ds.id)).status).toBe(504);
      const answer = await health(server, ds.uid);
      expect(Date.now() - started).toBeLessThan(8000);
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain(`Post "${url}/api/v1/query": net/http: TLS handshake timeout`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('keeps the PEM secrets out of every answer and log line', async () => {
    const upstream = await tlsUpstream({ cert: serverCert, clientCa: ca.cert });
    const ds = await createDs(server, upstream.url, { tlsAuthWithCACert: true, tlsAuth: true }, { tlsCACert: ca.cert, tlsClientCert: clientA.cert, tlsClientKey: clientA.key });
    const answers = [
      await call(server, 'GET', `/api/datasources/${ds.id}`),
      await call(server, 'GET', '/api/datasources'),
      await call(server, 'GET', `/api/datasources/uid/${ds.uid}`),
      await proxied(server, ds.id),
      await health(server, ds.uid),
    ];
    expect(answers[0]!.body.secureJsonFields).toEqual({ tlsCACert: true, tlsClientCert: true, tlsClientKey: true });
    const stored = await server.sql<{ secure_json_data: Record<string, string> }>('select secure_json_data from data_source where id = $1', [ds.id]);
    const seen = [...answers.map((a) => a.text), server.logText(), JSON.stringify(stored)].join('\n');
    for (const line of [...pemLines(clientA.key), ...pemLines(clientA.cert), ...pemLines(ca.cert)]) expect(seen).not.toContain(line);
  });
});

describeTls('TLS material rotated in place', () => {
  let first: TestServer;
  let second: TestServer;
  twoInstances((a, b) => ([first, second] = [a, b]));

  it('takes effect on the next call on every instance, and closes the old connections', async () => {
    const upstream = await tlsUpstream({ cert: serverCert, clientCa: ca.cert });
    const tls = (client: KeyPair) => ({ tlsCACert: ca.cert, tlsClientCert: client.cert, tlsClientKey: client.key });
    const ds = await createDs(first, upstream.url, { tlsAuthWithCACert: true, tlsAuth: true }, tls(clientA));
    for (const server of [first, second]) expect((await proxied(server, ds.id)).body.client).toBe('client-a');
    expect(upstream.connections.open).toBe(2);

    const res = await call(first, 'PUT', `/api/datasources/${ds.id}`, {
      body: { name: ds.name, type: 'prometheus', access: 'proxy', url: upstream.url, jsonData: { tlsAuthWithCACert: true, tlsAuth: true }, secureJsonData: tls(clientB) },
    });
    expect(res.status).toBe(200);
    for (const server of [second, first]) expect((await proxied(server, ds.id)).body.client).toBe('client-b');
    // The pools of the old material were retired on both instances: only the new connections stay.
    const deadline = Date.now() + 3000;
    while (upstream.connections.open !== 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(upstream.connections).toEqual({ total: 4, open: 2 });
  });
});
