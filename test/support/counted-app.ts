import { createWriteStream } from 'node:fs';
import { MikroORM } from '@mikro-orm/postgresql';
import { createApp, type App } from '../../src/app.ts';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadSettings } from '../../src/config/settings.ts';
import type { PgConnection } from '../../src/db/embedded.ts';
import { migrate, ormOptions } from '../../src/db/orm.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { createTestDatabase, dropTestDatabase } from './database.ts';

/** A server on its own database whose ORM counts every SQL statement it sends. */
export interface CountedApp {
  connection: PgConnection;
  orm: MikroORM;
  app: App;
  server: { url: string };
  /** Statements sent so far. */
  statements(): number;
  close(): Promise<void>;
}

/** Starts one: statements are counted with MikroORM's query logger (one line labelled "[query] " each). */
export async function startCountedApp(): Promise<CountedApp> {
  const connection = await createTestDatabase();
  const settings = loadSettings({
    argv: [],
    env: {},
    overrides: {
      database: { type: 'postgres', host: `${connection.host}:${connection.port}`, name: connection.database, user: connection.user, password: connection.password },
      security: { admin_user: 'admin', admin_password: 'admin' },
    },
  });
  let statements = 0;
  const orm = await MikroORM.init({
    ...ormOptions(connection, { maxConnections: 4, sslMode: 'disable' }),
    debug: ['query'],
    logger: (message: string) => void (message.includes('[query] ') && statements++),
  });
  await migrate(orm, connection, () => bootstrap(orm.em.fork(), settings));
  const app = createApp(settings, { orm, connection }, createLogger('error', createWriteStream('/dev/null')));
  const server = { url: `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}` };
  return {
    connection,
    orm,
    app,
    server,
    statements: () => statements,
    async close() {
      await app.close();
      await orm.close(true);
      await dropTestDatabase(connection);
    },
  };
}
