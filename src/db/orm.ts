import { MikroORM, type EntityManager, type MigrationsOptions, type Options } from '@mikro-orm/postgresql';
import type { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import type { Settings } from '../config/settings.ts';
import { ALL_ENTITIES } from './entities/index.ts';
import { MIGRATION_NAMES } from './migrations/names.ts';
import { releaseConnectionsLostInUse } from './pool-leaks.ts';
import { resolveConnection, type ResolvedConnection } from './connection.ts';
import type { EmbeddedCluster, PgConnection } from './embedded.ts';

export interface Database {
  orm: MikroORM;
  connection: PgConnection;
  /** Present when this process started the embedded cluster (and so must stop it). */
  embedded: EmbeddedCluster | null;
  close(): Promise<void>;
}

export interface PoolOptions {
  maxConnections: number;
  /** PostgreSQL `sslmode`: disable, require, verify-full... */
  sslMode: string;
  /**
   * `[security] secret_key`, for migrations that re-seal stored secrets. Without it they fail on
   * a database that holds secrets (an empty one, such as a test template, needs none).
   */
  secretKey?: string;
}

export function poolOptions(settings: Settings): PoolOptions {
  return {
    maxConnections: settings.database.maxOpenConn,
    sslMode: settings.database.type === 'embedded' ? 'disable' : settings.database.sslMode,
    secretKey: settings.security.secretKey,
  };
}

export function ormOptions(connection: PgConnection, pool: PoolOptions): Options {
  const ssl = pool.sslMode !== 'disable';
  const migrations: MigrationsConfig = { snapshot: false, snapshotOnMigrate: false, silent: true, tableName: MIGRATIONS_TABLE, secretKey: pool.secretKey ?? null };
  return {
    entities: ALL_ENTITIES,
    host: connection.host,
    port: connection.port,
    user: connection.user,
    password: connection.password,
    dbName: connection.database,
    pool: { min: 0, max: pool.maxConnections, idleTimeoutMillis: 30_000 },
    driverOptions: {
      ...(ssl ? { ssl: { rejectUnauthorized: pool.sslMode === 'verify-full' } } : {}),
      onPoolCreated: releaseConnectionsLostInUse,
    },
    // No migrator extension: see loadMigrator.
    migrations,
    // Every request works on its own fork; touching the global context is a bug.
    allowGlobalContext: false,
    ensureDatabase: false,
    debug: false,
  };
}

const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/** MikroORM's migrations options, carrying the key that migrations re-sealing stored secrets need. */
type MigrationsConfig = MigrationsOptions & { secretKey: string | null };

/**
 * The ORM's migrator, loaded when first needed: the migrations package and the migrations
 * themselves take a fifth of a second to load and 20 MiB of memory that a server whose database is
 * already up to date (every start but the first) never uses again.
 */
export async function loadMigrator(orm: MikroORM): Promise<Migrator> {
  const config = orm.config.get('migrations') as MigrationsConfig;
  if (!config.migrationsList) {
    const [{ Migrator }, { migrationsWithKey }] = await Promise.all([import('@mikro-orm/migrations'), import('./migrations/index.ts')]);
    config.migrationsList = migrationsWithKey(config.secretKey);
    Migrator.register(orm);
  }
  return orm.migrator as Migrator;
}

/** Whether some of dashgate's migrations have not run on this database yet. */
async function migrationsPending(client: pg.Client): Promise<boolean> {
  const exists = await client.query<{ table: string | null }>('select to_regclass($1) as table', [MIGRATIONS_TABLE]);
  if (!exists.rows[0]?.table) return true;
  const executed = new Set((await client.query<{ name: string }>(`select name from ${MIGRATIONS_TABLE}`)).rows.map((r) => r.name));
  return MIGRATION_NAMES.some((name) => !executed.has(name));
}

/** Arbitrary constant naming dashgate's migration lock among all advisory locks on the server. */
const MIGRATION_LOCK_KEY = 0x64617368; // "dash"

/**
 * Runs pending migrations while holding a session-level advisory lock on a dedicated connection,
 * so that instances starting together migrate one at a time (the later ones find nothing to do).
 * `afterMigrate` runs under the same lock (bootstrap of the default org and admin);
 * `beforeMigrating` is called when there are migrations to run, before they run.
 */
export async function migrate(orm: MikroORM, connection: PgConnection, afterMigrate?: () => Promise<void>, beforeMigrating?: () => void): Promise<void> {
  const lockClient = new pg.Client(connection);
  // A connection lost meanwhile (the database restarting) fails the awaited queries; without a
  // listener, pg would also emit it as an 'error' event that ends the process.
  lockClient.on('error', () => {});
  await lockClient.connect();
  try {
    await lockClient.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    if (await migrationsPending(lockClient)) {
      beforeMigrating?.();
      await (await loadMigrator(orm)).up();
    }
    await afterMigrate?.();
  } finally {
    await lockClient.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await lockClient.end().catch(() => {});
  }
}

/**
 * Takes the migration lock for the rest of `em`'s current transaction: waits for any instance that
 * is migrating (and provisioning) at start-up, and keeps them waiting until this transaction ends.
 * Session and transaction advisory locks on one key exclude each other.
 */
export async function lockAgainstMigrations(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?)', [MIGRATION_LOCK_KEY]);
}

/** `log` gets PostgreSQL's own output, `notice` what dashgate changed on the way (folder permissions). */
export async function openDatabase(settings: Settings, log: (line: string) => void, notice?: (line: string) => void): Promise<Database> {
  return databaseOn(settings, await resolveConnection(settings, log, notice));
}

/**
 * The ORM for `connection`, unconnected (its pool connects on first use): start-up builds it while
 * the database gets ready. The synchronous constructor, not init(): init also loads every optional
 * MikroORM package installed (the migrator among them, see loadMigrator), which this server does
 * not need.
 */
export function ormFor(settings: Settings, connection: PgConnection): MikroORM {
  return new MikroORM(ormOptions(connection, poolOptions(settings)));
}

/**
 * The ORM on a database already reached (and started, when embedded): stopped again if that fails.
 * `built`: an ORM built ahead by ormFor for the same connection.
 */
export async function databaseOn(settings: Settings, { connection, embedded }: ResolvedConnection, built?: MikroORM): Promise<Database> {
  let orm: MikroORM;
  try {
    orm = built ?? ormFor(settings, connection);
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  return {
    orm,
    connection,
    embedded,
    async close() {
      await orm.close(true);
      await embedded?.stop();
    },
  };
}

/** An EntityManager, or how to get one once it is needed: calls served from memory skip the fork. */
export type LazyEntityManager = EntityManager | (() => EntityManager);

export function resolveEntityManager(source: LazyEntityManager): EntityManager {
  return typeof source === 'function' ? source() : source;
}

