import { describe, expect, it } from '@jest/globals';
import { basic, call, callFrom, gql, startTestServer, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';

// Brute-force protection (reference 6.3): failed passwords of an existing user are recorded in
// PostgreSQL and counted over 5 minutes, so every instance sharing the database enforces the limit.
// By default per login and client address: a stranger's failures lock the login from the
// stranger's address only. A password is checked only under an attempt reserved atomically with
// the count, so no burst, on any number of instances, gets more wrong passwords checked.

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => ([first, second] = [a, b]));

const WRONG_PASSWORD = { extra: null, message: 'Invalid username or password', messageId: 'password-auth.failed', statusCode: 401, traceID: '' };

async function newUser(login: string, password = 'correct-horse'): Promise<number> {
  const res = await call(first, 'POST', '/api/admin/users', { body: { login, email: `${login}@example.com`, password } });
  expect(res.status).toBe(200);
  return res.body.id;
}

const attempt = (server: TestServer, login: string, password: string) => call(server, 'GET', '/api/datasources', { auth: basic(login, password) });
const attemptsOf = async (login: string) =>
  (await first.sql<{ n: number }>('select count(*)::int as n from login_attempt where username = $1', [login]))[0]!.n;
/** Recorded attempts of `login` by address and state (a pending one is a check under way). */
const attemptRows = async (login: string) =>
  first.sql<{ ip_address: string; pending: boolean; n: number }>(
    'select ip_address, pending, count(*)::int as n from login_attempt where username = $1 group by 1, 2 order by 1, 2', [login]);
const from = (address: string, server: TestServer, login: string, password: string) => callFrom(address, server, 'GET', '/api/datasources', { auth: basic(login, password) });

