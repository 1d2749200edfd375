import { describe, expect, it } from '@jest/globals';
import { hashingStats, hashPassword, MAX_CONCURRENT_HASHES, verifyPassword } from '../../src/auth/passwords.ts';
import { basic, call, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';

// The verified-credential cache and the argon2 bound. The servers run in this process, so the
// counters exported by src/auth/passwords.ts are the ones their requests move.

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => ([first, second] = [a, b]));

async function newUser(login: string, password = 'correct-horse'): Promise<number> {
  const res = await call(first, 'POST', '/api/admin/users', { body: { login, email: `${login}@example.com`, password } });
  expect(res.status).toBe(200);
  return res.body.id;
}

const read = (server: TestServer, login: string, password: string) => call(server, 'GET', '/api/datasources', { auth: basic(login, password) });

/** argon2 verifications started since `since` (a snapshot of the counter). */
const verifiesSince = (since: number) => hashingStats.verifies - since;

describe('verified-credential cache', () => {
  it('verifies a password once, then answers repeated Basic requests without argon2', async () => {
    await newUser('cached');
    const start = hashingStats.verifies;
    expect((await read(first, 'cached', 'correct-horse')).status).toBe(200);
    // The counter does move with this server's requests...
    expect(verifiesSince(start)).toBe(1);

    // ...and not at all for the next 50, nor for the same user signing in by e-mail.
    const cachedStart = hashingStats.verifies;
    const began = performance.now();
    for (let i = 0; i < 50; i++) expect((await read(first, 'cached', 'correct-horse')).status).toBe(200);
    const cachedMs = performance.now() - began;
    expect((await read(first, 'cached@example.com', 'correct-horse')).status).toBe(200);
    expect(verifiesSince(cachedStart)).toBe(0);

    // Measured against the real cost: 50 verifications would take far longer than those 50 requests.
    const hash = await hashPassword('correct-horse');
    const timings: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      expect(await verifyPassword(hash, 'correct-horse')).toBe(true);
      timings.push(performance.now() - t);
    }
    const verifyMs = timings.sort((a, b) => a - b)[1]!;
    expect(cachedMs).toBeLessThan(50 * verifyMs);
  });

  it('caches per instance and never caches a wrong password', async () => {
    await newUser('careful');
    const start = hashingStats.verifies;
    await read(first, 'careful', 'correct-horse');
    await read(second, 'careful', 'correct-horse');
    expect(verifiesSince(start)).toBe(2);
    const wrongStart = hashingStats.verifies;
    for (let i = 0; i < 3; i++) expect((await read(first, 'careful', 'not-it')).status).toBe(401);
    expect(verifiesSince(wrongStart)).toBe(3);
  });

  it('drops a proof on every instance at once when the password changes', async () => {
    const id = await newUser('moving');
    for (const server of [first, second]) expect((await read(server, 'moving', 'correct-horse')).status).toBe(200);
    expect((await call(first, 'PUT', `/api/admin/users/${id}/password`, { body: { password: 'battery-staple' } })).status).toBe(200);
    for (const server of [second, first]) {
      const old = await read(server, 'moving', 'correct-horse');
      expect({ status: old.status, message: old.body.message }).toEqual({ status: 401, message: 'Invalid username or password' });
    }
    const start = hashingStats.verifies;
    for (const server of [second, first]) expect((await read(server, 'moving', 'battery-staple')).status).toBe(200);
    expect(verifiesSince(start)).toBe(2);
  });

  it('drops a proof on every instance at once when the user is deleted, and does not carry over to a namesake', async () => {
    const id = await newUser('ephemeral');
    for (const server of [first, second]) expect((await read(server, 'ephemeral', 'correct-horse')).status).toBe(200);
    expect((await call(second, 'DELETE', `/api/admin/users/${id}`)).status).toBe(200);
    for (const server of [first, second]) expect((await read(server, 'ephemeral', 'correct-horse')).status).toBe(401);

    // Same login, same password, new user: its own hash, so it is verified afresh.
    await newUser('ephemeral');
    const start = hashingStats.verifies;
    expect((await read(first, 'ephemeral', 'correct-horse')).status).toBe(200);
    expect(verifiesSince(start)).toBe(1);
  });

  it('does not let a cached proof outlive a disabled account', async () => {
    const id = await newUser('suspended');
    expect((await read(second, 'suspended', 'correct-horse')).status).toBe(200);
    await first.sql('update "user" set is_disabled = true where id = $1', [id]);
    const refused = await read(second, 'suspended', 'correct-horse');
    expect({ status: refused.status, messageId: refused.body.messageId }).toEqual({ status: 401, messageId: 'identity.disabled' });
    await first.sql('update "user" set is_disabled = false where id = $1', [id]);
    expect((await read(second, 'suspended', 'correct-horse')).status).toBe(200);
  });
});

describe('argon2 concurrency bound', () => {
  it('runs at most MAX_CONCURRENT_HASHES computations at once under a burst of logins and user creations', async () => {
    const logins = ['burst-a', 'burst-b', 'burst-c', 'burst-d'];
    for (const login of logins) await newUser(login);
    hashingStats.peakConcurrent = 0;
    const start = hashingStats.verifies;
    const results = await Promise.all([
      // Wrong passwords are never cached, so each one is a real argon2 verification...
      ...logins.flatMap((login) => [1, 2, 3].map((n) => read(n % 2 ? first : second, login, `wrong-${n}`))),
      // ...and each creation a real argon2 hash.
      ...[1, 2, 3, 4].map((n) => call(first, 'POST', '/api/admin/users', { body: { login: `burst-new-${n}`, password: 'pass1234' } })),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([...Array(12).fill(401), ...Array(4).fill(200)].sort());
    expect(verifiesSince(start)).toBe(12);
    // The bound is reached (the burst did run in parallel) and never exceeded.
    expect(hashingStats.peakConcurrent).toBe(MAX_CONCURRENT_HASHES);
  });
});
