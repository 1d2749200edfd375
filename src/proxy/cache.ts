import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PgConnection } from '../db/embedded.ts';
import type { Logger } from '../logging/logger.ts';
import { CHANGE_CHANNEL, type DataSourceService } from '../services/data-sources.ts';
import type { ProxyRef } from './policy/path.ts';
import { prepareTarget, type ProxyTarget } from './target.ts';

export type { ProxyTarget } from './target.ts';

const RECONNECT_DELAY_MS = 1_000;
/** Shows up in pg_stat_activity, so operators (and tests) can tell the listener apart. */
export const LISTENER_APPLICATION_NAME = 'dashgate-proxy-cache';

/** The stored secrets could not be decrypted (another `[security] secret_key`?). */
export class TargetSecretsError extends Error {
  constructor(orgId: number, id: number) {
    super(`secrets of data source ${id} in org ${orgId} cannot be decrypted`);
    this.name = 'TargetSecretsError';
  }
}

/**
 * The proxy's data sources by (org, id) and (org, uid), prepared once per version and invalidated
 * on every instance through PostgreSQL LISTEN/NOTIFY (each data source write notifies inside its
 * transaction, so the message arrives once the change is visible).
 *
 * Staleness guards: nothing is cached while the listener is down (a notification could be missed)
 * and the cache is emptied whenever it comes back; a load that overlapped any invalidation is used
 * once but not kept, since the row it read may predate the change.
 */
export class ProxyTargetCache {
  readonly #entries = new Map<string, ProxyTarget>();
  /** Loads in flight, shared by concurrent misses of the same key within one generation. */
  readonly #loading = new Map<string, { generation: number; promise: Promise<ProxyTarget | null> }>();
  readonly #dataSources: DataSourceService;
  readonly #connection: PgConnection;
  readonly #log: Logger;
  /** Bumped by every invalidation; a load only caches if it is unchanged since the load began. */
  #generation = 0;
  #client: pg.Client | null = null;
  #listening = false;
  #closed = false;
  #timer: NodeJS.Timeout | null = null;

  constructor(dataSources: DataSourceService, connection: PgConnection, log: Logger) {
    this.#dataSources = dataSources;
    this.#connection = connection;
    this.#log = log;
  }

  /** Starts listening; if the database is unreachable it keeps retrying in the background. */
  async start(): Promise<void> {
    await this.#connect().catch((error: unknown) => {
      this.#log.warn({ err: error }, 'data source change listener could not connect; proxy lookups are uncached until it does');
      this.#scheduleReconnect();
    });
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ ...this.#connection, application_name: LISTENER_APPLICATION_NAME, keepAlive: true });
    // Registered before connecting: a pg client without an 'error' listener crashes the process.
    client.on('error', (error) => {
      this.#log.warn({ err: error }, 'data source change listener lost its connection');
      this.#drop(client);
    });
    client.on('end', () => this.#drop(client));
    client.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL && message.payload) this.invalidate(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANGE_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    // Anything cached before may have missed a notification while nobody listened.
    this.#clear();
    this.#listening = true;
  }

  #drop(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = null;
    this.#listening = false;
    this.#clear();
    client.end().catch(() => {});
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#connect().catch((error: unknown) => {
        this.#log.debug({ err: error }, 'data source change listener reconnect failed');
        this.#scheduleReconnect();
      });
    }, RECONNECT_DELAY_MS);
    this.#timer.unref();
  }

  #clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#loading.clear();
  }

  /** `payload` is `<orgId>:<id>`, as the data source service notifies it. */
  invalidate(payload: string): void {
    this.#generation++;
    this.#loading.clear();
    const [orgId, id] = payload.split(':');
    for (const [key, entry] of this.#entries) {
      if (String(entry.orgId) === orgId && String(entry.id) === id) this.#entries.delete(key);
    }
  }

  /** The org's data source by id or uid, from memory when possible; null when there is none. */
  get(em: EntityManager, orgId: number, ref: ProxyRef): Promise<ProxyTarget | null> | ProxyTarget | null {
    const key = ref.kind === 'id' ? `${orgId}:id:${ref.id}` : `${orgId}:uid:${ref.uid}`;
    const cached = this.#entries.get(key);
    if (cached) return cached;
    const generation = this.#generation;
    const pending = this.#loading.get(key);
    if (pending && pending.generation === generation) return pending.promise;
    const promise = this.#load(em, orgId, ref, generation).finally(() => {
      if (this.#loading.get(key)?.promise === promise) this.#loading.delete(key);
    });
    this.#loading.set(key, { generation, promise });
    return promise;
  }

  async #load(em: EntityManager, orgId: number, ref: ProxyRef, generation: number): Promise<ProxyTarget | null> {
    const row = await em.getRepository(this.#dataSources.entity).findOne(ref.kind === 'id' ? { orgId, id: ref.id } : { orgId, uid: ref.uid });
    if (!row) return null;
    let secrets: Record<string, string>;
    try {
      secrets = this.#dataSources.decryptSecrets(row);
    } catch {
      throw new TargetSecretsError(orgId, row.id);
    }
    const target = prepareTarget(row, secrets);
    if (target.skippedHeaders.length > 0) {
      this.#log.warn({ dsId: target.id, orgId, headers: target.skippedHeaders }, 'data source custom headers skipped: invalid or reserved names or values');
    }
    if (this.#listening && generation === this.#generation) {
      this.#entries.set(`${orgId}:id:${row.id}`, target);
      this.#entries.set(`${orgId}:uid:${row.uid}`, target);
    }
    return target;
  }

  /** Cached entries (each data source counts twice: by id and by uid). */
  get size(): number {
    return this.#entries.size;
  }

  /** Whether notifications are being received (and so whether anything is cached). */
  get listening(): boolean {
    return this.#listening;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const client = this.#client;
    this.#client = null;
    this.#listening = false;
    this.#clear();
    await client?.end().catch(() => {});
  }
}
