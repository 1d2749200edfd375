import { describe, expect, it } from '@jest/globals';
import { AUTH_CHANGE_CHANNEL, PrincipalCache, type VerifiedPrincipal } from '../../src/auth/principal-cache.ts';
import { basic, call, type TestServer } from '../support/server.ts';
import { changeListeners, changeListenersBack, killChangeListeners, twoInstances } from '../support/instances.ts';

// Verified principals are kept in memory per instance and dropped on every instance when the
// database says who a credential is may have changed (triggers + LISTEN/NOTIFY). A hit is served
// only after the change barrier, so a change committed before a request applies to it, on every
// instance: no test here waits for a notification.

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => ([first, second] = [a, b]));

const read = (server: TestServer, auth: string) => call(server, 'GET', '/api/datasources', { auth });

/** A write behind the triggers' back (replica mode skips them): only a cache miss can see it. */
async function silently(statement: string): Promise<void> {
  await first.sql(`set session_replication_role = replica; ${statement}; reset session_replication_role`);
}

async function newToken(name: string): Promise<{ id: number; auth: string }> {
  const res = await call(first, 'POST', '/api/auth/keys', { body: { name, role: 'Admin' } });
  expect(res.status).toBe(200);
  return { id: res.body.id, auth: `Bearer ${res.body.key}` };
}

async function newUser(login: string): Promise<{ id: number; auth: string }> {
  const res = await call(first, 'POST', '/api/admin/users', { body: { login, password: 'pass1234' } });
  expect(res.status).toBe(200);
  return { id: res.body.id, auth: basic(login, 'pass1234') };
}

describe('verified principal cache', () => {
  it('answers a known token from memory on each instance until told otherwise', async () => {
    const token = await newToken('memory');
    expect((await read(first, token.auth)).status).toBe(200);
    expect((await read(second, token.auth)).status).toBe(200);
    await silently(`update api_key set is_revoked = true where id = ${token.id}`);
    // Nobody was told: both instances keep answering from memory...
    expect((await read(first, token.auth)).status).toBe(200);
    expect((await read(second, token.auth)).status).toBe(200);
    // ...until a notification on the channel is committed: the next request on each sees it.
    await first.sql('select pg_notify($1, $2)', [AUTH_CHANGE_CHANNEL, 'all']);
    expect((await read(first, token.auth)).status).toBe(401);
    expect((await read(second, token.auth)).body).toMatchObject({ message: 'Revoked API key' });
  });

  it('forgets a deleted token on the writing instance and on the other at once', async () => {
    const token = await newToken('deleted');
    expect((await read(first, token.auth)).status).toBe(200);
    expect((await read(second, token.auth)).status).toBe(200);
    expect((await call(first, 'DELETE', `/api/auth/keys/${token.id}`)).status).toBe(200);
    expect((await read(second, token.auth)).status).toBe(401);
    expect((await read(first, token.auth)).status).toBe(401);
  });

  it('follows writes made outside the server (an operator in psql, the CLI) through the triggers', async () => {
    const user = await newUser('outside');
    await first.sql(`update org_user set role = 'Editor' where user_id = $1`, [user.id]);
    expect((await read(first, user.auth)).status).toBe(200);
    expect((await read(second, user.auth)).status).toBe(200);
    const create = (server: TestServer, name: string) =>
      call(server, 'POST', '/api/datasources', { auth: user.auth, body: { name, type: 'loki', access: 'proxy', url: 'http://127.0.0.1:9' } });
    await first.sql(`update org_user set role = 'Viewer' where user_id = $1`, [user.id]);
    expect((await create(second, 'as-viewer')).status).toBe(403);
    await first.sql('update "user" set is_disabled = true where id = $1', [user.id]);
    expect((await read(first, user.auth)).status).toBe(401);
    expect((await read(second, user.auth)).status).toBe(401);
  });

  it('drops only the failing login after a wrong password, so brute-force protection sees the next try', async () => {
    const target = await newUser('attacked');
    const bystander = await newUser('bystander');
    for (const user of [target, bystander]) expect((await read(second, user.auth)).status).toBe(200);
    await silently(`update "user" set is_disabled = true where id in (${target.id}, ${bystander.id})`);
    expect((await read(first, basic('attacked', 'wrong-password'))).status).toBe(401);
    // The failure on the first instance evicts the target on the second: its next call reads the row.
    expect((await read(second, target.auth)).status).toBe(401);
    expect((await read(second, bystander.auth)).status).toBe(200);
  });

  it('keeps nothing while its listening connection is down, and caches again once it is back', async () => {
    const token = await newToken('listener');
    expect((await read(second, token.auth)).status).toBe(200);
    const before = await changeListeners(first);
    expect(before).toHaveLength(2);
    await killChangeListeners(first);
    await silently(`update api_key set role = 'Viewer' where id = ${token.id}`);
    const create = () => call(second, 'POST', '/api/datasources', { auth: token.auth, body: { name: `while-down-${Date.now()}`, type: 'loki', access: 'proxy', url: 'http://127.0.0.1:9' } });
    // Unannounced, yet seen at once: with the listener gone nothing is served from memory.
    expect((await create()).status).toBe(403);
    expect(await changeListenersBack([first, second], before)).toBe(true);
    // Cached again (reads are not mutations, which empty the writer's cache): an unannounced
    // revocation goes unseen.
    expect((await read(second, token.auth)).status).toBe(200);
    await silently(`update api_key set is_revoked = true where id = ${token.id}`);
    expect((await read(second, token.auth)).status).toBe(200);
  });

  it('does not outlive a token expiry, cached or not', async () => {
    const account = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'short-lived', role: 'Viewer' } });
    const token = await call(first, 'POST', `/api/serviceaccounts/${account.body.id}/tokens`, { body: { name: 't', secondsToLive: 1 } });
    const auth = `Bearer ${token.body.key}`;
    expect((await read(second, auth)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const expired = await read(second, auth);
    expect(expired.status).toBe(401);
    expect(expired.body.message).toBe('Expired API key');
  });
});

