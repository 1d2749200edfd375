import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { COMMIT, VERSION } from '../../src/version.ts';
import { basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';

// GET /api/frontend/settings as client libraries read it: grafana-client's connect() takes
// buildInfo.version (and gates features on it), front ends take the data sources keyed by name.

let server: TestServer;
let viewer: string;

beforeAll(async () => {
  server = await startTestServer({ overrides: { server: { root_url: 'https://dash.example.com/monitoring/', compatible_version: '11.6.1' }, users: { allow_sign_up: 'true' } } });
  const created = await call(server, 'POST', '/api/admin/users', { body: { login: 'fs-viewer', password: 'viewer-pass-1' } });
  expect(created.status).toBe(200);
  viewer = basic('fs-viewer', 'viewer-pass-1');
});
afterAll(() => server.close());

describe('GET /api/frontend/settings', () => {
  it('answers buildInfo, appUrl and appSubUrl, in the original\'s field order', async () => {
    const res = await call(server, 'GET', '/api/frontend/settings');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([
      'defaultDatasource', 'datasources', 'minRefreshInterval', 'appUrl', 'appSubUrl', 'allowOrgCreate', 'authProxyEnabled', 'ldapEnabled',
      'autoAssignOrg', 'verifyEmailEnabled', 'rbacEnabled', 'disableLoginForm', 'disableUserSignUp', 'buildInfo', 'licenseInfo',
      'featureToggles', 'anonymousEnabled',
    ]);
    expect(res.body.buildInfo).toEqual({
      hideVersion: false,
      version: '11.6.1',
      versionString: `dashgate v${VERSION} (${COMMIT.slice(0, 10)})`,
      commit: COMMIT,
      commitShort: COMMIT.slice(0, 10),
      buildstamp: 0,
      edition: 'Open Source',
      latestVersion: '',
      hasUpdate: false,
      env: 'production',
    });
    expect(res.body).toMatchObject({
      appUrl: 'https://dash.example.com/monitoring/', appSubUrl: '/monitoring', allowOrgCreate: true, disableUserSignUp: false,
      defaultDatasource: '-- Grafana --', minRefreshInterval: '5s',
    });
    // What grafana-client's `.version` makes of it: everything before the first "-".
    expect(res.body.buildInfo.version.split('-')[0]).toBe('11.6.1');
    // The trailing slash of the original's path is accepted too.
    expect((await call(server, 'GET', '/api/frontend/settings/')).status).toBe(200);
  });

  it('lists the caller\'s org\'s data sources by name with the built-ins, and never a secret', async () => {
    const create = (body: Record<string, unknown>) => call(server, 'POST', '/api/datasources', { body });
    expect((await create({
      name: 'Prom', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', isDefault: true, basicAuth: true, basicAuthUser: 'u',
      secureJsonData: { basicAuthPassword: 'prom-secret-pw' }, jsonData: { httpMethod: 'POST' },
    })).status).toBe(200);
    expect((await create({
      name: 'Influx direct', type: 'influxdb', access: 'direct', url: 'http://influx:8086', database: 'telegraf', user: 'reader',
      basicAuth: true, basicAuthUser: 'b', withCredentials: true, secureJsonData: { password: 'influx-secret-pw', basicAuthPassword: 'influx-basic-pw' },
    })).status).toBe(200);
    expect((await create({ name: 'pg', type: 'postgres', access: 'proxy', url: 'db:5432', database: 'metrics' })).status).toBe(200);

    const res = await call(server, 'GET', '/api/frontend/settings', { auth: viewer });
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(/secret-pw|basic-pw/);
    const { datasources, defaultDatasource } = res.body;
    // A Go map: keys sorted.
    expect(Object.keys(datasources)).toEqual(['-- Dashboard --', '-- Grafana --', '-- Mixed --', 'Influx direct', 'Prom', 'pg']);
    expect(defaultDatasource).toBe('Prom');
    const [prom] = await server.sql<{ id: number; uid: string }>(`select id, uid from data_source where name = 'Prom'`);
    expect(datasources.Prom).toEqual({
      id: prom!.id,
      uid: prom!.uid,
      type: 'prometheus',
      name: 'Prom',
      meta: { id: 'prometheus', type: 'datasource', name: 'Prometheus', info: { logos: { small: expect.any(String), large: expect.any(String) } } },
      url: `/api/datasources/proxy/uid/${prom!.uid}`,
      isDefault: true,
      access: 'proxy',
      preload: false,
      jsonData: { httpMethod: 'POST', directUrl: 'http://prom:9090' },
      readOnly: false,
    });
    // Direct access keeps the store's URL; unlike the original, no credentials are handed out.
    expect(datasources['Influx direct']).toMatchObject({ url: 'http://influx:8086', access: 'direct', withCredentials: true, database: 'telegraf' });
    expect(datasources['Influx direct']).not.toHaveProperty('basicAuth');
    expect(datasources['Influx direct']).not.toHaveProperty('password');
    expect(datasources.pg.jsonData).toEqual({ database: 'metrics' });
    expect(datasources['-- Grafana --']).toEqual({
      id: -1, uid: 'grafana', type: 'datasource', name: '-- Grafana --', meta: { id: 'grafana', type: 'datasource', name: '-- Grafana --', builtIn: true },
      isDefault: false, preload: false, jsonData: {}, readOnly: false,
    });
  });

  it('shows a caller with no role in the org only the built-ins; refuses anonymous callers', async () => {
    const [user] = await server.sql<{ id: number }>(`select id from "user" where login = 'fs-viewer'`);
    await server.sql('delete from org_user where user_id = $1', [user!.id]);
    const res = await call(server, 'GET', '/api/frontend/settings', { auth: viewer });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.datasources)).toEqual(['-- Dashboard --', '-- Grafana --', '-- Mixed --']);
    expect(res.body.defaultDatasource).toBe('-- Grafana --');
    expect(res.body.allowOrgCreate).toBe(false);
    expect((await call(server, 'GET', '/api/frontend/settings', { auth: null })).status).toBe(401);
  });

  it('is a GraphQL query with the same values', async () => {
    const rest = (await call(server, 'GET', '/api/frontend/settings')).body;
    const res = await gql(server, '{ frontendSettings { appSubUrl defaultDatasource datasources buildInfo { version commit env } } }');
    expect(res.body.data).toEqual({
      frontendSettings: {
        appSubUrl: rest.appSubUrl, defaultDatasource: rest.defaultDatasource, datasources: rest.datasources,
        buildInfo: { version: rest.buildInfo.version, commit: rest.buildInfo.commit, env: rest.buildInfo.env },
      },
    });
  });
});