describe('brute-force protection', () => {
  it('blocks a user after 5 wrong passwords within 5 minutes, even with the correct (cached) password, on every instance', async () => {
    await newUser('target');
    // Verified and cached before the attack: the block must win over the cache.
    expect((await attempt(first, 'target', 'correct-horse')).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const res = await attempt(i % 2 ? second : first, 'target', `wrong-${i}`);
      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: WRONG_PASSWORD });
    }
    // Four failures are below the limit; a success does not wipe them.
    expect((await attempt(first, 'target', 'correct-horse')).status).toBe(200);
    expect(await attemptsOf('target')).toBe(4);

    await attempt(second, 'target', 'wrong-4');
    expect(await attemptsOf('target')).toBe(5);
    for (const server of [first, second]) {
      const blocked = await attempt(server, 'target', 'correct-horse');
      // Blocked answers exactly like a wrong password, so it reveals nothing.
      expect({ status: blocked.status, body: blocked.body }).toEqual({ status: 401, body: WRONG_PASSWORD });
    }
    // Signing in with the e-mail is the same user and the same counter.
    expect((await attempt(second, 'target@example.com', 'correct-horse')).status).toBe(401);
    // While blocked, passwords are not even checked, so nothing more is recorded.
    expect(await attemptsOf('target')).toBe(5);

    // Attempts older than 5 minutes no longer count.
    await first.sql(`update login_attempt set created = now() - interval '5 minutes 1 second' where username = 'target'`);
    expect((await attempt(second, 'target', 'correct-horse')).status).toBe(200);
  });

  it('records each failure under the lower-cased login with the client address, whatever name was typed', async () => {
    await newUser('mixedcase');
    await attempt(first, 'MixedCase', 'nope');
    await attempt(first, 'MIXEDCASE@EXAMPLE.COM', 'nope');
    const rows = await first.sql<{ username: string; ip_address: string }>('select username, ip_address from login_attempt where username = $1', ['mixedcase']);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.ip_address).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it('counts every one of 20 concurrent wrong attempts over two instances', async () => {
    // With a limit of 20, no attempt of the burst can find the user blocked (at most 19 others can
    // have been recorded before it is counted), so every one is checked and must be recorded.
    const overrides = { security: { brute_force_login_protection_max_attempts: '20' } };
    const one = await startTestServer({ overrides });
    const two = await startTestServer({ overrides, connection: one.connection });
    try {
      expect((await call(one, 'POST', '/api/admin/users', { body: { login: 'hammered', password: 'correct-horse' } })).status).toBe(200);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(i % 2 ? one : two, 'hammered', `bad-${i}`)));
      expect(results.every((r) => r.status === 401)).toBe(true);
      const [{ n }] = await one.sql<{ n: number }>('select count(*)::int as n from login_attempt where username = $1', ['hammered']);
      expect(n).toBe(20);
      expect((await attempt(one, 'hammered', 'correct-horse')).status).toBe(401);
    } finally {
      await two.close();
      await one.close();
    }
  });

  it('counts unknown logins as it counts known ones, and answers them exactly like a wrong password', async () => {
    await newUser('known');
    const unknown = await attempt(first, 'ghost', 'whatever');
    const wrong = await attempt(first, 'known', 'whatever');
    expect({ status: unknown.status, text: unknown.text }).toEqual({ status: wrong.status, text: wrong.text });
    // Service accounts cannot sign in with a password: they are unknown here too.
    const sa = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'bot' } });
    const asAccount = await attempt(second, sa.body.login, 'whatever');
    expect({ status: asAccount.status, text: asAccount.text }).toEqual({ status: wrong.status, text: wrong.text });
    // Each failure is recorded under the login as given, lower-cased, on every instance alike.
    await attempt(second, 'GHOST', 'whatever');
    expect(await attemptsOf('ghost')).toBe(2);
    expect(await attemptsOf(sa.body.login)).toBe(1);
    // A login longer than any stored one is recorded under its start.
    await attempt(first, `${'g'.repeat(300)}`, 'whatever');
    expect(await attemptsOf('g'.repeat(190))).toBe(1);
  });

  it('honours [security] brute_force_login_protection_max_attempts and disable_brute_force_login_protection', async () => {
    const strict = await startTestServer({ connection: first.connection, overrides: { security: { brute_force_login_protection_max_attempts: '2' } } });
    const off = await startTestServer({ connection: first.connection, overrides: { security: { disable_brute_force_login_protection: 'true' } } });
    try {
      await newUser('strict-user');
      await attempt(strict, 'strict-user', 'nope-1');
      expect((await attempt(strict, 'strict-user', 'correct-horse')).status).toBe(200);
      await attempt(strict, 'strict-user', 'nope-2');
      expect((await attempt(strict, 'strict-user', 'correct-horse')).status).toBe(401);
      // The default instance allows 5.
      expect((await attempt(first, 'strict-user', 'correct-horse')).status).toBe(200);

      // With protection off, history does not block and failures are not recorded.
      for (let i = 0; i < 5; i++) await attempt(first, 'strict-user', `nope-more-${i}`);
      expect((await attempt(first, 'strict-user', 'correct-horse')).status).toBe(401);
      expect((await attempt(off, 'strict-user', 'correct-horse')).status).toBe(200);
      const recorded = await attemptsOf('strict-user');
      expect((await attempt(off, 'strict-user', 'nope-off')).status).toBe(401);
      expect(await attemptsOf('strict-user')).toBe(recorded);
    } finally {
      await strict.close();
      await off.close();
    }
  });

  it('is lifted by an admin password reset', async () => {
    const id = await newUser('locked-out');
    for (let i = 0; i < 5; i++) await attempt(first, 'locked-out', 'nope');
    expect((await attempt(second, 'locked-out', 'correct-horse')).status).toBe(401);
    expect((await call(first, 'PUT', `/api/admin/users/${id}/password`, { body: { password: 'fresh-pass' } })).status).toBe(200);
    expect(await attemptsOf('locked-out')).toBe(0);
    expect((await attempt(second, 'locked-out', 'fresh-pass')).status).toBe(200);
  });
});

