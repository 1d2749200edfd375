import type { Settings } from '../config/settings.ts';
import { startEmbeddedPostgres, type EmbeddedCluster, type PgConnection } from './embedded.ts';

/** A database to connect to, and the embedded cluster when this process started it. */
export interface ResolvedConnection {
  connection: PgConnection;
  embedded: EmbeddedCluster | null;
}

/**
 * Where PostgreSQL is: the embedded cluster (started here) or the external server from `[database]`.
 * `onLaunched`: see startEmbeddedPostgres; never called for an external server.
 */
export async function resolveConnection(settings: Settings, log: (line: string) => void, notice?: (line: string) => void, onLaunched?: (connection: PgConnection) => void): Promise<ResolvedConnection> {
  const db = settings.database;
  if (db.type === 'embedded') {
    const embedded = await startEmbeddedPostgres({ dir: db.path, port: db.embeddedPort, database: db.name, onLog: log, onNotice: notice, ownedFolder: settings.paths.data, onLaunched });
    return { connection: embedded.local, embedded };
  }
  if (db.url) {
    const url = new URL(db.url);
    return {
      embedded: null,
      connection: {
        host: url.hostname,
        port: Number(url.port || 5432),
        user: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
        database: decodeURIComponent(url.pathname.replace(/^\//, '')) || db.name,
      },
    };
  }
  return { embedded: null, connection: { host: db.host, port: db.port, user: db.user, password: db.password, database: db.name } };
}
