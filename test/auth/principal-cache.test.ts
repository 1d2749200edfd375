import { describe, expect, it } from '@jest/globals';
import { PrincipalCache, type VerifiedPrincipal } from '../../src/auth/principal-cache.ts';
import type { Principal } from '../../src/auth/principal.ts';

// The cache of verified Authorization headers: what it keys on, what it keeps and what empties it.

function entry(login: string | null, expiresAt: number | null = null): VerifiedPrincipal {
  const principal = { kind: 'user', userId: 1, login: login ?? 'key', orgId: 1, orgRole: 'Viewer', isServerAdmin: false, method: login ? 'basic' : 'token' } as Principal;
  return { principal, login, expiresAt, keyId: login ? null : 7, lastUsedAt: 0 };
}

function listening(capacity?: number): PrincipalCache {
  const cache = new PrincipalCache(capacity);
  cache.reset(true);
  return cache;
}

describe('keyOf', () => {
  const cache = new PrincipalCache();
  const base = cache.keyOf('Basic YWRtaW46YWRtaW4=', '1', '127.0.0.1');
  it.each<[string, string, string | undefined, string | undefined]>([
    ['another header', 'Basic YWRtaW46YWRtaW5=', '1', '127.0.0.1'],
    ['another org header', 'Basic YWRtaW46YWRtaW4=', '2', '127.0.0.1'],
    ['another scope', 'Basic YWRtaW46YWRtaW4=', '1', '10.0.0.1'],
    ['no org header', 'Basic YWRtaW46YWRtaW4=', undefined, '127.0.0.1'],
    ['parts shifted across the separator', 'Basic YWRtaW46YWRtaW4=\u00001', '', '127.0.0.1'],
  ])('differs for %s', (_, authorization, org, scope) => {
    expect(cache.keyOf(authorization, org, scope)).not.toBe(base);
  });

  it('is the same for the same parts, an absent org header equal to an empty one, and holds no credential', () => {
    expect(cache.keyOf('Basic YWRtaW46YWRtaW4=', '1', '127.0.0.1')).toBe(base);
    expect(cache.keyOf('Bearer x', undefined)).toBe(cache.keyOf('Bearer x', '', ''));
    expect(base).not.toContain('YWRtaW46YWRtaW4');
  });

  it('is salted per cache: another instance keys the same header differently', () => {
    expect(new PrincipalCache().keyOf('Basic YWRtaW46YWRtaW4=', '1', '127.0.0.1')).not.toBe(base);
  });
});

describe('set and get', () => {
  it('keeps nothing until the change listener is up, and keeps once it is', () => {
    const cache = new PrincipalCache();
    expect(cache.active).toBe(false);
    cache.set('k', cache.generation, entry('admin'));
    expect([cache.get('k'), cache.size]).toEqual([undefined, 0]);
    cache.reset(true);
    expect(cache.active).toBe(true);
    const e = entry('admin');
    cache.set('k', cache.generation, e);
    expect(cache.get('k')).toBe(e);
  });

  it('does not keep a lookup that overlapped an invalidation', () => {
    const cache = listening();
    const generation = cache.generation;
    cache.notify('all');
    cache.set('k', generation, entry('admin'));
    expect(cache.get('k')).toBeUndefined();
  });

  it.each<[string, number | null, boolean]>([
    ['never expires', null, true],
    ['expires later', Date.now() + 60_000, true],
    ['expired now', Date.now(), false],
    ['expired before', Date.now() - 1, false],
  ])('an entry that %s is served: %p', (_, expiresAt, served) => {
    const cache = listening();
    cache.set('k', cache.generation, entry(null, expiresAt));
    expect(cache.get('k') !== undefined).toBe(served);
    expect(cache.size).toBe(served ? 1 : 0);
  });

  it('drops the oldest kept past its capacity; setting a key again makes it the newest, a get does not', () => {
    const cache = listening(2);
    cache.set('a', cache.generation, entry('a'));
    cache.set('b', cache.generation, entry('b'));
    cache.set('a', cache.generation, entry('a'));
    cache.get('b');
    cache.set('c', cache.generation, entry('c'));
    expect(['a', 'b', 'c'].map((k) => cache.get(k)?.login ?? null)).toEqual(['a', null, 'c']);
    expect(cache.size).toBe(2);
  });
});

describe('invalidation', () => {
  function filled(): PrincipalCache {
    const cache = listening();
    cache.set('admin-1', cache.generation, entry('admin'));
    cache.set('admin-2', cache.generation, entry('admin'));
    cache.set('bob', cache.generation, entry('bob'));
    cache.set('token', cache.generation, entry(null));
    return cache;
  }
  const kept = (cache: PrincipalCache) => ['admin-1', 'admin-2', 'bob', 'token'].filter((k) => cache.get(k));

  it.each<[string, (cache: PrincipalCache) => void, string[], boolean]>([
    ['a change to users, memberships or keys empties it', (c) => c.notify('all'), [], true],
    ['any payload other than a failed login empties it', (c) => c.notify(''), [], true],
    ["a failed login forgets that login's entries, whatever its case", (c) => c.notify('login:ADMIN'), ['bob', 'token'], true],
    ['a failed login of an unknown login keeps the rest', (c) => c.notify('login:carol'), ['admin-1', 'admin-2', 'bob', 'token'], true],
    ['the listener going down empties it and stops keeping', (c) => c.reset(false), [], false],
    ['the listener coming back empties it', (c) => c.reset(true), [], true],
  ])('%s', (_, act, left, active) => {
    const cache = filled();
    const before = cache.generation;
    act(cache);
    expect(kept(cache)).toEqual(left);
    expect(cache.generation).toBe(before + 1);
    expect(cache.active).toBe(active);
  });
});