describe('malformed Basic credentials', () => {
  it('are answered with 401, never a 500, and never recorded', async () => {
    await newUser('edge');
    const [before] = await first.sql<{ n: number }>('select count(*)::int as n from login_attempt');
    // PostgreSQL cannot compare text holding NUL: such a login is simply unknown.
    const nul = await attempt(first, 'ed\u0000ge', 'correct-horse');
    expect({ status: nul.status, body: nul.body }).toEqual({ status: 401, body: WRONG_PASSWORD });
    for (const header of ['Basic', 'Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${'A'.repeat(10_000)}`, 'Negotiate abc']) {
      const res = await call(first, 'GET', '/api/datasources', { auth: header });
      expect({ header: header.slice(0, 20), status: res.status }).toEqual({ header: header.slice(0, 20), status: 401 });
    }
    const [after] = await first.sql<{ n: number }>('select count(*)::int as n from login_attempt');
    expect(after!.n).toBe(before!.n);
  });

  it('refuse an org the user does not belong to, even one beyond the integer range', async () => {
    await newUser('org-hopper');
    for (const org of ['2', '99999999999']) {
      const res = await call(first, 'GET', '/api/datasources', { auth: basic('org-hopper', 'correct-horse'), headers: { 'x-grafana-org-id': org } });
      expect({ org, status: res.status, message: res.body.message }).toEqual({ org, status: 401, message: 'Unauthorized' });
    }
    expect((await call(first, 'GET', '/api/datasources', { auth: basic('org-hopper', 'correct-horse'), headers: { 'x-grafana-org-id': '1' } })).status).toBe(200);
  });
});

describe('concurrent guesses', () => {
  /** 50 guesses at once, the right password the 25th, spread over `servers`; the statuses in order. */
  async function burst(servers: TestServer[], login: string): Promise<number[]> {
    const guesses = Array.from({ length: 50 }, (_, i) => (i === 24 ? 'correct-horse' : `guess-${i}`));
    const results = await Promise.all(guesses.map((password, i) => attempt(servers[i % servers.length]!, login, password)));
    return results.map((r) => r.status);
  }

  for (const [label, count] of [['one instance', 1], ['two instances', 2]] as const) {
    it(`checks at most the configured number of wrong passwords out of 50 sent at once, on ${label}`, async () => {
      const login = `burst-${count}`;
      await newUser(login);
      const statuses = await burst([first, second].slice(0, count), login);
      // Exactly five wrong passwords were checked and recorded; nothing is left pending.
      expect(await attemptRows(login)).toEqual([{ ip_address: '127.0.0.1', pending: false, n: 5 }]);
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(49);
      expect(statuses.every((s) => s === 401 || s === 200)).toBe(true);
      // Locked now from this address, whatever the password, on every instance; not from another.
      for (const server of [first, second]) expect((await attempt(server, login, 'correct-horse')).status).toBe(401);
      expect((await from('127.0.0.2', second, login, 'correct-horse')).status).toBe(200);
      expect(await attemptsOf(login)).toBe(5);
    });
  }

  it('checks a single password at a time when the limit is 1, across two instances', async () => {
    const overrides = { security: { brute_force_login_protection_max_attempts: '1' } };
    const one = await startTestServer({ overrides, connection: first.connection });
    const two = await startTestServer({ overrides, connection: first.connection });
    try {
      await newUser('one-at-a-time');
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => attempt(i % 2 ? one : two, 'one-at-a-time', `wrong-${i}`)));
      expect(results.every((r) => r.status === 401)).toBe(true);
      expect(await attemptRows('one-at-a-time')).toEqual([{ ip_address: '127.0.0.1', pending: false, n: 1 }]);
    } finally {
      await two.close();
      await one.close();
    }
  });

  it('serves a burst of right passwords, which never count against the limit, even when it exceeds the free slots', async () => {
    await newUser('many-successes');
    // Fresh servers (nothing cached, so each burst needs a check) allowing one check at a time:
    // while one instance checks, the other waits for the slot rather than refusing.
    const overrides = { security: { brute_force_login_protection_max_attempts: '1' } };
    const one = await startTestServer({ overrides, connection: first.connection });
    const two = await startTestServer({ overrides, connection: first.connection });
    try {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => attempt(i % 2 ? one : two, 'many-successes', 'correct-horse')));
      expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
      expect(await attemptRows('many-successes')).toEqual([]);
    } finally {
      await two.close();
      await one.close();
    }
  });

  it('counts a check that never finished (its process died) as a failure', async () => {
    await newUser('crashed-checks');
    await first.sql(`insert into login_attempt (username, ip_address, pending, created)
      select 'crashed-checks', '127.0.0.1', true, now() - interval '31 seconds' from generate_series(1, 5)`);
    expect((await attempt(first, 'crashed-checks', 'correct-horse')).status).toBe(401);
    expect((await from('127.0.0.2', first, 'crashed-checks', 'correct-horse')).status).toBe(200);
  });
});

