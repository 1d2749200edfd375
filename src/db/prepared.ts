import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool, QueryResultRow } from 'pg';

/**
 * A fixed, hot read that PostgreSQL should parse and plan once per pooled connection rather than
 * on every call (MikroORM sends raw SQL inlined, as a fresh simple query each time). For the admin
 * stats' nine-table count, planning was about 60% of PostgreSQL's time per call.
 */
export interface PreparedStatement {
  /** Unique per statement text: each pooled connection keeps it prepared under this name. */
  readonly name: string;
  /** SQL with `$1`-style placeholders. */
  readonly text: string;
}

type NativeConnection = {
  getNativeClient(): Promise<Pool>;
  executeQuery<T>(query: string, run: () => Promise<T>, context?: object): Promise<T>;
};

const pools = new WeakMap<object, Promise<Pool>>();

/**
 * Runs `statement` outside any transaction on the pool MikroORM manages, through its connection's
 * `executeQuery`, so query logging, slow-query reporting and error handling stay MikroORM's.
 */
export async function queryPrepared<T extends QueryResultRow>(em: EntityManager, statement: PreparedStatement, values: unknown[] = []): Promise<T[]> {
  const connection = em.getConnection() as unknown as NativeConnection;
  let pool = pools.get(connection);
  if (!pool) {
    pool = connection.getNativeClient();
    pools.set(connection, pool);
  }
  const native = await pool;
  return connection.executeQuery(statement.text, async () => (await native.query<T>({ name: statement.name, text: statement.text, values })).rows);
}
