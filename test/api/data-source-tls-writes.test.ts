import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, gql, startTestServer, type TestServer } from '../support/server.ts';

/**
 * TLS material that does not parse is stored as sent, as the original stores it (it validates
 * nothing at write time): the same 200 and body as for good material, encrypted at rest like any
 * secret. What it does where it is used is the upstream layer's (health, proxy, queries).
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  // The org's first data source becomes its default; the collection's runs create others first.
  await call(server, 'POST', '/api/datasources', { body: { name: 'first', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:1' } });
});
afterAll(async () => {
  await server.close();
});

const PATH = '/etc/ssl/certs/ca.pem';
const KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const keyLines = KEY.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'));

/** The body the Ansible collection's grafana_datasource module builds for its elasticsearch test. */
function ansibleElastic(name: string, url: string) {
  return {
    name, type: 'elasticsearch', access: 'proxy', url, database: '[logstash_]YYYY.MM.DD', basicAuth: true, basicAuthUser: 'grafana',
    isDefault: false, withCredentials: false, user: '',
    jsonData: { tlsAuth: false, tlsAuthWithCACert: true, esVersion: 56, interval: 'Daily', maxConcurrentShardRequests: 42, timeField: '@timestamp', timeInterval: '1m' },
    secureJsonData: { basicAuthPassword: '******', tlsCACert: PATH },
  };
}

