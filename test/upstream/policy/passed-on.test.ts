import { describe, expect, it } from '@jest/globals';
import type { IncomingHttpHeaders } from 'node:http';
import { forwardedHeaders, STRIPPED_REQUEST_HEADERS } from '../../../src/upstream/headers.ts';
import { HOP_BY_HOP } from '../../../src/upstream/policy/hop-by-hop.ts';
import { checkPassedOn } from '../../../src/upstream/policy/rules.ts';
import { prepareTarget } from '../../../src/upstream/target.ts';
import type { HeldRole } from '../../../src/roles.ts';

// The one rule for a client's request passed on to a data source, whether through the proxy or a
// data source's resources: which methods and paths each type allows to whom, which paths may leave
// the data source's URL, and what the data source is told.

const BAD_PATH = { status: 400, message: 'invalid proxy path' };
const PROM_POST = { status: 403, message: 'non allow-listed POSTs not allowed on proxied Prometheus datasource' };
const PROM_PUT = { status: 403, message: 'non allow-listed PUTs not allowed on proxied Prometheus datasource' };
const PROM_DELETE = { status: 403, message: 'non allow-listed DELETEs not allowed on proxied Prometheus datasource' };
const ROUTE_DENIED = { status: 403, message: 'plugin proxy route access denied' };
const ES_POST = { status: 403, message: 'posts not allowed on proxied Elasticsearch datasource except on /_msearch' };

