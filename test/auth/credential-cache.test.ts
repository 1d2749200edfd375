import { describe, expect, it } from '@jest/globals';
import { VerifiedCredentialCache } from '../../src/auth/credential-cache.ts';

describe('VerifiedCredentialCache', () => {
  it('remembers exactly the (user, stored hash, password) accepted', () => {
    const cache = new VerifiedCredentialCache();
    cache.add(1, '$argon2id$a', 'pw');
    expect([cache.has(1, '$argon2id$a', 'pw'), cache.has(1, '$argon2id$b', 'pw'), cache.has(2, '$argon2id$a', 'pw'), cache.has(1, '$argon2id$a', 'pw2')])
      .toEqual([true, false, false, false]);
  });

  it('keeps parts apart: no two triples share a key by concatenation', () => {
    const cache = new VerifiedCredentialCache();
    cache.add(1, 'h', 'ab');
    expect([cache.has(1, 'ha', 'b'), cache.has(11, 'h', 'ab')]).toEqual([false, false]);
  });

  it('forgets the least recently used past its capacity, a hit counting as a use', () => {
    const cache = new VerifiedCredentialCache(2);
    cache.add(1, 'h', 'a');
    cache.add(2, 'h', 'b');
    expect(cache.has(1, 'h', 'a')).toBe(true); // 2 is now the least recently used
    cache.add(3, 'h', 'c');
    expect([cache.has(1, 'h', 'a'), cache.has(2, 'h', 'b'), cache.has(3, 'h', 'c')]).toEqual([true, false, true]);
  });

  it('shares nothing between instances (each process keys with its own secret)', () => {
    const one = new VerifiedCredentialCache();
    one.add(1, 'h', 'pw');
    expect(new VerifiedCredentialCache().has(1, 'h', 'pw')).toBe(false);
  });
});
