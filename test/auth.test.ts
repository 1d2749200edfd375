import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashingStats, MAX_CONCURRENT_HASHES } from '../src/auth/passwords.ts';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from './support/server.ts';

let first: TestServer;
let second: TestServer;

beforeAll(async () => {
  first = await startTestServer();
  // A second instance on the same database, as behind a load balancer.
  second = await startTestServer({ connection: first.connection });
});
afterAll(async () => {
  await second.close();
  await first.close();
});

async function newUser(login: string, password = 'correct-horse'): Promise<number> {
  const res = await call(first, 'POST', '/api/admin/users', { body: { login, password } });
  expect(res.status).toBe(200);
  return res.body.id;
}

describe('tokens', () => {
  it('service account tokens authenticate as the account, in its org, with its role', async () => {
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'CI Bot', role: 'Editor' } });
    expect(sa.status).toBe(201);
    expect(Object.keys(sa.body)).toEqual(['id', 'name', 'login', 'orgId', 'isDisabled', 'role', 'tokens']);
    expect(sa.body).toMatchObject({ name: 'CI Bot', login: 'sa-1-ci-bot', orgId: 1, isDisabled: false, role: 'Editor', tokens: 0 });
    const token = await call(first, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { body: { name: 'deploy' } });
    expect(token.status).toBe(200);
    expect(token.body.key).toMatch(/^glsa_[0-9A-Za-z]{32}_[0-9a-f]{8}$/);
    const auth = `Bearer ${token.body.key}`;
    expect((await call(second, 'GET', '/api/datasources', { auth })).status).toBe(200);
    const write = await call(second, 'POST', '/api/datasources', { auth, body: { name: 'x', type: 'loki', access: 'proxy' } });
    expect(write.status).toBe(403); // Editor
    expect((await call(first, 'GET', '/api/serviceaccounts/search')).body).toMatchObject({ totalCount: 1, serviceAccounts: [{ name: 'CI Bot', tokens: 1 }] });
    const tokens = await call(first, 'GET', `/api/serviceaccounts/${sa.body.id}/tokens`);
    expect(tokens.body).toEqual([expect.objectContaining({ name: 'deploy', isRevoked: false })]);
    expect(tokens.text).not.toContain(token.body.key);

    // Disabling the account stops its tokens on the next request, on every instance.
    await gql(first, 'mutation($id: Int!) { setServiceAccountDisabled(id: $id, isDisabled: true) { isDisabled } }', { id: sa.body.id });
    const disabled = await call(second, 'GET', '/api/datasources', { auth });
    expect(disabled.status).toBe(401);
    expect(disabled.body.messageId).toBe('identity.disabled');
    await gql(first, 'mutation($id: Int!) { setServiceAccountDisabled(id: $id, isDisabled: false) { isDisabled } }', { id: sa.body.id });
    expect((await call(second, 'GET', '/api/datasources', { auth })).status).toBe(200);

    // Deleting the token, then the account.
    expect((await call(first, 'DELETE', `/api/serviceaccounts/${sa.body.id}/tokens/${token.body.id}`)).status).toBe(200);
    const deleted = await call(second, 'GET', '/api/datasources', { auth });
    expect(deleted.status).toBe(401);
    expect(deleted.body.message).toBe('Invalid API key');
    expect((await call(first, 'DELETE', `/api/serviceaccounts/${sa.body.id}`)).body).toEqual({ message: 'Service account deleted' });
    expect((await call(first, 'GET', `/api/serviceaccounts/${sa.body.id}`)).status).toBe(404);
  });

  it('expired and revoked keys fail on the next request with the reference messages', async () => {
    const expiring = (await call(first, 'POST', '/api/auth/keys', { body: { name: 'short-lived', role: 'Viewer', secondsToLive: 1 } })).body;
    expect((await call(first, 'GET', '/api/datasources', { auth: `Bearer ${expiring.key}` })).status).toBe(200);
    await first.sql(`update api_key set expires = now() - interval '1 second' where id = $1`, [expiring.id]);
    const expired = await call(second, 'GET', '/api/datasources', { auth: `Bearer ${expiring.key}` });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ extra: null, message: 'Expired API key', messageId: 'api-key.expired', statusCode: 401, traceID: '' });

    const revocable = (await call(first, 'POST', '/api/auth/keys', { body: { name: 'revocable', role: 'Viewer' } })).body;
    expect((await call(second, 'GET', '/api/datasources', { auth: basic('api_key', revocable.key) })).status).toBe(200);
    await gql(first, 'mutation($id: Int!) { revokeApiKey(id: $id) { message } }', { id: revocable.id });
    const revoked = await call(second, 'GET', '/api/datasources', { auth: `Bearer ${revocable.key}` });
    expect(revoked.status).toBe(401);
    expect(revoked.body.message).toBe('Revoked API key');

    const list = await call(first, 'GET', '/api/auth/keys');
    expect(list.body.map((k: { name: string }) => k.name)).toEqual(expect.arrayContaining(['short-lived', 'revocable']));
    expect(Object.keys(list.body[0])).toEqual(['id', 'name', 'role', 'expiration']);
    expect((await call(first, 'DELETE', `/api/auth/keys/${revocable.id}`)).body).toEqual({ message: 'API key deleted' });
    expect((await call(first, 'DELETE', `/api/auth/keys/${revocable.id}`)).status).toBe(404);
    expect((await call(first, 'POST', '/api/auth/keys', { body: { name: 'neg', role: 'Viewer', secondsToLive: -5 } })).body).toEqual({ message: 'negative value for SecondsToLive' });
  });
});

