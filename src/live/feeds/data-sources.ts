import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ChangeListener } from '../../db/change-listener.ts';
import type { Logger } from '../../logging/logger.ts';
import { allows } from '../../services/data-source-access.ts';
import type { DataSourceAccessCache } from '../../services/data-source-permissions.ts';
import { CHANGE_CHANNEL, type DataSourceRow, type DataSourceService } from '../../services/data-sources.ts';
import type { LiveStream } from '../stream.ts';
import type { LiveStreams, StreamRequest } from '../streams.ts';
import { OrgFeed } from './org-feed.ts';

export type DataSourceChangeKind = 'CREATED' | 'UPDATED' | 'DELETED';

export interface DataSourceEvent {
  kind: DataSourceChangeKind;
  orgId: number;
  id: number;
  /** Known for every event except a deletion this instance never saw the data source of. */
  uid: string | null;
  name: string | null;
  /** The data source as stored after the change; null when deleted. */
  dataSource: DataSourceRow | null;
}

/** How a data source changed, when the notification says so (a trigger may not). */
export type ChangeOperation = 'created' | 'updated' | 'deleted';

/** What a data source notification names: the org when known, and the row by id or uid or both. */
export interface DataSourceNotice {
  orgId: number | null;
  id: number | null;
  uid: string | null;
  op: ChangeOperation | null;
}

const OPERATIONS: Record<string, ChangeOperation> = {
  created: 'created', create: 'created', insert: 'created', inserted: 'created',
  updated: 'updated', update: 'updated',
  deleted: 'deleted', delete: 'deleted',
};

/**
 * Reads a `dashgate_datasource_changed` payload whoever sent it. The service sends
 * `<orgId>:<id>[:<operation>]`; a trigger may send JSON (`{"orgId"|"org_id", "id", "uid",
 * "op"|"operation"|"tg_op"|"action"}`) or `<orgId>:<uid>`. Unknown fields are ignored; null when
 * the payload names no data source at all (then a listener can only reload everything it shows).
 */
export function parseDataSourceNotice(payload: string): DataSourceNotice | null {
  const text = payload.trim();
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return null;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    const record = parsed as Record<string, unknown>;
    const notice: DataSourceNotice = {
      orgId: integer(record.orgId ?? record.org_id),
      id: integer(record.id ?? record.datasourceId ?? record.data_source_id),
      uid: typeof record.uid === 'string' && record.uid !== '' ? record.uid : null,
      op: operation(record.op ?? record.operation ?? record.tg_op ?? record.action),
    };
    return notice.id !== null || notice.uid !== null ? notice : null;
  }
  const [org, ref, op] = text.split(':');
  if (ref === undefined || ref === '') return null;
  const id = integer(ref);
  return { orgId: integer(org), id, uid: id === null ? ref : null, op: operation(op) };
}

function integer(value: unknown): number | null {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number > 0 ? number : null;
}

function operation(value: unknown): ChangeOperation | null {
  return typeof value === 'string' ? (OPERATIONS[value.toLowerCase()] ?? null) : null;
}

/** What each org's feed knows of a data source: enough to name it once deleted. */
interface Known {
  uid: string;
  name: string;
}

/**
 * The `dataSourceChanged` feed: creations, updates and deletions of an org's data sources, heard
 * from `dashgate_datasource_changed` (sent by the service and by triggers, so also for changes
 * made through SQL). A change goes only to subscribers who may read that data source now (its
 * permissions, through the access cache: usually no statement). A deletion, which leaves no
 * permissions to look at, goes to the org's Admins and to those last told of the data source.
 */
export class DataSourceFeed {
  readonly #streams: LiveStreams;
  readonly #dataSources: DataSourceService;
  readonly #access: DataSourceAccessCache | null;
  readonly #changes: ChangeListener;
  readonly #log: Logger;
  readonly #feed: OrgFeed<DataSourceEvent, DataSourceNotice, Known>;
  /** The data sources each non-Admin stream was last told of (to announce their deletion to it alone). */
  readonly #seen = new WeakMap<object, Set<number>>();

