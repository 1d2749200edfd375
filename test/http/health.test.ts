import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import type { PgConnection } from '../../src/db/embedded.ts';
import { ormOptions } from '../../src/db/orm.ts';
import { createHealthCheck } from '../../src/http/health.ts';
import { COMMIT } from '../../src/version.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';

// The health check against a real PostgreSQL whose only pooled connection a test can hold busy,
// which is what a saturated or hung database looks like to the probe.

let connection: PgConnection;
let orm: MikroORM;
/** Milliseconds added to the clock, to step past the probe's cache without waiting. */
let skew = 0;
let forks = 0;
/** The real ORM, with the probe's forks counted. */
let counted: MikroORM;

beforeAll(async () => {
  connection = await createTestDatabase();
  orm = await MikroORM.init(ormOptions(connection, { maxConnections: 1, sslMode: 'disable' }));
  counted = { em: { fork: () => (forks++, orm.em.fork()) } } as unknown as MikroORM;
  const now = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => now() + skew);
});
afterEach(() => {
  forks = 0;
});
afterAll(async () => {
  jest.restoreAllMocks();
  await orm?.close(true);
  if (connection) await dropTestDatabase(connection);
});

/** Holds the pool's one connection for `seconds`; resolves when it is given back. */
function holdTheDatabase(seconds: number): Promise<unknown> {
  return orm.em.fork().execute(`select pg_sleep(${seconds})`);
}

const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
};

describe('createHealthCheck', () => {
  it('answers 200 with the database ok, the spoken version and the commit', async () => {
    const check = createHealthCheck(counted, '12.0.0');
    expect(await check()).toEqual({ status: 200, body: { database: 'ok', version: '12.0.0', commit: COMMIT } });
    expect(forks).toBe(1);
  });

  it('keeps a result for three seconds, then probes again', async () => {
    const check = createHealthCheck(counted, '12.0.0');
    await check();
    skew += 2_900;
    await check();
    expect(forks).toBe(1);
    skew += 200;
    await check();
    expect(forks).toBe(2);
  });

  it('answers 503 failing within the probe\'s two seconds when the database does not answer, callers sharing one probe', async () => {
    const check = createHealthCheck(counted, '12.0.0');
    expect((await check()).status).toBe(200);
    const held = holdTheDatabase(4);
    skew += 3_100;
    const { value: answers, ms } = await timed(() => Promise.all([check(), check(), check(), check()]));
    expect(answers).toEqual(Array(4).fill({ status: 503, body: { database: 'failing', version: '12.0.0', commit: COMMIT } }));
    expect(forks).toBe(2);
    expect(ms).toBeGreaterThanOrEqual(1_900);
    expect(ms).toBeLessThan(3_500);
    // The failure is cached too: the next caller is not held up again.
    expect((await timed(check)).ms).toBeLessThan(1_000);
    await held;
    skew += 3_100;
    expect(await check()).toEqual({ status: 200, body: { database: 'ok', version: '12.0.0', commit: COMMIT } });
  }, 20_000);

  it('while draining answers 503 at once, without waiting on a probe of a database that does not answer', async () => {
    let draining = false;
    const check = createHealthCheck(counted, '10.4.3', () => draining);
    expect((await check()).status).toBe(200);
    draining = true;
    const held = holdTheDatabase(3);
    skew += 3_100;
    const { value, ms } = await timed(check);
    expect(value).toEqual({ status: 503, body: { database: 'ok', version: '10.4.3', commit: COMMIT, draining: true } });
    expect(ms).toBeLessThan(1_000);
    expect(forks).toBe(1);
    await held;
  }, 20_000);
});