describe('TLS material that is no PEM', () => {
  it('is stored as the Ansible collection writes it: a CA path becomes secureJsonData.tlsCACert, the answer carries jsonData.tlsAuthWithCACert', async () => {
    // state=present: the module looks the data source up by name (404), creates it, then reads it.
    expect((await call(server, 'GET', '/api/datasources/name/datasource-elastic')).status).toBe(404);
    const created = await call(server, 'POST', '/api/datasources', { body: ansibleElastic('datasource-elastic', 'https://elastic.company.com:9200') });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['datasource', 'id', 'message', 'name']);
    expect(created.body).toMatchObject({ message: 'Datasource added', name: 'datasource-elastic' });
    const ds = created.body.datasource;
    expect(ds).toMatchObject({
      basicAuth: true, basicAuthUser: 'grafana', access: 'proxy', database: '[logstash_]YYYY.MM.DD', isDefault: false, name: 'datasource-elastic',
      orgId: 1, password: '', type: 'elasticsearch', url: 'https://elastic.company.com:9200', user: '', withCredentials: false,
      jsonData: { tlsAuth: false, tlsAuthWithCACert: true, esVersion: 56, interval: 'Daily', maxConcurrentShardRequests: 42, timeField: '@timestamp' },
      secureJsonFields: { basicAuthPassword: true, tlsCACert: true },
    });
    const read = await call(server, 'GET', '/api/datasources/name/datasource-elastic');
    expect(read.body.jsonData.tlsAuthWithCACert).toBe(true);
    expect(read.body.secureJsonFields).toEqual({ basicAuthPassword: true, tlsCACert: true });

    // Encrypted at rest like any secret: the path is nowhere in the row.
    const [row] = await server.sql<{ secure_json_data: Record<string, string> }>('select secure_json_data from data_source where id = $1', [ds.id]);
    expect(Object.keys(row!.secure_json_data).sort()).toEqual(['basicAuthPassword', 'tlsCACert']);
    expect(JSON.stringify(row)).not.toContain('ca.pem');

    // The update the module sends next (another URL, the same path) is taken as well.
    const updated = await call(server, 'PUT', `/api/datasources/${ds.id}`, { body: ansibleElastic('datasource-elastic', 'https://elastic.example.com:9200') });
    expect([updated.status, updated.body.message]).toEqual([200, 'Datasource updated']);
    expect(updated.body.datasource).toMatchObject({ url: 'https://elastic.example.com:9200', jsonData: { tlsAuthWithCACert: true }, secureJsonFields: { tlsCACert: true } });
    expect((await call(server, 'DELETE', '/api/datasources/name/datasource-elastic')).status).toBe(200);
  });

  it('answers garbage, a path and a key where a certificate belongs exactly as it answers good material', async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['ca-path', { tlsCACert: PATH }],
      ['ca-garbage', { tlsCACert: 'not a certificate at all' }],
      ['ca-truncated', { tlsCACert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }],
      ['ca-is-a-key', { tlsCACert: KEY }],
      ['client-cert-is-a-key', { tlsClientCert: KEY, tlsClientKey: KEY }],
      ['client-key-garbage', { tlsClientCert: PATH, tlsClientKey: 'junk' }],
    ];
    const plain = await call(server, 'POST', '/api/datasources', { body: { name: 'tls-plain', type: 'prometheus', access: 'proxy', url: 'https://127.0.0.1:1' } });
    for (const [name, secureJsonData] of cases) {
      const jsonData = { tlsAuth: 'tlsClientCert' in secureJsonData, tlsAuthWithCACert: 'tlsCACert' in secureJsonData };
      const res = await call(server, 'POST', '/api/datasources', { body: { name: `tls-${name}`, type: 'prometheus', access: 'proxy', url: 'https://127.0.0.1:1', jsonData, secureJsonData } });
      expect([name, res.status, res.body.message]).toEqual([name, 200, 'Datasource added']);
      expect(Object.keys(res.body)).toEqual(Object.keys(plain.body));
      expect(Object.keys(res.body.datasource)).toEqual(Object.keys(plain.body.datasource));
      expect(res.body.datasource.jsonData).toEqual(jsonData);
      expect(res.body.datasource.secureJsonFields).toEqual(Object.fromEntries(Object.keys(secureJsonData).map((k) => [k, true])));
      expect(res.text).not.toContain(keyLines[0]);
      // An update with it is taken too.
      const again = await call(server, 'PUT', `/api/datasources/uid/${res.body.datasource.uid}`, { body: { name: `tls-${name}`, type: 'prometheus', access: 'proxy', url: 'https://127.0.0.1:2', jsonData, secureJsonData } });
      expect([name, again.status, again.body.message]).toEqual([name, 200, 'Datasource updated']);
      // What was written so is then reported where it is used, naming the field (the first unusable one).
      const health = await call(server, 'GET', `/api/datasources/uid/${res.body.datasource.uid}/health`);
      const field = 'tlsCACert' in secureJsonData ? 'tlsCACert' : 'tlsClientCert';
      expect([name, health.status, health.body.status]).toEqual([name, 400, 'ERROR']);
      expect(health.body.message).toMatch(new RegExp(`^the data source's TLS settings are unusable: secureJsonData\\.${field} holds `));
      expect(health.text).not.toContain(keyLines[0]);
      expect(health.text).not.toContain(PATH);
    }
    const stored = await server.sql('select secure_json_data from data_source');
    expect(JSON.stringify(stored)).not.toContain(keyLines[0]);
    expect(JSON.stringify(stored)).not.toContain('not a certificate');
    expect(server.logText()).not.toContain(keyLines[0]);
  });

  it('is taken by the graph\'s mutations too, with a warning naming the field in the payload', async () => {
    const create = await gql(server, `mutation($input: CreateDataSourceInput!) {
      dataSourceCreate(input: $input) { dataSource { name secureJsonFields jsonData } userErrors { message } warnings { field message } } }`,
    { input: { name: 'tls-graph', type: 'prometheus', access: 'proxy', url: 'https://127.0.0.1:1', jsonData: { tlsAuthWithCACert: true }, secureJsonData: { tlsCACert: PATH } } });
    expect(create.body.errors).toBeUndefined();
    expect(create.body.data.dataSourceCreate).toEqual({
      dataSource: { name: 'tls-graph', secureJsonFields: { tlsCACert: true }, jsonData: { tlsAuthWithCACert: true } },
      userErrors: [],
      warnings: [{ field: 'secureJsonData.tlsCACert', message: 'secureJsonData.tlsCACert: no PEM-encoded certificate found (it looks like a file path: the PEM text itself is expected)' }],
    });
    const id = (await gql(server, '{ viewer { currentOrganization { dataSource(name: "tls-graph") { id } } } }')).body.data.viewer.currentOrganization.dataSource.id;
    const update = await gql(server, `mutation($id: ID!, $input: UpdateDataSourceInput!) {
      dataSourceUpdate(id: $id, input: $input) { dataSource { name } userErrors { message } warnings { field message } } }`,
    { id, input: { name: 'tls-graph', type: 'prometheus', access: 'proxy', url: 'https://127.0.0.1:1', secureJsonData: { tlsClientCert: KEY, tlsClientKey: KEY } } });
    expect(update.body.data.dataSourceUpdate).toEqual({
      dataSource: { name: 'tls-graph' }, userErrors: [],
      warnings: [{ field: 'secureJsonData.tlsClientCert', message: 'secureJsonData.tlsClientCert: no PEM-encoded certificate found' }],
    });
    expect(update.text).not.toContain(keyLines[0]);
    // Good or absent material: no warning.
    const clean = await gql(server, `mutation($id: ID!, $input: UpdateDataSourceInput!) { dataSourceUpdate(id: $id, input: $input) { warnings { field } } }`,
      { id, input: { name: 'tls-graph', type: 'prometheus', access: 'proxy', url: 'https://127.0.0.1:1', secureJsonData: { basicAuthPassword: 'x' } } });
    expect(clean.body.data.dataSourceUpdate.warnings).toEqual([]);
  });
});