  constructor(streams: LiveStreams, orm: MikroORM, dataSources: DataSourceService, changes: ChangeListener, log: Logger, access: DataSourceAccessCache | null = null) {
    this.#streams = streams;
    this.#dataSources = dataSources;
    this.#access = access;
    this.#changes = changes;
    this.#log = log;
    this.#feed = new OrgFeed(streams, orm, log, {
      what: 'a data source change',
      load: async (em, orgId) => {
        const rows = await em.execute<Array<{ id: number; uid: string; name: string }>>('select id, uid, name from data_source where org_id = ?', [orgId]);
        return new Map(rows.map((row) => [row.id, { uid: row.uid, name: row.name }]));
      },
      read: (em, orgId, known, notices) => this.#readBatch(em, orgId, known, notices),
      admits: (em, stream, event) => this.#admits(em, stream, event),
      keyOf: (event) => event.id,
      merge: mergeDataSourceEvents,
    });
    changes.subscribe(CHANGE_CHANNEL, {
      notify: (payload) => this.#onNotice(payload),
      // A lost listener ends every stream (LiveStreams hears it on its own channel).
      reset: () => undefined,
    });
  }

  /** Changes of the caller's org's data sources, from now on. */
  open(request: StreamRequest): LiveStream<DataSourceEvent> {
    return this.#feed.open(request);
  }

  #onNotice(payload: string): void {
    const notice = parseDataSourceNotice(payload);
    if (!notice) {
      this.#log.debug({ payload }, 'data source notification names no data source; ignored by subscriptions');
      return;
    }
    // Without an org, each org with subscribers here looks for the data source among its own.
    this.#feed.queue(notice.orgId, notice);
  }

  #admits(em: EntityManager, stream: LiveStream<DataSourceEvent>, event: DataSourceEvent): boolean | Promise<boolean> {
    const principal = this.#streams.principalOf(stream as LiveStream<unknown>);
    if (!principal) return false;
    if (!this.#access || principal.orgRole === 'Admin') return true;
    let seen = this.#seen.get(stream);
    if (!seen) this.#seen.set(stream, (seen = new Set()));
    if (event.kind === 'DELETED') return seen.delete(event.id);
    const decide = (level: number): boolean => {
      const allowed = allows(level as 0 | 1 | 2 | 3, 'read');
      if (allowed) seen.add(event.id);
      else seen.delete(event.id);
      return allowed;
    };
    const level = this.#access.level(em, principal, event.id, this.#changes.mark());
    return level instanceof Promise ? level.then(decide) : decide(level);
  }

  async #readBatch(em: EntityManager, orgId: number, known: Map<number, Known>, notices: DataSourceNotice[]): Promise<DataSourceEvent[]> {
    // One entry per data source, the latest operation winning.
    const latest = new Map<string, { id: number | null; uid: string | null; op: DataSourceNotice['op'] }>();
    for (const notice of notices) {
      let id = notice.id;
      if (id === null) for (const [knownId, entry] of known) if (entry.uid === notice.uid) id = knownId;
      const key = id !== null ? `id:${id}` : `uid:${notice.uid}`;
      latest.delete(key); // re-inserted last, so events keep the order changes were heard in
      latest.set(key, { id, uid: notice.uid, op: notice.op });
    }
    const ids = [...latest.values()].flatMap((n) => (n.id !== null ? [n.id] : []));
    const uids = [...latest.values()].flatMap((n) => (n.id === null && n.uid !== null ? [n.uid] : []));
    const or = [...(ids.length ? [{ id: { $in: ids } }] : []), ...(uids.length ? [{ uid: { $in: uids } }] : [])];
    const rows = or.length ? await em.find(this.#dataSources.entity, { orgId, $or: or }) : [];
    const byId = new Map(rows.map((row) => [row.id, row]));
    const byUid = new Map(rows.map((row) => [row.uid, row]));

    const events: DataSourceEvent[] = [];
    for (const notice of latest.values()) {
      const row = (notice.id !== null ? byId.get(notice.id) : undefined) ?? (notice.uid !== null ? byUid.get(notice.uid) : undefined);
      if (row) {
        const kind = notice.op === 'created' ? 'CREATED' : notice.op === 'updated' ? 'UPDATED' : known.has(row.id) ? 'UPDATED' : 'CREATED';
        known.set(row.id, { uid: row.uid, name: row.name });
        events.push({ kind, orgId, id: row.id, uid: row.uid, name: row.name, dataSource: row });
        continue;
      }
      if (notice.id === null) continue; // gone, and never known here by that uid: nothing to report
      const previous = known.get(notice.id);
      if (!previous && notice.op !== 'deleted') continue; // created and deleted before anyone here saw it
      known.delete(notice.id);
      events.push({ kind: 'DELETED', orgId, id: notice.id, uid: previous?.uid ?? notice.uid, name: previous?.name ?? null, dataSource: null });
    }
    return events;
  }
}

/** A subscriber that has not read yet only needs the latest state of each data source. */
export function mergeDataSourceEvents(older: DataSourceEvent, newer: DataSourceEvent): DataSourceEvent | null {
  if (older.kind === 'CREATED' && newer.kind === 'DELETED') return null; // never seen, now gone
  if (older.kind === 'CREATED' && newer.kind === 'UPDATED') return { ...newer, kind: 'CREATED' };
  return newer;
}
