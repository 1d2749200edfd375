import type { ChangeBarrier, ChangeListener, ChangeSubscriber } from '../db/change-listener.ts';
import { resolveEntityManager, type LazyEntityManager } from '../db/orm.ts';
import type { Logger } from '../logging/logger.ts';
import { CHANGE_CHANNEL, type DataSourceKey, type DataSourceService } from '../services/data-sources.ts';
import { prepareTarget, type DataSourceTarget } from './target.ts';

/**
 * Prepared data sources by (org, id) and (org, uid), prepared once per version and invalidated
 * on every instance through PostgreSQL LISTEN/NOTIFY (a trigger notifies every committed change
 * of a data source row, whoever makes it, so the message arrives once the change is visible).
 *
 * Staleness guards: an entry, or a load in flight, is used only once the change barrier shows
 * every change committed before the request arrived has been heard, so a write on any instance
 * applies to the very next call; nothing is cached while the change listener is down (a
 * notification could be missed) and the cache is emptied whenever it comes or goes; a load that
 * overlapped any invalidation is used once but not kept, since the row it read may predate the
 * change.
 */
export class DataSourceTargetCache implements ChangeSubscriber {
  readonly #entries = new Map<string, DataSourceTarget>();
  /** Loads in flight, shared by concurrent misses of the same key within one generation. */
  readonly #loading = new Map<string, { generation: number; promise: Promise<DataSourceTarget | null> }>();
  readonly #dataSources: DataSourceService;
  readonly #log: Logger;
  readonly #changes: ChangeBarrier;
  /** Bumped by every invalidation; a load only caches if it is unchanged since the load began. */
  #generation = 0;
  #listening = false;
  readonly #onChange: (key: { orgId: number; id: number } | null) => void;

  /** `onChange` hears every data source change on any instance (null: any may have changed), to close what it kept for them. */
  constructor(dataSources: DataSourceService, changes: ChangeListener, log: Logger, onChange: (key: { orgId: number; id: number } | null) => void = () => {}) {
    this.#dataSources = dataSources;
    this.#log = log;
    this.#changes = changes;
    this.#onChange = onChange;
    changes.subscribe(CHANGE_CHANNEL, this);
  }

  /** To take when a request arrives and pass to `get` (and to authentication, which shares it). */
  mark(): number {
    return this.#changes.mark();
  }

  reset(listening: boolean): void {
    this.#listening = listening;
    this.#clear();
    this.#onChange(null);
  }

  #clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#loading.clear();
  }

  /** `payload` is `<orgId>:<id>:<operation>` as the trigger sends it, or `all` (a TRUNCATE). */
  notify(payload: string): void {
    if (payload === 'all') {
      this.#clear();
      this.#onChange(null);
      return;
    }
    this.#generation++;
    this.#loading.clear();
    const [orgId, id] = payload.split(':');
    for (const [key, entry] of this.#entries) {
      if (String(entry.orgId) === orgId && String(entry.id) === id) this.#entries.delete(key);
    }
    this.#onChange({ orgId: Number(orgId), id: Number(id) });
  }

  /** The org's data source by id or uid, from memory when possible; null when there is none. */
  get(em: LazyEntityManager, orgId: number, ref: DataSourceKey, mark: number): Promise<DataSourceTarget | null> | DataSourceTarget | null {
    const key = 'id' in ref ? `${orgId}:id:${ref.id}` : `${orgId}:uid:${ref.uid}`;
    // Nothing in memory: a fresh read needs no barrier.
    if (!this.#entries.has(key) && !this.#loading.has(key)) return this.#start(em, orgId, ref, key);
    const caughtUp = this.#changes.caughtUp(mark);
    if (caughtUp === true) return this.#current(em, orgId, ref, key);
    if (caughtUp === false) return this.#start(em, orgId, ref, key);
    return caughtUp.then((ok) => (ok ? this.#current(em, orgId, ref, key) : this.#start(em, orgId, ref, key)));
  }

  /** The entry, or a load begun since the last invalidation, or a new load. */
  #current(em: LazyEntityManager, orgId: number, ref: DataSourceKey, key: string): Promise<DataSourceTarget | null> | DataSourceTarget {
    const cached = this.#entries.get(key);
    if (cached) return cached;
    const pending = this.#loading.get(key);
    if (pending && pending.generation === this.#generation) return pending.promise;
    return this.#start(em, orgId, ref, key);
  }

  #start(em: LazyEntityManager, orgId: number, ref: DataSourceKey, key: string): Promise<DataSourceTarget | null> {
    const generation = this.#generation;
    const promise = this.#load(em, orgId, ref, generation).finally(() => {
      if (this.#loading.get(key)?.promise === promise) this.#loading.delete(key);
    });
    this.#loading.set(key, { generation, promise });
    return promise;
  }

  async #load(em: LazyEntityManager, orgId: number, ref: DataSourceKey, generation: number): Promise<DataSourceTarget | null> {
    // Only the reference itself: a caller's object may carry more (the proxy's carries its kind).
    const row = await this.#dataSources.find(resolveEntityManager(em), orgId, 'id' in ref ? { id: ref.id } : { uid: ref.uid });
    if (!row) return null;
    // The one place a data source's secrets are decrypted for calling it.
    let secrets: Record<string, string> | null;
    try {
      secrets = this.#dataSources.decryptSecrets(row);
    } catch {
      secrets = null;
      this.#log.warn({ component: 'dataproxy', dsId: row.id, orgId }, 'data source secrets unreadable');
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
}
