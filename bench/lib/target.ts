/**
 * A server under test, run as a child process of the bench runner (one per target, so each has a
 * CPU core and a heap of its own). Reads its TargetOptions from BENCH_TARGET, answers `ready` with
 * its port over IPC, then `rss` / `queries` / `close` requests.
 */
import { createWriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { createApp } from '../../src/app.ts';
import { decodeToken } from '../../src/auth/tokens.ts';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadSettings, type Settings } from '../../src/config/settings.ts';
import { ChangeListener } from '../../src/db/change-listener.ts';
import { migrate, ormOptions } from '../../src/db/orm.ts';
import { DataSource } from '../../src/db/entities/index.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { startTracing } from '../../src/tracing/index.ts';
import { typeLogoUrl } from '../../src/services/data-source-types.ts';
import { createServices } from '../../src/services/index.ts';
import type { TargetOptions } from './types.ts';

const options = JSON.parse(process.env.BENCH_TARGET ?? '{}') as TargetOptions;
let queries = 0;
/** The event loop's delays since the last `loop-reset`. */
let loopDelay: IntervalHistogram | undefined;

function settingsFor(): Settings {
  const c = options.connection;
  return loadSettings({
    argv: [],
    env: {},
    overrides: {
      ...options.overrides,
      database: { type: 'postgres', host: `${c.host}:${c.port}`, name: c.database, user: c.user, password: c.password, max_open_conn: '10' },
      security: { admin_user: 'admin', admin_password: 'admin', ...options.overrides?.security },
      server: { http_port: '0', ...options.overrides?.server },
      log: { level: 'info', ...options.overrides?.log },
    },
  });
}

async function initOrm(settings: Settings): Promise<MikroORM> {
  return MikroORM.init({
    ...ormOptions(options.connection, { maxConnections: settings.database.maxOpenConn, sslMode: 'disable', secretKey: settings.security.secretKey }),
    // The query logger's lines start with a coloured "[query] " label.
    ...(options.countQueries ? { debug: ['query' as const], logger: (message: string) => (message.includes('[query] ') ? queries++ : undefined) } : {}),
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** The app's default response headers: the baselines answer byte for byte what the route answers. */
const DEFAULT_HEADERS = { 'cache-control': 'no-store', 'x-frame-options': 'deny', 'x-content-type-options': 'nosniff', 'x-xss-protection': '1; mode=block' };

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...DEFAULT_HEADERS, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const BY_ID = /^\/api\/datasources\/(\d+)$/;

/** The wire shape of a data source, in the original server's field order. */
function dto(row: { id: number; uid: string; orgId: number; name: string; type: string; access: string; url: string; user: string; database: string; basicAuth: boolean; basicAuthUser: string; withCredentials: boolean; isDefault: boolean; jsonData: unknown; secureJsonData: Record<string, string> | null; version: number; readOnly: boolean }) {
  return {
    id: row.id, uid: row.uid, orgId: row.orgId, name: row.name, type: row.type, typeLogoUrl: typeLogoUrl(row.type), access: row.access, url: row.url,
    password: '', user: row.user, database: row.database, basicAuth: row.basicAuth, basicAuthUser: row.basicAuthUser, basicAuthPassword: '',
    withCredentials: row.withCredentials, isDefault: row.isDefault, jsonData: row.jsonData ?? null,
    secureJsonFields: Object.fromEntries(Object.keys(row.secureJsonData ?? {}).map((k) => [k, true])), version: row.version, readOnly: row.readOnly,
  };
}

/**
 * GET /api/datasources/:id by hand: the app's own authenticator, with its principal cache kept
 * current by the same change listener as the app's, then one findOne.
 */
async function ormHandler(settings: Settings): Promise<{ server: Server; close(): Promise<void> }> {
  const orm = await initOrm(settings);
  const changes = new ChangeListener(options.connection, createLogger('error', createWriteStream('/dev/null')));
  const services = createServices(settings, orm, changes);
  await changes.start();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const match = BY_ID.exec(req.url ?? '');
    if (!match || req.method !== 'GET') return send(res, 404, { message: 'Not found' });
    const em = orm.em.fork();
    services.authenticator.authenticate(em, { authorization: req.headers.authorization, orgIdHeader: undefined, ip: req.socket.remoteAddress ?? '' })
      .then(async (principal) => {
        if (!principal) return send(res, 401, { message: 'Unauthorized' });
        const row = await em.findOne(DataSource, { orgId: principal.orgId, id: Number(match[1]) });
        if (!row) return send(res, 404, { message: 'Data source not found' });
        send(res, 200, dto(row));
      })
      .catch((error: { status?: number; message?: string }) => send(res, error.status ?? 500, { message: error.message ?? 'error' }));
  });
  return {
    server,
    close: async () => {
      await changes.close();
      await orm.close(true);
    },
  };
}

// The authenticator's token lookup, in pg's placeholder syntax.
const TOKEN_SQL = `select k.id, k.org_id, k.name, k.role, k.expires, k.is_revoked, k.last_used_at, k.service_account_id,
        u.login as sa_login, u.is_disabled as sa_disabled
   from api_key k left join "user" u on u.id = k.service_account_id
  where k.key_hash = $1`;
const DATA_SOURCE_SQL = `select id, uid, org_id as "orgId", name, type, access, url, "user", database, basic_auth as "basicAuth",
        basic_auth_user as "basicAuthUser", with_credentials as "withCredentials", is_default as "isDefault", json_data as "jsonData",
        secure_json_data as "secureJsonData", version, read_only as "readOnly"
   from data_source where org_id = $1 and id = $2`;

/** The same handler on raw pg: decode the token, the same lookup query, one select. */
async function pgHandler(settings: Settings): Promise<{ server: Server; close(): Promise<void> }> {
  const pool = new pg.Pool({ ...options.connection, max: settings.database.maxOpenConn });
  pool.on('error', () => {});
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const match = BY_ID.exec(req.url ?? '');
    if (!match || req.method !== 'GET') return send(res, 404, { message: 'Not found' });
    const header = req.headers.authorization ?? '';
    const decoded = header.startsWith('Bearer ') ? decodeToken(header.slice(7)) : null;
    if (!decoded) return send(res, 401, { message: 'Invalid API key' });
    (async () => {
      const { rows: keys } = await pool.query(TOKEN_SQL, [decoded.hash]);
      const key = keys[0];
      if (!key || key.is_revoked || (key.expires && new Date(key.expires).getTime() <= Date.now())) return send(res, 401, { message: 'Invalid API key' });
      const { rows } = await pool.query(DATA_SOURCE_SQL, [key.org_id, Number(match[1])]);
      if (!rows[0]) return send(res, 404, { message: 'Data source not found' });
      send(res, 200, dto(rows[0]));
    })().catch((error: Error) => send(res, 500, { message: error.message }));
  });
  return { server, close: () => pool.end() };
}