describe('brute-force protection', () => {
  it('blocks a user after 5 wrong passwords in 5 minutes, correct password included', async () => {
    await newUser('target');
    for (let i = 0; i < 5; i++) expect((await call(first, 'GET', '/api/datasources', { auth: basic('target', `wrong-${i}`) })).status).toBe(401);
    const blocked = await call(second, 'GET', '/api/datasources', { auth: basic('target', 'correct-horse') });
    expect(blocked.status).toBe(401);
    expect(blocked.body.message).toBe('Invalid username or password');
    // Old attempts leave the window.
    await first.sql(`update login_attempt set created = now() - interval '6 minutes' where username = 'target'`);
    expect((await call(first, 'GET', '/api/datasources', { auth: basic('target', 'correct-horse') })).status).toBe(200);
  });

  it('counts every concurrent wrong attempt and never counts unknown users', async () => {
    await newUser('hammered');
    await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 ? first : second, 'GET', '/api/datasources', { auth: basic('hammered', `bad-${i}`) })));
    expect(await first.sql(`select count(*)::int as n from login_attempt where username = 'hammered'`)).toEqual([{ n: 20 }]);
    const unknown = await call(first, 'GET', '/api/datasources', { auth: basic('ghost', 'whatever') });
    const wrong = await call(first, 'GET', '/api/datasources', { auth: basic('hammered', 'whatever') });
    expect(unknown.body).toEqual(wrong.body);
    expect(await first.sql(`select count(*)::int as n from login_attempt where username = 'ghost'`)).toEqual([{ n: 0 }]);
  });

  it('honours the configured maximum and the switch', async () => {
    const strict = await startTestServer({ connection: first.connection, overrides: { security: { brute_force_login_protection_max_attempts: '2' } } });
    const off = await startTestServer({ connection: first.connection, overrides: { security: { disable_brute_force_login_protection: 'true' } } });
    try {
      await newUser('strict-user');
      for (let i = 0; i < 2; i++) await call(strict, 'GET', '/api/datasources', { auth: basic('strict-user', 'nope') });
      expect((await call(strict, 'GET', '/api/datasources', { auth: basic('strict-user', 'correct-horse') })).status).toBe(401);
      // With protection off the same history does not block.
      expect((await call(off, 'GET', '/api/datasources', { auth: basic('strict-user', 'correct-horse') })).status).toBe(200);
    } finally {
      await strict.close();
      await off.close();
    }
  });

  it('is cleared by a password reset', async () => {
    const id = await newUser('locked-out');
    for (let i = 0; i < 5; i++) await call(first, 'GET', '/api/datasources', { auth: basic('locked-out', 'nope') });
    await call(first, 'PUT', `/api/admin/users/${id}/password`, { body: { password: 'fresh-pass' } });
    expect((await call(first, 'GET', '/api/datasources', { auth: basic('locked-out', 'fresh-pass') })).status).toBe(200);
  });
});