describe('lockout by login and client address', () => {
  it('locks a login only from the address the failures came from, on REST and GraphQL', async () => {
    await newUser('two-homes');
    // Both addresses signed in before: their verified credentials are cached on both instances.
    for (const address of ['127.0.0.1', '127.0.0.2']) for (const server of [first, second]) expect((await from(address, server, 'two-homes', 'correct-horse')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await from('127.0.0.2', i % 2 ? first : second, 'two-homes', `wrong-${i}`)).status).toBe(401);
    expect(await attemptRows('two-homes')).toEqual([{ ip_address: '127.0.0.2', pending: false, n: 5 }]);
    for (const server of [first, second]) {
      // Not even a credential verified before opens from the locked address...
      const locked = await from('127.0.0.2', server, 'two-homes', 'correct-horse');
      expect({ status: locked.status, body: locked.body }).toEqual({ status: 401, body: WRONG_PASSWORD });
      const lockedGraphql = await callFrom('127.0.0.2', server, 'POST', '/graphql', { auth: basic('two-homes', 'correct-horse'), body: { query: '{ currentOrganization { dataSources { nodes { id } } } }' } });
      expect(lockedGraphql.status).toBe(401);
      // ...while the owner at the other address is not locked out.
      expect((await from('127.0.0.1', server, 'two-homes', 'correct-horse')).status).toBe(200);
      const open = await gql(server, '{ currentOrganization { dataSources { nodes { id } } } }', {}, basic('two-homes', 'correct-horse'));
      expect({ status: open.status, errors: open.body.errors }).toEqual({ status: 200, errors: undefined });
    }
    // The owner's credentials are cached again on both instances now; the locked address still
    // cannot have a guess answered by them.
    for (const server of [first, second]) expect((await from('127.0.0.2', server, 'two-homes', 'correct-horse')).status).toBe(401);
    // Failures from the owner's address count on their own.
    for (let i = 0; i < 4; i++) await from('127.0.0.1', first, 'two-homes', `typo-${i}`);
    expect((await from('127.0.0.1', second, 'two-homes', 'correct-horse')).status).toBe(200);
  });

  it('locks the login for everyone with [security] disable_ip_address_login_protection = true', async () => {
    const byLogin = await startTestServer({ connection: first.connection, overrides: { security: { disable_ip_address_login_protection: 'true' } } });
    try {
      await newUser('one-lock');
      for (let i = 0; i < 5; i++) await from('127.0.0.2', byLogin, 'one-lock', `wrong-${i}`);
      expect((await from('127.0.0.1', byLogin, 'one-lock', 'correct-horse')).status).toBe(401);
      expect((await from('127.0.0.3', byLogin, 'one-lock', 'correct-horse')).status).toBe(401);
      // The instances keyed by address still let the other address in: the setting is per instance.
      expect((await from('127.0.0.1', first, 'one-lock', 'correct-horse')).status).toBe(200);
    } finally {
      await byLogin.close();
    }
  });

  it('takes the client address from X-Forwarded-For only when the peer is a trusted proxy', async () => {
    const behindProxy = await startTestServer({ connection: first.connection, overrides: { server: { trusted_proxies: '127.0.0.1' } } });
    try {
      await newUser('proxied-user');
      const via = (clientIp: string, password: string, peer = '127.0.0.1') =>
        callFrom(peer, behindProxy, 'GET', '/api/datasources', { auth: basic('proxied-user', password), headers: { 'x-forwarded-for': clientIp } });
      for (let i = 0; i < 5; i++) await via('203.0.113.5', `wrong-${i}`);
      expect(await attemptRows('proxied-user')).toEqual([{ ip_address: '203.0.113.5', pending: false, n: 5 }]);
      expect((await via('203.0.113.5', 'correct-horse')).status).toBe(401);
      // A client prepending an address of its choice is still itself to the proxy chain.
      expect((await via('198.51.100.7, 203.0.113.5', 'correct-horse')).status).toBe(401);
      expect((await via('198.51.100.7', 'correct-horse')).status).toBe(200);
      expect((await callFrom('127.0.0.1', behindProxy, 'GET', '/api/datasources', { auth: basic('proxied-user', 'correct-horse') })).status).toBe(200);

      // From a peer that is not trusted the header is ignored: the failures are the peer's, and
      // changing the header does not escape them.
      for (let i = 0; i < 5; i++) await via(`192.0.2.${i}`, `spoofed-${i}`, '127.0.0.2');
      expect(await attemptRows('proxied-user')).toEqual([
        { ip_address: '127.0.0.2', pending: false, n: 5 },
        { ip_address: '203.0.113.5', pending: false, n: 5 },
      ]);
      expect((await via('192.0.2.200', 'correct-horse', '127.0.0.2')).status).toBe(401);
    } finally {
      await behindProxy.close();
    }
  });

  it('is lifted from every address by an admin password reset', async () => {
    const id = await newUser('reset-everywhere');
    for (const address of ['127.0.0.2', '127.0.0.3']) for (let i = 0; i < 5; i++) await from(address, first, 'reset-everywhere', `wrong-${i}`);
    expect((await from('127.0.0.2', second, 'reset-everywhere', 'correct-horse')).status).toBe(401);
    expect((await from('127.0.0.3', second, 'reset-everywhere', 'correct-horse')).status).toBe(401);
    expect((await call(first, 'PUT', `/api/admin/users/${id}/password`, { body: { password: 'fresh-pass' } })).status).toBe(200);
    expect(await attemptRows('reset-everywhere')).toEqual([]);
    for (const address of ['127.0.0.2', '127.0.0.3']) expect((await from(address, second, 'reset-everywhere', 'fresh-pass')).status).toBe(200);
  });
});
