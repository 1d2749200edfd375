import { loadSettings } from './config/settings.ts';
import { openDatabase, migrate } from './db/orm.ts';
import { createApp } from './app.ts';
import { bootstrap } from './bootstrap.ts';
import { createLogger } from './logging/logger.ts';

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
if (major < 22 || (major === 22 && minor < 17)) {
  console.error(`dashgate needs Node.js 22.17 or newer (this is ${process.versions.node}); run it with \`npm start\`, which uses the pinned Node.`);
  process.exit(1);
}

const settings = loadSettings();
const log = createLogger(settings.log.level);
const db = await openDatabase(settings, (line) => log.debug({ component: 'postgres' }, line));
await migrate(db.orm, db.connection, () => bootstrap(db.orm.em.fork(), settings));
const app = createApp(settings, db, log);
const address = await app.listen(settings.server.httpPort, settings.server.httpAddr);
log.info({ address: address.address, port: address.port, database: settings.database.type }, 'dashgate listening');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  const deadline = setTimeout(() => {
    log.warn('drain timed out; closing remaining connections');
    app.server.closeAllConnections();
  }, settings.server.shutdownTimeoutSeconds * 1000);
  deadline.unref();
  await app.close();
  await db.close();
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