describe('verified-credential cache', () => {
  it('verifies a password once, then serves repeated Basic requests from the cache', async () => {
    await newUser('cached');
    await call(first, 'GET', '/api/datasources', { auth: basic('cached', 'correct-horse') });
    const before = hashingStats.verifies;
    for (let i = 0; i < 30; i++) expect((await call(first, 'GET', '/api/datasources', { auth: basic('cached', 'correct-horse') })).status).toBe(200);
    expect(hashingStats.verifies).toBe(before);
  });

  it('drops the proof at once on every instance when the password changes or the user is deleted', async () => {
    const id = await newUser('moving');
    const old = basic('moving', 'correct-horse');
    expect((await call(first, 'GET', '/api/datasources', { auth: old })).status).toBe(200);
    expect((await call(second, 'GET', '/api/datasources', { auth: old })).status).toBe(200);
    await call(first, 'PUT', `/api/admin/users/${id}/password`, { body: { password: 'battery-staple' } });
    expect((await call(second, 'GET', '/api/datasources', { auth: old })).status).toBe(401);
    expect((await call(first, 'GET', '/api/datasources', { auth: old })).status).toBe(401);
    const fresh = basic('moving', 'battery-staple');
    expect((await call(second, 'GET', '/api/datasources', { auth: fresh })).status).toBe(200);
    await call(first, 'DELETE', `/api/admin/users/${id}`);
    expect((await call(second, 'GET', '/api/datasources', { auth: fresh })).status).toBe(401);
  });

  it('a permission change applies at once on the other instance', async () => {
    const id = await newUser('promoted');
    const auth = basic('promoted', 'correct-horse');
    expect((await call(second, 'GET', '/api/admin/stats', { auth })).status).toBe(403);
    await call(first, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isServiceAdmin: true } });
    expect((await call(second, 'GET', '/api/admin/stats', { auth })).status).toBe(200);
    await call(first, 'PUT', `/api/admin/users/${id}/permissions`, { body: { isServiceAdmin: false } });
    expect((await call(second, 'GET', '/api/admin/stats', { auth })).status).toBe(403);
  });

  it('never runs more argon2 computations at once than the bound', async () => {
    const logins = ['bound-a', 'bound-b', 'bound-c', 'bound-d'];
    for (const login of logins) await newUser(login);
    hashingStats.peakConcurrent = 0;
    await Promise.all(logins.flatMap((login) => [1, 2, 3].map((n) => call(first, 'GET', '/api/datasources', { auth: basic(login, `wrong-${n}`) }))));
    expect(hashingStats.peakConcurrent).toBeGreaterThan(0);
    expect(hashingStats.peakConcurrent).toBeLessThanOrEqual(MAX_CONCURRENT_HASHES);
  });
});

describe('Basic authentication edge cases', () => {
  it('answers malformed headers with 401, never 500', async () => {
    for (const header of ['Basic', 'Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, 'Bearer', 'Negotiate abc', 'Basic ' + 'A'.repeat(10_000)]) {
      const res = await call(first, 'GET', '/api/datasources', { auth: header });
      expect(res.status).toBe(401);
      expect(typeof res.body.message).toBe('string');
    }
    expect((await call(first, 'GET', '/api/datasources', { auth: ADMIN })).status).toBe(200);
  });
});