describe('checkPassedOn: methods and paths per type and role', () => {
  const table: Array<[type: string, method: string, path: string, role: HeldRole, expected: { status: number; message: string } | null]> = [
    // What a Viewer's Prometheus resources may do: read anything, POST the query routes.
    ['prometheus', 'GET', 'api/v1/status/buildinfo', 'Viewer', null],
    ['prometheus', 'GET', 'api/v1/label/job/values', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/query', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/labels', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/series', 'Viewer', null],
    ['prometheus', 'GET', 'rules', 'Viewer', null],
    // What it may not: the admin API, writes off the routes, routes above its role.
    ['prometheus', 'POST', 'api/v1/admin/tsdb/snapshot', 'Viewer', PROM_POST],
    ['prometheus', 'POST', 'api/v1/admin/tsdb/snapshot', 'Admin', PROM_POST],
    ['prometheus', 'POST', 'api/v1/admin/tsdb/delete_series', 'Viewer', PROM_POST],
    ['prometheus', 'PUT', 'api/v1/admin/tsdb/delete_series', 'Viewer', PROM_PUT],
    ['prometheus', 'DELETE', 'api/v1/admin/tsdb/delete_series', 'Viewer', PROM_DELETE],
    ['prometheus', 'POST', 'api/v1/query/../admin/tsdb/snapshot', 'Viewer', BAD_PATH],
    ['prometheus', 'POST', 'rules', 'Viewer', ROUTE_DENIED],
    ['prometheus', 'DELETE', 'rules', 'Viewer', ROUTE_DENIED],
    ['prometheus', 'POST', 'rules', 'Editor', null],
    ['grafana-amazonprometheus-datasource', 'POST', 'api/v1/admin/tsdb/snapshot', 'Viewer', PROM_POST],
    // Elasticsearch read-only but for _msearch.
    ['elasticsearch', 'POST', 'idx/_search', 'Viewer', ES_POST],
    ['elasticsearch', 'POST', '_msearch', 'Viewer', null],
    // Kinds the proxy does not restrict (their own resource handlers do, as the original's plugins).
    ['loki', 'GET', 'labels', 'Viewer', null],
    ['graphite', 'POST', 'metrics/find', 'Viewer', null],
    ['testdata', 'GET', 'scenarios', 'Viewer', null],
  ];
  it.each(table)('%s %s %s as %s', (type, method, path, role, expected) => {
    expect(checkPassedOn(type, method, path, role)).toEqual(expected);
  });

  // Every type, every method: a path that could leave the data source's URL is 400 before anything else.
  const traversal = [
    '..', '../admin', 'api/v1/../../admin', '%2e%2e', '%2e%2e/admin', '%2E%2E%2Fadmin', '..%2fadmin', 'api%2f..%2f..%2fadmin',
    '%252e%252e/admin', '%25252e%25252e/admin', '..;/admin', 'api/..;/..;/admin', '..\\admin', 'api\\..\\..\\admin', '%5c..%5cadmin',
    '..%5cadmin', '%255c..%255cadmin', '.%2e/admin', '%ef%bc%8e%ef%bc%8e/admin', '%c0%ae%c0%ae/admin', '//evil', '/abs', 'a%00b',
  ];
  it.each(traversal)('refuses %j for every type and method', (path) => {
    for (const type of ['prometheus', 'loki', 'graphite', 'elasticsearch', 'testdata', 'influxdb']) {
      for (const method of ['GET', 'POST', 'DELETE']) expect([type, method, checkPassedOn(type, method, path, 'Admin')]).toEqual([type, method, BAD_PATH]);
    }
  });
});

describe('forwardedHeaders: what the data source is told', () => {
  const row = {
    id: 7, orgId: 1, uid: 'ds', name: 'ds', type: 'prometheus', access: 'proxy', url: 'http://mimir.example:9009/prometheus', user: '', database: '',
    basicAuth: true, basicAuthUser: 'svc', withCredentials: false, isDefault: false, readOnly: false, version: 1, secureJsonData: {},
    jsonData: { httpHeaderName1: 'X-Scope-OrgID', httpHeaderName2: 'Authorization-Extra', keepCookies: ['kept'] },
  };
  const target = prepareTarget(row as never, { basicAuthPassword: 'svc-pw', httpHeaderValue1: 'tenant-a', httpHeaderValue2: 'extra' });
  const options = { userAgent: 'dashgate/test', loginCookie: 'grafana_session', userHeader: null, ip: '10.0.0.9', chunked: false };
  const hostile: IncomingHttpHeaders = {
    'x-scope-orgid': 'tenant-b',
    authorization: 'Basic dmlld2VyOnZpZXdlcg==',
    'x-ds-authorization': 'Bearer stolen',
    'proxy-authorization': 'Basic cHJveHk6cHc=',
    connection: 'keep-alive, X-Secret-Hop, x-other-hop',
    'x-secret-hop': '1',
    'x-other-hop': '2',
    'keep-alive': 'timeout=5',
    'proxy-connection': 'keep-alive',
    te: 'trailers',
    trailer: 'x-checksum',
    upgrade: 'h2c',
    expect: '100-continue',
    cookie: 'grafana_session=abc; kept=1; other=2',
    'x-forwarded-for': '203.0.113.7',
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'https',
    'x-forwarded-port': '443',
    'user-agent': 'curl/8',
    'x-grafana-user': 'someone-else',
    origin: 'https://evil.example',
    referer: 'https://evil.example/page',
    host: 'dashgate.example',
    accept: 'application/json',
    'x-end-to-end': 'kept',
  };
  const sent = forwardedHeaders(hostile, target, options);

  it('the data source\'s configured headers and credentials win over the client\'s', () => {
    expect(sent['x-scope-orgid']).toBe('tenant-a');
    expect(sent.authorization).toBe(`Basic ${Buffer.from('svc:svc-pw').toString('base64')}`);
    expect(sent['authorization-extra']).toBe('extra');
    expect(sent.host).toBe('mimir.example:9009');
  });

  it('drops hop-by-hop headers, those the client named in Connection, proxy credentials and the client\'s view of the request', () => {
    for (const name of [...HOP_BY_HOP, 'x-secret-hop', 'x-other-hop', 'proxy-authorization', 'expect', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'origin', 'referer', 'x-ds-authorization']) {
      expect([name, sent[name]]).toEqual([name, undefined]);
    }
    for (const name of HOP_BY_HOP) expect(STRIPPED_REQUEST_HEADERS.has(name)).toBe(true);
  });

  it('extends X-Forwarded-For with the client\'s address, sends our user agent and our user header only', () => {
    expect(sent['x-forwarded-for']).toBe('203.0.113.7, 10.0.0.9');
    expect(sent['user-agent']).toBe('dashgate/test');
    expect(sent['x-grafana-user']).toBeUndefined();
    expect(forwardedHeaders(hostile, target, { ...options, userHeader: 'ann' })['x-grafana-user']).toBe('ann');
    expect(forwardedHeaders({}, target, options)['x-forwarded-for']).toBe('10.0.0.9');
  });

  it('keeps only the cookies the data source keeps, never the login cookie; other headers pass', () => {
    expect(sent.cookie).toBe('kept=1');
    expect(sent.accept).toBe('application/json');
    expect(sent['x-end-to-end']).toBe('kept');
  });

  it('lets the client\'s X-DS-Authorization through as Authorization only where the data source sets none', () => {
    const open = prepareTarget({ ...row, basicAuth: false, jsonData: {} } as never, {});
    expect(forwardedHeaders(hostile, open, options).authorization).toBe('Bearer stolen');
  });
});
