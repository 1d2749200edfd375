import { describe, expect, it } from '@jest/globals';
import type { LookupAddress } from 'node:dns';
import { createGuardedLookup, hostWhitelisted, isPublicUnicast, literalHostAllowed } from '../src/proxy/policy/address.ts';
import { extractProxyPath, joinUpstreamPath, safeProxyPath } from '../src/proxy/policy/path.ts';
import { checkProxyRequest } from '../src/proxy/policy/rules.ts';

const deny = { denyPrivate: true };

describe('egress decisions over the host forms a data source URL can hold', () => {
  // Each form is parsed the way the proxy parses a stored URL (WHATWG URL), then decided.
  it.each([
    ['127.0.0.1', false], ['2130706433', false], ['0177.0.0.1', false], ['0x7f.1', false], ['127.1', false], ['0x7f000001', false],
    ['[::1]', false], ['[::ffff:127.0.0.1]', false], ['[::ffff:7f00:1]', false], ['[0:0:0:0:0:ffff:169.254.169.254]', false],
    ['169.254.169.254', false], ['[fd00:ec2::254]', false], ['10.0.0.1', false], ['172.16.5.4', false], ['192.168.1.1', false],
    ['100.64.0.1', false], ['0.0.0.0', false], ['[::]', false], ['224.0.0.1', false], ['255.255.255.255', false], ['[fe80::1]', false],
    ['[64:ff9b::7f00:1]', false], ['[ff02::1]', false],
    ['8.8.8.8', true], ['1.1.1.1', true], ['[2606:4700:4700::1111]', true], ['93.184.216.34', true], ['[::ffff:8.8.8.8]', true],
  ])('%s -> allowed %s', (host, allowed) => {
    const hostname = new URL(`http://${host}/`).hostname;
    expect(literalHostAllowed(hostname, deny)).toBe(allowed);
    expect(literalHostAllowed(hostname, { denyPrivate: false })).toBe(true);
  });

  it('decides names on the resolved address, every time (DNS rebinding)', async () => {
    let answer = '93.184.216.34';
    const fakeDns = ((_name: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) => callback(null, [{ address: answer, family: 4 }])) as never;
    const lookup = createGuardedLookup(deny, fakeDns);
    const resolve = () => new Promise<string>((ok, fail) => lookup('rebind.example', {}, (error, address) => (error ? fail(error) : ok(address as string))));
    await expect(resolve()).resolves.toBe('93.184.216.34');
    answer = '127.0.0.1';
    await expect(resolve()).rejects.toMatchObject({ code: 'EGRESS_DENIED' });
    const real = createGuardedLookup(deny);
    const resolveReal = (name: string) => new Promise((ok, fail) => real(name, {}, (e, a) => (e ? fail(e) : ok(a))));
    await expect(resolveReal('localhost')).rejects.toMatchObject({ code: 'EGRESS_DENIED' });
    // Some resolvers know the rooted form, some do not: either way it never yields an address.
    const rooted = await resolveReal('localhost.').then(() => 'resolved', (e: NodeJS.ErrnoException) => e.code);
    expect(['EGRESS_DENIED', 'ENOTFOUND', 'EAI_AGAIN']).toContain(rooted);
  });

  it('classifies addresses', () => {
    expect(isPublicUnicast('not-an-ip')).toBe(false);
    expect(isPublicUnicast('203.0.113.9')).toBe(false); // documentation range
    expect(isPublicUnicast('2001:db8::1')).toBe(false);
  });

  it('matches the whitelist on host:port', () => {
    expect(hostWhitelisted('a.example:80', [])).toBe(true);
    expect(hostWhitelisted('a.example:80', ['a.example:80'])).toBe(true);
    expect(hostWhitelisted('a.example:8080', ['a.example:80'])).toBe(false);
  });
});

describe('proxy paths', () => {
  it('extracts the reference and keeps the escaped rest', () => {
    expect(extractProxyPath('/api/datasources/proxy/1')).toEqual({ ok: true, ref: { kind: 'id', id: 1 }, proxyPath: '' });
    expect(extractProxyPath('/api/datasources/proxy/1/some/thing')).toEqual({ ok: true, ref: { kind: 'id', id: 1 }, proxyPath: 'some/thing' });
    expect(extractProxyPath('/api/datasources/proxy/54/api/services/afsd%2Fafsd/operations')).toMatchObject({ proxyPath: 'api/services/afsd%2Fafsd/operations' });
    expect(extractProxyPath('/api/datasources/proxy/uid/my-uid_1/x/')).toEqual({ ok: true, ref: { kind: 'uid', uid: 'my-uid_1' }, proxyPath: 'x/' });
    expect(extractProxyPath('/api/datasources/proxy/abc/x')).toEqual({ ok: false, message: 'id is invalid' });
    expect(extractProxyPath('/api/datasources/proxy/uid/b@d/x')).toEqual({ ok: false, message: 'UID is invalid' });
  });

  it('joins with exactly one slash', () => {
    expect(joinUpstreamPath('/root/', 'path/to/folder/')).toBe('/root/path/to/folder/');
    expect(joinUpstreamPath('/root', 'x')).toBe('/root/x');
    expect(joinUpstreamPath('/root/', '')).toBe('/root/');
    expect(joinUpstreamPath('', 'x')).toBe('/x');
  });

  it.each([
    '..', '../x', 'a/../../x', '%2e%2e/x', '%2E%2E%2Fx', '..%2fx', '.%2e/x', '%2e./x', '%252e%252e/x', '%25252e%25252e/x', 'a/%2e%2e/%2e%2e/x',
    '.', './x', '%2e/x', 'a/./b', 'a//b', '//evil', '/abs', 'a%2F%2Fb', '%2F..%2Fx', 'a%2f..%2f..%2fx', '..\\x', '%5c..%5cx', 'a\\b',
    'a%00b', 'a%0ab', 'a%0d%0aX-Injected:1', '%e0%80%ae%e0%80%ae/x', '%zz', '%c0%ae%c0%ae/x',
  ])('refuses %s', (path) => {
    expect(safeProxyPath(path)).toBeNull();
  });

  it.each(['api/v1/query', 'api/services/afsd%2Fafsd/operations', 'render', 'a.b/c..d', '_msearch', 'trailing/', '', '...', 'a/.hidden'])('allows %s', (path) => {
    expect(safeProxyPath(path)).toBe(path);
  });
});

describe('per-kind rules', () => {
  it.each([
    ['elasticsearch', 'GET', 'x', null],
    ['elasticsearch', 'POST', '_msearch', null],
    ['elasticsearch', 'POST', '_search', 'posts not allowed on proxied Elasticsearch datasource except on /_msearch'],
    ['prometheus', 'POST', 'api/v1/query_range', null],
    ['prometheus', 'PUT', 'api/v1/admin', 'non allow-listed PUTs not allowed on proxied Prometheus datasource'],
    ['prometheus', 'DELETE', 'api/v1/admin', 'non allow-listed DELETEs not allowed on proxied Prometheus datasource'],
    ['loki', 'DELETE', 'anything', null],
  ])('%s %s %s', (type, method, path, expected) => {
    expect(checkProxyRequest(type, method, path)).toBe(expected);
  });
});
