import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  type AddressClass,
  checkLiteralHost,
  classifyAddress,
  InvalidHostError,
  isEgressAllowed,
  parseHost,
  parseHostLiteral,
} from '../../src/upstream/address.ts';

const DENY = { denyPrivate: true };
const OPEN = { denyPrivate: false };

/** The WHATWG reading of a host through the URL class (the "other path"), without brackets. */
function viaUrl(host: string): string | 'ERR' {
  try {
    return new URL(`http://${host}/`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return 'ERR';
  }
}

describe('classifyAddress', () => {
  const table: Array<[string, AddressClass]> = [
    // IPv4
    ['8.8.8.8', 'unicast'],
    ['1.1.1.1', 'unicast'],
    ['93.184.216.34', 'unicast'],
    ['172.15.255.255', 'unicast'],
    ['172.32.0.0', 'unicast'],
    ['100.63.255.255', 'unicast'],
    ['100.128.0.0', 'unicast'],
    ['192.169.0.1', 'unicast'],
    ['223.255.255.255', 'unicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.88.99.1', 'reserved'],
    // IPv6
    ['2606:4700:4700::1111', 'unicast'],
    ['2001:4860:4860::8888', 'unicast'],
    ['2a00:1450:4001:80b::200e', 'unicast'],
    ['::', 'unspecified'],
    ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:8.8.8.8', 'unicast'],
    ['::ffff:0:127.0.0.1', 'loopback'], // SIIT IPv4-translated
    ['::127.0.0.1', 'loopback'], // deprecated IPv4-compatible
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b::127.0.0.1', 'loopback'], // NAT64 well-known prefix
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::808:808', 'unicast'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'], // 6to4 of 127.0.0.1
    ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
    ['2002:808:808::1', 'unicast'],
    ['2001::1', 'reserved'], // Teredo
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['100::1', 'reserved'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::23', 'metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['4000::1', 'reserved'],
    // Not addresses
    ['localhost', 'invalid'],
    ['0x7f.1', 'invalid'],
    ['2130706433', 'invalid'],
    ['[::1]', 'invalid'],
    ['', 'invalid'],
    ['1.2.3', 'invalid'],
    ['::ffff:1.2.3.256', 'invalid'],
    ['1::2::3', 'invalid'],
  ];
  it.each(table)('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it('denies everything but unicast under denyPrivate and nothing without it', () => {
    for (const [ip, cls] of table) {
      expect([ip, isEgressAllowed(ip, DENY)]).toEqual([ip, cls === 'unicast']);
      expect(isEgressAllowed(ip, OPEN)).toBe(true);
    }
  });

  it('classifies an IPv4 address and every IPv6 wrapping of it alike (mapped, NAT64; 6to4 for routable ones)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
        const hi = (n >>> 16).toString(16);
        const lo = (n & 0xffff).toString(16);
        const cls = classifyAddress(dotted);
        expect(classifyAddress(`::ffff:${dotted}`)).toBe(cls);
        expect(classifyAddress(`::ffff:${hi}:${lo}`)).toBe(cls);
        expect(classifyAddress(`64:ff9b::${dotted}`)).toBe(cls);
        expect(classifyAddress(`2002:${hi}:${lo}::1`)).toBe(cls);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseHostLiteral', () => {
  // host -> canonical literal, null for a DNS name, 'throws' for an invalid host
  const corpus: Array<[string, string | null | 'throws']> = [
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'], // decimal
    ['0177.0.0.1', '127.0.0.1'], // octal
    ['0177.0000.0000.0001', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'], // hex + short
    ['0x7F000001', '127.0.0.1'],
    ['0x7f.0x0.0x0.0x1', '127.0.0.1'],
    ['127.1', '127.0.0.1'], // short forms
    ['127.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'], // trailing dot
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['017700000001', '127.0.0.1'],
    ['3232235777', '192.168.1.1'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
    ['169.16689662', '169.254.169.254'],
    ['%31%32%37.0.0.1', '127.0.0.1'], // percent-encoded host
    ['１２７.０.０.１', '127.0.0.1'], // fullwidth digits
    ['127。0。0。1', '127.0.0.1'], // ideographic full stops
    ['０ｘ７ｆ.1', '127.0.0.1'],
    ['[::1]', '::1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['[::FFFF:127.0.0.1]', '::ffff:7f00:1'],
    ['[::ffff:169.254.169.254]', '::ffff:a9fe:a9fe'],
    ['[::ffff:a9fe:a9fe]', '::ffff:a9fe:a9fe'],
    ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1'],
    ['[2001:DB8:0:0:1:0:0:1]', '2001:db8::1:0:0:1'],
    ['::1', '::1'], // bare IPv6 (config values, DNS answers)
    ['fd00:ec2::254', 'fd00:ec2::254'],
    ['localhost', null],
    ['localhost.', null],
    ['LOCALHOST', null],
    ['example.com', null],
    ['1.foo', null],
    ['my_host', null],
    ['0x7f.1..', null], // two trailing dots: not "ends in a number" (DNS then decides)
    ['[fe80::1%25eth0]', 'throws'], // zone ids
    ['[fe80::1%eth0]', 'throws'],
    ['fe80::1%eth0', 'throws'],
    ['1.2.3.256', 'throws'],
    ['256.0.0.1', 'throws'],
    ['4294967296', 'throws'],
    ['0x100000000', 'throws'],
    ['1.2.3.4.5', 'throws'],
    ['09.1', 'throws'],
    ['08', 'throws'],
    ['foo.1', 'throws'],
    ['foo.0x', 'throws'],
    ['127.0.0.1:80', 'throws'],
    ['user@127.0.0.1', 'throws'],
    ['evil.com/127.0.0.1', 'throws'],
    ['a b', 'throws'],
    ['ex%2fample', 'throws'],
    ['%zz', 'throws'],
    ['[::1', 'throws'],
    ['[]', 'throws'],
    ['[v1.x]', 'throws'],
    ['', 'throws'],
  ];

  it.each(corpus)('%s -> %s', (host, expected) => {
    if (expected === 'throws') {
      expect(() => parseHostLiteral(host)).toThrow(InvalidHostError);
      expect(parseHost(host).kind).toBe('invalid');
    } else {
      expect(parseHostLiteral(host)).toBe(expected);
    }
  });

  it('agrees with new URL(...).hostname wherever the host is a literal', () => {
    for (const [host, expected] of corpus) {
      // Bare IPv6 and hosts with URL delimiters are not URL hosts; the URL class would read them differently.
      if (/[/@]/.test(host) || (!host.startsWith('[') && host.includes(':'))) continue;
      const url = viaUrl(host);
      if (expected === 'throws') expect([host, url]).toEqual([host, 'ERR']);
      else if (expected !== null) expect([host, url]).toEqual([host, expected]);
    }
  });

  it('reads every inet_aton spelling of every IPv4 address like the URL class does', () => {
    const spell = (n: number, radix: 8 | 10 | 16) => (radix === 16 ? `0x${n.toString(16)}` : radix === 8 ? `0${n.toString(8)}` : `${n}`);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.constantFrom<8 | 10 | 16>(8, 10, 16), { minLength: 4, maxLength: 4 }),
        fc.boolean(),
        (n, parts, radixes, trailingDot) => {
          const bytes = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
          // `parts` numbers: the first parts-1 are single bytes, the last carries the rest.
          const head = bytes.slice(0, parts - 1);
          const last = bytes.slice(parts - 1).reduce((acc, b) => acc * 256 + b, 0);
          const host = [...head, last].map((v, i) => spell(v, radixes[i]!)).join('.') + (trailingDot ? '.' : '');
          const dotted = bytes.join('.');
          expect(parseHostLiteral(host)).toBe(dotted);
          expect(viaUrl(host)).toBe(dotted);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('canonicalises any IPv6 spelling exactly like the URL class', () => {
    const group = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.boolean(), fc.boolean(), (groups, upper, dotted) => {
        let text = groups.map((g) => g.toString(16)).join(':');
        if (dotted) text = `${groups.slice(0, 6).map((g) => g.toString(16)).join(':')}:${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
        if (upper) text = text.toUpperCase();
        const expected = viaUrl(`[${text}]`);
        expect(parseHostLiteral(`[${text}]`)).toBe(expected);
        expect(parseHostLiteral(text)).toBe(expected);
        expect(classifyAddress(expected)).toBe(classifyAddress(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('checkLiteralHost (hosts that never reach lookup)', () => {
  const denied = [
    '127.0.0.1', '2130706433', '0177.0.0.1', '0x7f.1', '127.1', '0', '0.0.0.0', '[::1]', '[::]', '::1',
    '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]', '[64:ff9b::7f00:1]',
    '[64:ff9b::169.254.169.254]', '[2002:7f00:1::]', '169.254.169.254', '0xa9fea9fe', '[fd00:ec2::254]', '10.0.0.1',
    '192.168.0.1', '172.16.0.1', '100.64.0.1', '[fc00::1]', '[fe80::1]', '[fe80::1%25eth0]', '[ff02::1]', '224.0.0.1',
    '255.255.255.255', '240.0.0.1', '192.0.2.1', 'localhost', 'localhost.', 'LOCALHOST', 'api.localhost', 'a.b.localhost.',
    '１２７.０.０.１', '%31%32%37.0.0.1', '1.2.3.256', '',
  ];
  it.each(denied)('denies %j under denyPrivate', (host) => {
    expect(checkLiteralHost(host, DENY).allowed).toBe(false);
    expect(checkLiteralHost(host, DENY).allowed).toBe(false);
  });

  const allowed: Array<[string, 'ip' | 'name']> = [
    ['8.8.8.8', 'ip'], ['134744072', 'ip'], ['0x8080808', 'ip'], ['[2606:4700:4700::1111]', 'ip'], ['[::ffff:8.8.8.8]', 'ip'],
    ['[64:ff9b::8.8.8.8]', 'ip'], ['example.com', 'name'], ['localhost.example.com', 'name'], ['prometheus', 'name'],
  ];
  it.each(allowed)('allows %j (%s) under denyPrivate', (host, kind) => {
    const check = checkLiteralHost(host, DENY);
    expect(check).toMatchObject({ allowed: true, kind });
  });

  it('reports what it decided on', () => {
    expect(checkLiteralHost('0x7f.1', DENY)).toEqual({ allowed: false, kind: 'ip', ip: '127.0.0.1', addressClass: 'loopback' });
    expect(checkLiteralHost('[::ffff:a9fe:a9fe]', DENY)).toEqual({ allowed: false, kind: 'ip', ip: '::ffff:a9fe:a9fe', addressClass: 'metadata' });
    expect(checkLiteralHost('localhost', DENY)).toEqual({ allowed: false, kind: 'name', name: 'localhost', addressClass: 'loopback' });
    expect(checkLiteralHost('example.com', DENY)).toEqual({ allowed: true, kind: 'name', name: 'example.com', addressClass: null });
    expect(checkLiteralHost('[fe80::1%25eth0]', OPEN)).toMatchObject({ allowed: false, kind: 'invalid', addressClass: 'invalid' });
  });

  it('lets every valid host through when denyPrivate is off', () => {
    for (const host of denied) {
      if (parseHost(host).kind !== 'invalid') expect([host, checkLiteralHost(host, OPEN).allowed]).toEqual([host, true]);
    }
  });
});
