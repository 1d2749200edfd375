// Configuration for the MikroORM CLI (`npx mikro-orm migration:create`, `debug`, ...), reading
// the same settings as the server. With the embedded database, start the server once first.
import { defineConfig } from '@mikro-orm/postgresql';
import { loadSettings } from './src/config/settings.ts';
import { ormOptions, poolOptions } from './src/db/orm.ts';

const settings = loadSettings({ argv: [] }); // the MikroORM CLI has its own --config flag
const db = settings.database;

export default defineConfig({
  ...ormOptions(
    { host: db.host, port: db.port, user: db.user, password: db.password, database: db.name },
    poolOptions(settings),
  ),
  ...(db.url ? { clientUrl: db.url } : {}),
  migrations: { path: './src/db/migrations', pathTs: './src/db/migrations', emit: 'ts', snapshot: false },
});