async function main(): Promise<void> {
  const settings = settingsFor();
  let port: number;
  let close: () => Promise<void>;
  if (options.kind === 'app') {
    const orm = await initOrm(settings);
    await migrate(orm, options.connection, () => bootstrap(orm.em.fork(), settings));
    const log = createLogger(settings.log.level, createWriteStream('/dev/null'));
    const app = createApp(settings, { orm, connection: options.connection }, log, { tracing: await startTracing(settings.tracing, log), ...options.app });
    port = (await app.listen(0, '127.0.0.1')).port;
    close = async () => {
      await app.close();
      await orm.close(true);
    };
  } else {
    const handler = options.kind === 'orm-handler' ? await ormHandler(settings) : await pgHandler(settings);
    port = await listen(handler.server);
    close = async () => {
      handler.server.closeAllConnections();
      await new Promise((resolve) => handler.server.close(resolve));
      await handler.close();
    };
  }
  process.on('message', (message: { type: string; id: number }) => {
    const reply = (value: unknown) => process.send!({ type: 'reply', id: message.id, value });
    if (message.type === 'rss') reply(process.memoryUsage().rss);
    else if (message.type === 'retained') {
      // Garbage collected first (the targets run with --expose-gc): what the process holds on to.
      const collect = (globalThis as { gc?: () => void }).gc;
      collect?.();
      collect?.();
      reply(process.memoryUsage().rss);
    }
    else if (message.type === 'reduced') {
      // V8's last-resort collection (what it runs itself under memory pressure) also hands back the
      // freed pages it otherwise pools for later allocations; they leave on a background thread,
      // so RSS is read once it stops falling.
      const collect = (globalThis as { gc?: (options?: object) => void }).gc;
      collect?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      void settledRss().then(reply);
    }
    else if (message.type === 'queries') reply(queries);
    else if (message.type === 'loop-reset') {
      // Made on first use: a timer every few milliseconds would cost the other scenarios' CPU figures a little.
      loopDelay ??= monitorEventLoopDelay({ resolution: 5 });
      loopDelay.disable();
      loopDelay.reset();
      loopDelay.enable();
      reply(true);
    }
    else if (message.type === 'loop') reply(loopDelay ? { maxMs: loopDelay.max / 1e6, p99Ms: loopDelay.percentile(99) / 1e6 } : null);
    else if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      reply(user + system);
    }
    else if (message.type === 'close') void close().then(() => reply(true)).finally(() => process.exit(0));
  });
  process.send!({ type: 'ready', port });
}

/** RSS once three readings 50 ms apart have not fallen (at most a second). */
async function settledRss(): Promise<number> {
  let last = process.memoryUsage().rss;
  for (let steady = 0, i = 0; steady < 3 && i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = process.memoryUsage().rss;
    steady = now < last ? 0 : steady + 1;
    last = Math.min(last, now);
  }
  return last;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
