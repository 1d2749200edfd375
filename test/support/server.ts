import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { createApp, type App, type AppOptions } from '../../src/app.ts';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadSettings } from '../../src/config/settings.ts';
import type { Settings } from '../../src/config/settings.ts';
import type { PgConnection } from '../../src/db/embedded.ts';
import { migrate, ormOptions } from '../../src/db/orm.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { startTracing } from '../../src/tracing/index.ts';
import { createTestDatabase, dropTestDatabase } from './database.ts';

export type Overrides = Record<string, Record<string, string>>;

export interface TestServer {
  url: string;
  app: App;
  orm: MikroORM;
  settings: Settings;
  connection: PgConnection;
  /** Raw SQL against the server's database (to inspect rows as stored). */
  sql<T extends pg.QueryResultRow = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Every log line the server wrote, parsed. */
  logs: Array<Record<string, unknown>>;
  logText(): string;
  close(): Promise<void>;
}

export interface StartOptions {
  overrides?: Overrides;
  /** Share an existing database (a second instance) instead of creating one. */
  connection?: PgConnection;
  app?: AppOptions;
  /** Environment variables as the settings layer sees them (`GF_<SECTION>_<KEY>`). */
  env?: Record<string, string>;
}

/** A real dashgate HTTP server on a loopback port over its own PostgreSQL database. */
export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  const ownsDatabase = !options.connection;
  const connection = options.connection ?? (await createTestDatabase());
  const settings = loadSettings({
    argv: [],
    env: options.env ?? {},
    overrides: {
      ...options.overrides,
      database: { type: 'postgres', host: `${connection.host}:${connection.port}`, name: connection.database, user: connection.user, password: connection.password, max_open_conn: '10', ...options.overrides?.database },
      security: { admin_user: 'admin', admin_password: 'admin', ...options.overrides?.security },
      server: { http_port: '0', ...options.overrides?.server },
    },
  });
  const logs: Array<Record<string, unknown>> = [];
  const rawLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        rawLines.push(line);
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          logs.push({ msg: line });
        }
      }
      callback();
    },
  });
  const log = createLogger(settings.log.level === 'info' ? 'debug' : settings.log.level, sink);
  const orm = await MikroORM.init(ormOptions(connection, { maxConnections: 10, sslMode: 'disable', secretKey: settings.security.secretKey }));
  await migrate(orm, connection, () => bootstrap(orm.em.fork(), settings));
  const app = createApp(settings, { orm, connection }, log, { tracing: await startTracing(settings.tracing, log), ...options.app });
  const address = await app.listen(0, '127.0.0.1');
  const pool = new pg.Pool({ ...connection, max: 2 });

  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    orm,
    settings,
    connection,
    logs,
    logText: () => rawLines.join('\n'),
    async sql(text, params) {
      return (await pool.query(text, params as unknown[])).rows;
    },
    async close() {
      await app.close();
      await orm.close(true);
      await pool.end();
      if (ownsDatabase) await dropTestDatabase(connection);
    },
  };
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export const ADMIN = basic('admin', 'admin');

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A JSON request over real HTTP. */
export async function call<T = any>(
  server: { url: string },
  method: string,
  path: string,
  options: { auth?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.auth !== null) headers.authorization = options.auth ?? ADMIN;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${server.url}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Runs a GraphQL operation over HTTP. */
export async function gql<T = any>(server: { url: string }, query: string, variables: Record<string, unknown> = {}, auth: string | null = ADMIN): Promise<Reply<{ data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> }>> {
  return call(server, 'POST', '/graphql', { auth, body: { query, variables } });
}

/**
 * A JSON request over real HTTP from another source address (a loopback alias such as
 * 127.0.0.2: on Linux the whole of 127/8 reaches the loopback interface), on a new connection.
 */
export function callFrom<T = any>(
  localAddress: string,
  server: { url: string },
  method: string,
  path: string,
  options: { auth?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const url = new URL(path, server.url);
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.auth !== null) headers.authorization = options.auth ?? ADMIN;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, localAddress, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parsed as T, text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
