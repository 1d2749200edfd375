import { AsyncLocalStorage } from 'node:async_hooks';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Span, Tracing } from '../tracing/index.ts';

/** Marks the pooled clients whose `query` already makes spans. */
const TRACED = Symbol('dashgate.traced');

type QueryFunction = (config: unknown, values?: unknown, callback?: unknown) => unknown;
type TracedClient = pg.PoolClient & { [TRACED]?: true };

/**
 * A span for every SQL statement a traced request runs (a statement outside any recorded span gets
 * none: the change feed's, a live query's reads, start-up). The span says the statement's kind
 * and, for a plain read or write, its table; never its text or values, which may hold secrets
 * (sealed data source fields, password hashes) inlined by the ORM. Hooked on the pool MikroORM
 * reads from: each client's `query` is wrapped once, when first checked out.
 */
export function traceStatements(orm: MikroORM, tracing: Tracing): Promise<void> {
  return (orm.em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient().then((pool) => tracePool(pool, tracing));
}

export function tracePool(pool: pg.Pool, tracing: Tracing): void {
  const options = (pool as unknown as { options: { database?: string; host?: string; port?: number } }).options;
  const base = { 'db.system.name': 'postgresql', 'db.namespace': options.database, 'server.address': options.host, 'server.port': options.port };
  // A client freed by another request hands itself to the next waiter from that request's turn:
  // the waiter's callback runs in the waiter's own context (pool.query uses it).
  const connect = pool.connect.bind(pool) as (callback?: (...args: unknown[]) => void) => unknown;
  (pool as unknown as { connect: typeof connect }).connect = (callback) => connect(callback && AsyncLocalStorage.bind(callback));
  pool.on('acquire', (client: TracedClient) => {
    if (client[TRACED]) return;
    client[TRACED] = true;
    const query = client.query.bind(client) as QueryFunction;
    (client as unknown as { query: QueryFunction }).query = (config, values, callback) => {
      // Cursors (submittables) stream their rows; only whole statements get spans.
      const text = typeof config === 'string' ? config : typeof (config as { submit?: unknown })?.submit === 'function' ? null : (config as { text?: string })?.text;
      const span = typeof text === 'string' ? statementSpan(tracing, text, base) : null;
      if (!span) return query(config, values, callback);
      const cb = typeof values === 'function' ? values : typeof callback === 'function' ? callback : null;
      if (cb) {
        const done = (error: unknown, result: unknown) => {
          finish(tracing, span, error);
          (cb as (error: unknown, result: unknown) => void)(error, result);
        };
        return typeof values === 'function' ? query(config, done) : query(config, values, done);
      }
      return (query(config, values) as Promise<unknown>).then(
        (result) => {
          finish(tracing, span, null);
          return result;
        },
        (error: unknown) => {
          finish(tracing, span, error);
          throw error;
        },
      );
    };
  });
}

function statementSpan(tracing: Tracing, text: string, base: Record<string, string | number | undefined>): Span | null {
  const { operation, table } = describeStatement(text);
  return tracing.childSpan(table ? `${operation} ${table}` : operation, 'client', { ...base, 'db.operation.name': operation, 'db.collection.name': table ?? undefined });
}

function finish(tracing: Tracing, span: Span, error: unknown): void {
  if (error) {
    // The SQLSTATE only: a message may quote the values that broke a constraint.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') span.setAttribute('db.response.status_code', code);
    tracing.failed(span, typeof code === 'string' ? code : 'error');
  }
  span.end();
}

const KEYWORD = /^\s*([a-z]+)/i;
/** The table of `select ... from t`, `insert into t`, `update t`, `delete from t`, looked for near the start only. */
const TABLE = /^\s*(?:select\b[\s\S]*?\bfrom|insert\s+into|update|delete\s+from)\s+("[^"]+"|\w+)(?:\.("[^"]+"|\w+))?/i;
/** Past the column list of a read of every data source field, each under its property's name (over 500 characters). */
const LOOKED_AT = 1_000;

/** The statement's kind (its first keyword, upper-case) and, for a plain read or write, its table. */
export function describeStatement(text: string): { operation: string; table: string | null } {
  const operation = KEYWORD.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
  const match = TABLE.exec(text.length > LOOKED_AT ? text.slice(0, LOOKED_AT) : text);
  const name = match ? (match[2] ?? match[1])! : null;
  return { operation, table: name ? name.replace(/^"|"$/g, '') : null };
}
