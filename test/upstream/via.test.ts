import { describe, expect, it } from '@jest/globals';
import { passedThrough, viaReceivedBy, withVia } from '../../src/upstream/via.ts';

describe('viaReceivedBy', () => {
  it.each([
    ['1.1 dashgate', ['dashgate']],
    ['1.0 fred, 1.1 p.example.net', ['fred', 'p.example.net']],
    ['HTTP/1.1 edge:8080 (Apache/2.4), 1.1 dashgate', ['edge:8080', 'dashgate']],
    // Commas and parentheses inside comments, nested and escaped, separate nothing.
    ['1.1 a (x, y (z, w) \\) q, r), 1.1 b', ['a', 'b']],
    // Empty list members, and tabs as whitespace.
    [' , 1.1\tdashgate ,, ', ['dashgate']],
    // A member without received-by is malformed and names no one.
    ['1.1, dashgate', []],
    ['', []],
  ])('%j -> %j', (value, expected) => {
    expect(viaReceivedBy(value)).toEqual(expected);
  });
});

describe('passedThrough', () => {
  it.each([
    [undefined, false],
    ['1.1 dashgate', true],
    ['1.1 DashGate', true],
    ['1.0 edge, HTTP/1.1 dashgate (dashgate/0.1.0)', true],
    [['1.1 edge', '1.1 dashgate'], true],
    // Only the received-by part counts: names in comments, other hosts and longer names do not.
    ['1.1 edge (via dashgate)', false],
    ['1.1 dashgate-eu', false],
    ['1.1 dashgate.example.com', false],
    ['1.1 dashgate:3000', false],
    ['dashgate 1.1', false],
  ] as const)('%j -> %s', (via, expected) => {
    expect(passedThrough(via as string | string[] | undefined, 'dashgate')).toBe(expected);
  });

  it('recognises the configured pseudonym, not the default one', () => {
    expect(passedThrough('1.1 dashgate', 'dashgate-eu')).toBe(false);
    expect(passedThrough('1.1 dashgate, 1.1 dashgate-EU', 'dashgate-eu')).toBe(true);
  });
});

describe('withVia', () => {
  it.each([
    [undefined, '1.1', '1.1 dashgate'],
    ['', '1.1', '1.1 dashgate'],
    ['1.0 fred', '1.1', '1.0 fred, 1.1 dashgate'],
    [['1.0 a', '1.1 b'], '1.0', '1.0 a, 1.1 b, 1.0 dashgate'],
  ] as const)('%j received over HTTP/%s -> %j', (via, version, expected) => {
    expect(withVia(via as string | string[] | undefined, version, 'dashgate')).toBe(expected);
  });

  it('produces what passedThrough recognises', () => {
    expect(passedThrough(withVia('1.1 edge', '1.1', 'dg-1'), 'dg-1')).toBe(true);
  });
});
