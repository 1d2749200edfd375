import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PgConnection } from '../db/embedded.ts';
import type { Logger } from '../logging/logger.ts';
import { CHANGE_CHANNEL, type DataSourceRow, type DataSourceService } from '../services/data-sources.ts';
import type { ProxyRef } from './policy/path.ts';

/** What the proxy needs of a data source, with secrets decrypted once per version. */
export interface ProxyTarget {
  id: number;
  orgId: number;
  uid: string;
  type: string;
  url: URL | null;
  rawUrl: string;
  user: string;
  database: string;
  basicAuth: boolean;
  basicAuthUser: string;
  jsonData: Record<string, unknown>;
  secrets: Record<string, string>;
}

const RECONNECT_DELAY_MS = 1_000;

/**
 * An in-memory cache of proxy targets, invalidated on every instance through PostgreSQL
 * LISTEN/NOTIFY (data source writes notify inside their transaction). While the listening
 * connection is down, nothing is cached, so a missed notification can never serve stale data.
 */
export class ProxyTargetCache {
  readonly #entries = new Map<string, ProxyTarget>();
  readonly #dataSources: DataSourceService;
  readonly #connection: PgConnection;
  readonly #log: Logger;
  #client: pg.Client | null = null;
  #listening = false;
  #closed = false;
  #timer: NodeJS.Timeout | null = null;

  constructor(dataSources: DataSourceService, connection: PgConnection, log: Logger) {
    this.#dataSources = dataSources;
    this.#connection = connection;
    this.#log = log;
  }

  async start(): Promise<void> {
    await this.#connect().catch(() => this.#scheduleReconnect());
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.#connection);
    client.on('error', (error) => {
      this.#log.warn({ err: error }, 'data source change listener lost its connection');
      this.#drop(client);
    });
    client.on('end', () => this.#drop(client));
    client.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL && message.payload) this.invalidate(message.payload);
    });
    await client.connect();
    await client.query(`listen ${CHANGE_CHANNEL}`);
    if (this.#closed) {
      await client.end();
      return;
    }
    this.#client = client;
    this.#entries.clear();
    this.#listening = true;
  }

  #drop(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = null;
    this.#listening = false;
    this.#entries.clear();
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#connect().catch(() => this.#scheduleReconnect());
    }, RECONNECT_DELAY_MS);
    this.#timer.unref();
  }

  /** `payload` is `<orgId>:<id>`, as written by the data source service. */
  invalidate(payload: string): void {
    const [orgId, id] = payload.split(':');
    for (const [key, entry] of this.#entries) {
      if (String(entry.orgId) === orgId && String(entry.id) === id) this.#entries.delete(key);
    }
  }

  async get(em: EntityManager, orgId: number, ref: ProxyRef): Promise<ProxyTarget | null> {
    const key = ref.kind === 'id' ? `${orgId}:id:${ref.id}` : `${orgId}:uid:${ref.uid}`;
    const cached = this.#entries.get(key);
    if (cached) return cached;
    const row = await em.getRepository(this.#dataSources.entity).findOne(ref.kind === 'id' ? { orgId, id: ref.id } : { orgId, uid: ref.uid });
    if (!row) return null;
    const target = toTarget(row, this.#dataSources.decryptSecrets(row));
    if (this.#listening) {
      this.#entries.set(`${orgId}:id:${row.id}`, target);
      this.#entries.set(`${orgId}:uid:${row.uid}`, target);
    }
    return target;
  }

  get size(): number {
    return this.#entries.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    this.#listening = false;
    await client?.end().catch(() => {});
  }
}

function toTarget(row: DataSourceRow, secrets: Record<string, string>): ProxyTarget {
  let url: URL | null = null;
  if (row.url) {
    try {
      url = new URL(/^[^:]*:\/\//.test(row.url) ? row.url : `http://${row.url}`);
    } catch {
      url = null;
    }
  }
  return {
    id: row.id,
    orgId: row.orgId,
    uid: row.uid,
    type: row.type,
    url,
    rawUrl: row.url,
    user: row.user,
    database: row.database,
    basicAuth: row.basicAuth,
    basicAuthUser: row.basicAuthUser,
    jsonData: row.jsonData ?? {},
    secrets,
  };
}
