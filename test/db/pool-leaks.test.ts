import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { PgConnection } from '../../src/db/embedded.ts';
import { ormOptions } from '../../src/db/orm.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';

// A transaction whose connection PostgreSQL ends (a restart, a kill, an operator) must give its
// pool slot back: kysely under MikroORM does not when ROLLBACK fails (src/db/pool-leaks.ts).

let connection: PgConnection;
let admin: pg.Client;

beforeAll(async () => {
  connection = await createTestDatabase();
  admin = new pg.Client(connection);
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await dropTestDatabase(connection);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('transactions whose connection is terminated', () => {
  it('leave no connection checked out, so the pool serves on and closes', async () => {
    const orm = await MikroORM.init(ormOptions(connection, { maxConnections: 3, sslMode: 'disable' }));
    const pool = (await orm.em.getConnection().getNativeClient()) as pg.Pool;
    const failures = await Promise.all(
      Array.from({ length: 3 }, () =>
        orm.em.fork().transactional(async (em) => {
          const [{ pid }] = await em.execute<Array<{ pid: number }>>('select pg_backend_pid() as pid');
          await admin.query('select pg_terminate_backend($1)', [pid]);
          await em.execute('select 1');
        }).then(() => null, (error: Error) => error.message),
      ),
    );
    expect(failures.every((message) => typeof message === 'string')).toBe(true);

    let inUse = -1;
    for (const deadline = Date.now() + 5000; inUse !== 0 && Date.now() < deadline; await sleep(50)) inUse = pool.totalCount - pool.idleCount;
    expect(inUse).toBe(0);
    // All three slots are usable again at once.
    const rows = await Promise.all(Array.from({ length: 3 }, () => orm.em.fork().transactional((em) => em.execute('select pg_sleep(0.05), 1 as one'))));
    expect(rows.map((r) => r[0]?.one)).toEqual([1, 1, 1]);
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([orm.close(true).then(() => 'closed'), new Promise((resolve) => (timer = setTimeout(resolve, 10_000, 'hung')))]);
    clearTimeout(timer);
    expect(closed).toBe('closed');
  });
});
