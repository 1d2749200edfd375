import { describe, expect, it } from '@jest/globals';
import { clientAddress, limiterKey, normalizeAddress, TrustedProxies } from '../../src/net/client-address.ts';

describe('clientAddress', () => {
  const none = new TrustedProxies([]);
  const proxies = new TrustedProxies(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);

  // [peer, X-Forwarded-For, trusted proxies, client address]
  const table: Array<[peer: string, forwardedFor: string | string[] | undefined, trusted: TrustedProxies, expected: string]> = [
    // Without trusted proxies the header is never read.
    ['127.0.0.1', '203.0.113.5', none, '127.0.0.1'],
    ['::ffff:127.0.0.2', '203.0.113.5', none, '127.0.0.2'],
    ['2001:DB8::7', undefined, none, '2001:db8::7'],
    // An untrusted peer cannot name another address.
    ['127.0.0.2', '203.0.113.5', proxies, '127.0.0.2'],
    ['192.0.2.9', '10.1.1.1', proxies, '192.0.2.9'],
    // A trusted peer: the rightmost address that is not itself a trusted proxy.
    ['127.0.0.1', '203.0.113.5', proxies, '203.0.113.5'],
    ['::ffff:127.0.0.1', '203.0.113.5', proxies, '203.0.113.5'],
    ['127.0.0.1', '203.0.113.5, 10.0.0.7', proxies, '203.0.113.5'],
    ['127.0.0.1', '198.51.100.1, 203.0.113.5, 10.0.0.7', proxies, '203.0.113.5'], // the client cannot prepend a fake origin
    ['127.0.0.1', ['198.51.100.1', '203.0.113.5 , 10.0.0.7'], proxies, '203.0.113.5'], // repeated headers, in order
    ['::1', '2001:db8::1', proxies, '2001:db8::1'],
    ['10.9.9.9', '[2001:DB8::2]:443', proxies, '2001:db8::2'],
    ['10.9.9.9', '203.0.113.5:51234', proxies, '203.0.113.5'],
    ['10.9.9.9', '::ffff:203.0.113.5', proxies, '203.0.113.5'],
    // Every hop trusted: the leftmost one.
    ['127.0.0.1', '10.0.0.1, 10.0.0.2', proxies, '10.0.0.1'],
    // Missing or empty header: the peer.
    ['127.0.0.1', undefined, proxies, '127.0.0.1'],
    ['127.0.0.1', '', proxies, '127.0.0.1'],
    // A malformed entry ends the walk at the last address known, which is a trusted proxy.
    ['127.0.0.1', 'unknown', proxies, '127.0.0.1'],
    ['127.0.0.1', '203.0.113.5, garbage, 10.0.0.7', proxies, '10.0.0.7'],
    ['127.0.0.1', '203.0.113.5,, 10.0.0.7', proxies, '10.0.0.7'],
    ['127.0.0.1', '203.0.113.5:99999999', proxies, '127.0.0.1'],
    ['127.0.0.1', '[2001:db8::1]x', proxies, '127.0.0.1'],
    ['127.0.0.1', '1.2.3.4/8', proxies, '127.0.0.1'],
    ["127.0.0.1", "' or 1=1 --", proxies, '127.0.0.1'],
  ];

  it.each(table)('peer %s with X-Forwarded-For %j: %#', (peer, forwardedFor, trusted, expected) => {
    expect(clientAddress(peer, forwardedFor, trusted)).toBe(expected);
  });
});

describe('TrustedProxies', () => {
  it('matches addresses and ranges of both families, mapped IPv4 included', () => {
    const trusted = new TrustedProxies(['10.0.0.0/8', '192.0.2.1', 'fd00::/8', '::1']);
    expect(['10.255.0.1', '192.0.2.1', 'fd12::1', '::1', '::ffff:10.0.0.1'].map((a) => trusted.has(a))).toEqual([true, true, true, true, true]);
    expect(['11.0.0.1', '192.0.2.2', 'fe80::1', '::2', 'not-an-address', ''].map((a) => trusted.has(a))).toEqual([false, false, false, false, false, false]);
    expect(new TrustedProxies([]).empty).toBe(true);
  });

  it.each(['proxy.internal', '10.0.0.0/33', '::1/129', '10.0.0.0/', '10.0.0.0/x', '1.2.3', ''])('refuses %j, naming it', (entry) => {
    expect(() => new TrustedProxies([entry])).toThrow(`"${entry}" is neither an IP address nor a CIDR range`);
  });

  it('normalises the spellings of one address', () => {
    expect(normalizeAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeAddress('::FFFF:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeAddress('2001:DB8::1')).toBe('2001:db8::1');
    expect(normalizeAddress('::ffff:abcd')).toBe('::ffff:abcd');
    expect(normalizeAddress('192.0.2.1')).toBe('192.0.2.1');
  });
});

describe('limiterKey', () => {
  it.each([
    ['203.0.113.5', '203.0.113.5'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
    ['2001:db8:1:2:3:4:192.0.2.33', '2001:db8:1:2::/64'],
    // Not an address: as it is.
    ['', ''],
  ])('%s -> %s', (address, key) => {
    expect(limiterKey(address)).toBe(key);
  });
});