describe('PrincipalCache', () => {
  const entry = (login: string | null, expiresAt: number | null = null): VerifiedPrincipal => ({
    principal: { kind: 'user', userId: 1, login: login ?? 'x', orgId: 1, orgRole: 'Viewer', isServerAdmin: false, method: 'basic' },
    login,
    expiresAt,
    keyId: null,
    lastUsedAt: 0,
  });

  it('keeps nothing until it is listening, and nothing a lookup read before an invalidation', () => {
    const cache = new PrincipalCache();
    const key = cache.keyOf('Basic abc', undefined);
    cache.set(key, cache.generation, entry('a'));
    expect(cache.get(key)).toBeUndefined();
    cache.reset(true);
    const before = cache.generation;
    cache.notify('all');
    cache.set(key, before, entry('a'));
    expect(cache.get(key)).toBeUndefined();
    cache.set(key, cache.generation, entry('a'));
    expect(cache.get(key)?.login).toBe('a');
    cache.reset(false);
    expect(cache.get(key)).toBeUndefined();
  });

  it('evicts one login on a failed-login notification, and drops expired tokens', () => {
    const cache = new PrincipalCache();
    cache.reset(true);
    cache.set('a', cache.generation, entry('alice'));
    cache.set('b', cache.generation, entry('bob'));
    cache.set('t', cache.generation, entry(null, Date.now() - 1));
    cache.notify('login:alice');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.login).toBe('bob');
    expect(cache.get('t')).toBeUndefined();
  });

  it('keys by a salted digest of the header and org, never the credential itself', () => {
    const cache = new PrincipalCache();
    const key = cache.keyOf('Bearer glsa_secret', '2');
    expect(key).not.toContain('glsa_secret');
    expect(key).not.toBe(cache.keyOf('Bearer glsa_secret', undefined));
    expect(key).not.toBe(new PrincipalCache().keyOf('Bearer glsa_secret', '2'));
  });

  it('holds at most its capacity, dropping the oldest', () => {
    const cache = new PrincipalCache(2);
    cache.reset(true);
    for (const key of ['1', '2', '3']) cache.set(key, cache.generation, entry(key));
    expect(cache.size).toBe(2);
    expect(cache.get('1')).toBeUndefined();
    expect(cache.get('3')?.login).toBe('3');
  });
});
