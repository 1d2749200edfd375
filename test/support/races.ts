import pg from 'pg';
import type { TestServer } from './server.ts';

/**
 * Runs `requests` while a transaction of the test holds `rows` locked, and lets them go together
 * once `waiters` of them wait on a lock: the racing changes then meet in the database at the same
 * moment instead of one after another, so an unguarded check-then-change would be caught.
 */
export async function released<T>(server: TestServer, rows: { sql: string; params: unknown[] }, waiters: number, requests: () => Promise<T>): Promise<T> {
  const holder = new pg.Client(server.connection);
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query(rows.sql, rows.params);
    const pending = requests();
    for (let i = 0; ; i++) {
      const [row] = await server.sql<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (row!.n >= waiters) break;
      if (i > 400) throw new Error(`fewer than ${waiters} requests ever waited on a lock`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await holder.query('rollback');
    return await pending;
  } finally {
    await holder.end();
  }
}
