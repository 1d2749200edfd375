import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { storeDataSource } from '../support/stored-data-source.ts';
import { TestPki, type KeyPair } from '../support/tls.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// TLS material stored as the original stores it, whether or not it parses (a file path as the
// Ansible collection sends it, garbage, a key where a certificate belongs), reported where it is
// used: health 400, the proxy 502, a refId's error, resources 502, each naming the field and what
// is wrong with it; never a 500, never the material itself in an answer or a log line. The data
// sources are written straight into the table, as any write path could have stored them.

let server: TestServer;
let pki: TestPki;
let client: KeyPair;
let upstream: Upstream;
const CA_PATH = '/etc/ssl/certs/ca.pem';
const PATH_PROBLEM = "the data source's TLS settings are unusable: secureJsonData.tlsCACert holds no PEM certificate: it looks like a file path, and the certificate's PEM text is expected";

beforeAll(async () => {
  pki = new TestPki();
  client = pki.leaf(pki.ca('material-ca'), 'material-client', { usage: 'clientAuth' });
  [server, upstream] = await Promise.all([startTestServer(), startUpstream()]);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await upstream?.close();
  pki?.remove();
});

const httpsUrl = () => `https://127.0.0.1:${upstream.port}`;

describe('TLS material that does not parse, where it is used', () => {
  it('a CA certificate given as a file path: every face names the field and the problem', async () => {
    const before = upstream.connections.total;
    const prom = await storeDataSource(server, { type: 'prometheus', url: httpsUrl(), jsonData: { tlsAuthWithCACert: true } }, { tlsCACert: CA_PATH });

    const health = await call(server, 'GET', `/api/datasources/uid/${prom.uid}/health`);
    expect([health.status, health.body]).toEqual([400, { message: PATH_PROBLEM, status: 'ERROR' }]);

    const proxied = await call(server, 'GET', `/api/datasources/proxy/uid/${prom.uid}/api/v1/labels`);
    expect([proxied.status, proxied.headers.get('content-type'), proxied.body]).toEqual([502, 'application/json', { message: PATH_PROBLEM }]);

    const queried = await call(server, 'POST', '/api/ds/query', { body: { from: '1700000000000', to: '1700000300000', queries: [{ refId: 'A', datasource: { uid: prom.uid }, expr: '1', instant: true }] } });
    expect(queried.status).toBe(400);
    expect(queried.body.results.A).toMatchObject({ error: PATH_PROBLEM, errorSource: 'downstream', status: 502 });

    const resource = await call(server, 'GET', `/api/datasources/uid/${prom.uid}/resources/api/v1/labels`);
    expect([resource.status, resource.body]).toEqual([502, { message: PATH_PROBLEM }]);

    const graph = await gql(server, 'query($uid: String!, $q: [JSONObject!]!) { currentOrganization { dataSource(uid: $uid) { health { status message } } } currentOrganization { dataSource(uid: $uid) { query(queries: $q) { results { error status } } } } }',
      { uid: prom.uid, q: [{ refId: 'A', expr: '1', instant: true }] });
    expect(graph.body).toEqual({ data: { currentOrganization: { dataSource: { health: { status: 'ERROR', message: PATH_PROBLEM }, query: { results: [{ error: PATH_PROBLEM, status: 502 }] } } } } });

    // No connection was ever opened for it, and the path itself is nowhere.
    expect(upstream.connections.total).toBe(before);
    for (const text of [health.text, proxied.text, queried.text, resource.text, JSON.stringify(graph.body), server.logText()]) expect(text).not.toContain(CA_PATH);
  });

  it('garbage, a key where a certificate belongs, a certificate where the key belongs: named, never quoted', async () => {
    const pemLines = [...client.key.split('\n'), ...client.cert.split('\n')].filter((line) => line.length > 20 && !line.startsWith('-----'));
    const cases: Array<[string, Record<string, unknown>, Record<string, string>, string]> = [
      ['loki', { tlsAuthWithCACert: true }, { tlsCACert: 'garbage' }, 'secureJsonData.tlsCACert holds no PEM certificate'],
      ['prometheus', { tlsAuthWithCACert: true }, { tlsCACert: client.key }, 'secureJsonData.tlsCACert holds a private key where a PEM certificate belongs'],
      ['loki', { tlsAuth: true }, { tlsClientCert: client.cert, tlsClientKey: client.cert }, 'secureJsonData.tlsClientKey holds a certificate where a PEM private key belongs'],
      ['elasticsearch', { tlsAuth: true }, { tlsClientCert: 'C:\\certs\\client.crt', tlsClientKey: client.key }, "secureJsonData.tlsClientCert holds no PEM certificate: it looks like a file path, and the certificate's PEM text is expected"],
    ];
    for (const [type, jsonData, secrets, problem] of cases) {
      const ds = await storeDataSource(server, { type, url: httpsUrl(), jsonData }, secrets);
      const message = `the data source's TLS settings are unusable: ${problem}`;
      const health = await call(server, 'GET', `/api/datasources/${ds.id}/health`);
      expect([type, health.status, health.body]).toEqual([type, 400, { message, status: 'ERROR' }]);
      const proxied = await call(server, 'GET', `/api/datasources/proxy/${ds.id}/x`);
      expect([type, proxied.status, proxied.body]).toEqual([type, 502, { message }]);
      for (const text of [health.text, proxied.text]) for (const line of pemLines) expect(text).not.toContain(line);
    }
    for (const line of pemLines) expect(server.logText()).not.toContain(line);
  });

  it('over http the TLS settings are not read, as the original does not read them', async () => {
    const plain = await storeDataSource(server, { type: 'loki', url: upstream.url, jsonData: { tlsAuthWithCACert: true } }, { tlsCACert: CA_PATH });
    expect((await call(server, 'GET', `/api/datasources/proxy/uid/${plain.uid}/x`)).status).toBe(200);
  });
});
