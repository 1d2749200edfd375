import { describe, expect, it } from '@jest/globals';
import type { DataSourceRecord } from '../../src/services/data-sources.ts';
import { configuredTimeout, joinUpstreamPath, parseUpstream, prepareTarget } from '../../src/upstream/target.ts';

// What calling a data source needs, prepared once from its stored row: pure.

const row = (change: Partial<DataSourceRecord> = {}): DataSourceRecord => ({
  id: 3, orgId: 1, uid: 'p1', name: 'prom', type: 'prometheus', access: 'proxy', url: 'http://prom:9090/base', user: '', database: '',
  basicAuth: false, basicAuthUser: '', withCredentials: false, isDefault: false, jsonData: {}, secureJsonData: {}, version: 2, readOnly: false,
  ...change,
} as DataSourceRecord);
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('parseUpstream', () => {
  it.each<[string, unknown]>([
    ['http://prom:9090/base', { protocol: 'http:', host: 'prom:9090', hostname: 'prom', port: '9090', basePath: '/base' }],
    ['https://prom/', { protocol: 'https:', host: 'prom', hostname: 'prom', port: '', basePath: '/' }],
    ['http://prom:80', { protocol: 'http:', host: 'prom', hostname: 'prom', port: '', basePath: '/' }],
    ['prom:9090/x', { protocol: 'http:', host: 'prom:9090', hostname: 'prom', port: '9090', basePath: '/x' }],
    ['http://[::1]:9090', { protocol: 'http:', host: '[::1]:9090', hostname: '[::1]', port: '9090', basePath: '/' }],
    ['http://prom/a%2Fb', { protocol: 'http:', host: 'prom', hostname: 'prom', port: '', basePath: '/a%2Fb' }],
    ['', null],
    ['ftp://prom', null],
    ['file:///etc/passwd', null],
    ['http://', null],
    ['http://exa mple', null],
  ])('%j', (raw, expected) => {
    expect(parseUpstream(raw)).toEqual(expected);
  });
});

describe('joinUpstreamPath', () => {
  it.each([
    ['/base', 'api/v1/query', '/base/api/v1/query'],
    ['/base/', '/api', '/base/api'],
    ['/base/', 'api', '/base/api'],
    ['/base', '/api', '/base/api'],
    ['/base', 'api/', '/base/api/'],
    ['/base', '', '/base'],
    ['', 'api', '/api'],
    ['/', '', '/'],
  ])('%j + %j = %j', (base, path, joined) => {
    expect(joinUpstreamPath(base, path)).toBe(joined);
  });
});

describe('configuredTimeout', () => {
  it.each<[unknown, number | null]>([[30, 30], ['30', 30], [' 2.5 ', 2.5], [0, null], [-1, null], ['', null], ['  ', null], ['abc', null], [Infinity, null], [null, null], [true, null]])(
    '%j is %p', (value, seconds) => {
      expect(configuredTimeout(value)).toBe(seconds);
    },
  );
});

describe('prepareTarget', () => {
  it('carries what kinds read, never the secrets, and the calls\' headers with them', () => {
    const target = prepareTarget(row({ basicAuth: true, basicAuthUser: 'reader', jsonData: { timeout: '15', keepCookies: ['session', 7] } }), { basicAuthPassword: 's3cret' });
    expect(target).toMatchObject({
      id: 3, orgId: 1, uid: 'p1', name: 'prom', type: 'prometheus', version: 2, rawUrl: 'http://prom:9090/base',
      upstream: { host: 'prom:9090', basePath: '/base' }, timeoutSeconds: 15, tokenAuthorization: null, tls: null, tlsError: null, secretsUnreadable: false,
    });
    expect([...target.keepCookies]).toEqual(['session']);
    expect(target.headers).toEqual([['authorization', basic('reader', 's3cret')]]);
  });

  it('falls back to user and password for basic auth', () => {
    expect(prepareTarget(row({ user: 'u' }), { password: 'p' }).headers).toEqual([['authorization', basic('u', 'p')]]);
    expect(prepareTarget(row(), {}).headers).toEqual([]);
  });

  it('sets the configured headers in order until the first missing name, skipping those it may not send', () => {
    const target = prepareTarget(row({
      jsonData: { httpHeaderName1: 'X-Scope-OrgID', httpHeaderName2: 'Content-Length', httpHeaderName3: 'X-Bad', httpHeaderName4: 'Transfer-Encoding', httpHeaderName5: 'X-Ok', httpHeaderName7: 'X-After-Gap' },
    }), { httpHeaderValue1: 'tenant', httpHeaderValue2: '5', httpHeaderValue3: 'line\nbreak', httpHeaderValue5: 'yes', httpHeaderValue7: 'never' });
    expect(target.headers).toEqual([['x-scope-orgid', 'tenant'], ['x-ok', 'yes']]);
    expect(target.skippedHeaders).toEqual(['Content-Length', 'X-Bad', 'Transfer-Encoding']);
  });

  it('sends an InfluxDB 2 token only for Flux', () => {
    expect(prepareTarget(row({ type: 'influxdb', jsonData: { version: 'Flux' } }), { token: 't0k' }).tokenAuthorization).toBe('Token t0k');
    expect(prepareTarget(row({ type: 'influxdb', jsonData: { version: 'InfluxQL' } }), { token: 't0k' }).tokenAuthorization).toBeNull();
    expect(prepareTarget(row({ jsonData: { version: 'Flux' } }), { token: 't0k' }).tokenAuthorization).toBeNull();
  });

  it('marks secrets it could not decrypt, and a URL no call can use', () => {
    const target = prepareTarget(row({ url: 'ftp://x', basicAuth: true, basicAuthUser: 'reader' }), null);
    expect([target.secretsUnreadable, target.upstream, target.headers]).toEqual([true, null, [['authorization', basic('reader', '')]]]);
  });

  it('reads TLS material only for https, naming the field that does not parse', () => {
    const material = { jsonData: { tlsAuthWithCACert: true }, secureJsonData: {} };
    expect(prepareTarget(row({ ...material, url: 'http://prom' }), { tlsCACert: '/etc/ssl/ca.pem' })).toMatchObject({ tls: null, tlsError: null });
    const https = prepareTarget(row({ ...material, url: 'https://prom' }), { tlsCACert: '/etc/ssl/ca.pem' });
    expect(https.tlsError).toContain('tlsCACert');
    expect(https.tlsError).not.toContain('/etc/ssl/ca.pem');
  });
});
