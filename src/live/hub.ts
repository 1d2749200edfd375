import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { AUTH_CHANGE_CHANNEL } from '../auth/principal-cache.ts';
import type { Principal } from '../auth/principal.ts';
import { recheckKey, recheckPrincipals } from '../auth/recheck.ts';
import type { ChangeListener, ChangeSubscriber } from '../db/change-listener.ts';
import type { Logger } from '../logging/logger.ts';
import { CHANGE_CHANNEL, type DataSourceRow, type DataSourceService } from '../services/data-sources.ts';
import { allows } from '../services/data-source-access.ts';
import type { DataSourceAccessCache } from '../services/data-source-permissions.ts';
import { AUTH_ERRORS, DomainError } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { loadOrgMemberLogins, mergeOrgMemberEvents, ORG_MEMBERS_CHANNEL, parseOrgMemberNotice, readOrgMemberChanges, type OrgMemberEvent, type OrgMemberNotice } from './org-members.ts';
import { parseDataSourceNotice, type DataSourceNotice } from './payload.ts';
import { LiveStream } from './stream.ts';

/** Notified by a trigger (migration 20261124100000) whenever the alert pause switch is written. */
export const ALERTS_PAUSED_CHANNEL = 'dashgate_alerts_paused_changed';

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

export interface AlertsPausedEvent {
  paused: boolean;
}

export interface LiveLimits {
  maxStreams: number;
  maxStreamsPerPrincipal: number;
  queueSize: number;
}

/** Who a stream serves and what it needs, re-evaluated whenever credentials may have changed. */
export interface StreamRequest {
  principal: Principal;
  /** Throws the error a query would get when `principal` may no longer read this stream. */
  authorize(principal: Principal): void;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
}

interface Subscriber<E> {
  stream: LiveStream<E>;
  principal: Principal;
  authorize(principal: Principal): void;
  /** The password digest seen by the first recheck; undefined until then. */
  credentialMark?: string | null;
  expiry: NodeJS.Timeout | null;
}

type AnySubscriber = Subscriber<DataSourceEvent> | Subscriber<AlertsPausedEvent> | Subscriber<OrgMemberEvent> | Subscriber<unknown>;

/** How a stream fed from outside this hub queues what its reader has not taken yet. */
export interface StreamOptions<E> {
  /** Most distinct events held (1 with a constant `keyOf`: a slot holding only the latest). */
  capacity: number;
  keyOf(event: E): unknown;
  merge(older: E, newer: E): E | null;
  onClose(): void;
}

/** One org's subscribers to one kind of change (`E`), fed by notices (`N`). */
interface OrgFeed<E, N, K> {
  subscribers: Set<Subscriber<E>>;
  /** What of the org this instance knows of (by id), to tell creations from updates and name deletions. */
  known: Map<number, K> | null;
  pending: N[];
  running: boolean;
}

/** A kind of per-org change: how to read what an org has, and what a batch of notices changed. */
interface OrgFeedKind<E, N, K> {
  feeds: Map<number, OrgFeed<E, N, K>>;
  /** For log lines: "could not read <what> for subscribers". */
  what: string;
  load(em: EntityManager, orgId: number): Promise<Map<number, K>>;
  read(em: EntityManager, orgId: number, known: Map<number, K>, notices: N[]): Promise<E[]>;
  /** Whether `subscriber` may be told of `event`; everyone when absent. */
  admits?(em: EntityManager, subscriber: Subscriber<E>, event: E): boolean | Promise<boolean>;
}

const unavailable = (message: string) => new DomainError('UNAVAILABLE', message);
const ERRORS = {
  notListening: () => unavailable(MESSAGES.live.notListening),
  feedLost: () => unavailable(MESSAGES.live.feedLost),
  shuttingDown: () => unavailable(MESSAGES.live.shuttingDown),
  readFailed: () => unavailable(MESSAGES.live.readFailed),
  clientGone: () => unavailable(MESSAGES.live.clientGone),
  overflow: (size: number) => unavailable(MESSAGES.live.overflow(size)),
  tooMany: (limit: number) => new DomainError('TOO_MANY_REQUESTS', MESSAGES.live.tooMany(limit)),
  tooManyForPrincipal: (limit: number) => new DomainError('TOO_MANY_REQUESTS', MESSAGES.live.tooManyForPrincipal(limit)),
};
const RECHECK_RETRY_MS = 1_000;
/** setTimeout's largest delay; a later expiry is rechecked when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Turns the change listener's notifications into GraphQL subscription streams on this instance.
 * Every change is read from the database once per instance, however many subscribers get it, and
 * only for orgs someone here is subscribed to. Authorization holds for a stream's life: whenever
 * credentials change anywhere (the auth triggers notify), every open stream's principal is read
 * again in one or two statements, and a stream whose token or user lost the right ends with the
 * error a new request would get. While the listener is down nothing would be heard, so every
 * stream ends then (clients subscribe again and reload) and new ones are refused.
 */
export class LiveChanges {
  readonly #orm: MikroORM;
  readonly #dataSources: DataSourceService;
  readonly #access: DataSourceAccessCache | null;
  /** The data sources each non-Admin subscriber was last told of (to announce their deletion to it alone). */
  readonly #seen = new WeakMap<object, Set<number>>();
  readonly #changes: ChangeListener;
  readonly #log: Logger;
  readonly #limits: LiveLimits;
  readonly #dataSourceFeeds: OrgFeedKind<DataSourceEvent, DataSourceNotice, { uid: string; name: string }>;
  readonly #memberFeeds: OrgFeedKind<OrgMemberEvent, OrgMemberNotice, string>;
  readonly #alerts = new Set<Subscriber<AlertsPausedEvent>>();
  /** Streams other modules feed (live queries), by stream; held here for limits, rechecks and shutdown. */
  readonly #others = new Map<LiveStream<unknown>, Subscriber<unknown>>();
  /** The pause switch as last delivered to each alerts subscriber. */
  readonly #lastPaused = new WeakMap<Subscriber<AlertsPausedEvent>, boolean>();
  readonly #perPrincipal = new Map<string, number>();
  #open = 0;
  #closed = false;
  #alertsRead: { running: boolean; again: boolean } = { running: false, again: false };
  #recheck: { running: boolean; again: boolean; retry: NodeJS.Timeout | null } = { running: false, again: false, retry: null };
  /** Reads started for subscribers (by a notice, a new stream, a recheck) and not finished yet. */
  readonly #reading = new Set<Promise<unknown>>();

  constructor(orm: MikroORM, dataSources: DataSourceService, changes: ChangeListener, log: Logger, limits: LiveLimits, access: DataSourceAccessCache | null = null) {
    this.#orm = orm;
    this.#dataSources = dataSources;
    this.#access = access;
    this.#changes = changes;
    this.#log = log;
    this.#limits = limits;
    this.#dataSourceFeeds = {
      feeds: new Map(),
      what: 'a data source change',
      load: async (em, orgId) => {
        const rows = await em.execute<Array<{ id: number; uid: string; name: string }>>('select id, uid, name from data_source where org_id = ?', [orgId]);
        return new Map(rows.map((row) => [row.id, { uid: row.uid, name: row.name }]));
      },
      read: (em, orgId, known, notices) => this.#readBatch(em, orgId, known, notices),
      admits: (em, subscriber, event) => this.#admitsDataSource(em, subscriber, event),
    };
    this.#memberFeeds = { feeds: new Map(), what: 'an org member change', load: loadOrgMemberLogins, read: readOrgMemberChanges };
    const reset = (listening: boolean) => {
      if (!listening) this.#endAll(ERRORS.feedLost);
    };
    changes.subscribe(CHANGE_CHANNEL, { notify: (payload) => this.#onDataSourceNotice(payload), reset });
    changes.subscribe(ORG_MEMBERS_CHANNEL, { notify: (payload) => this.#onOrgMemberNotice(payload), reset });
    changes.subscribe(ALERTS_PAUSED_CHANNEL, { notify: () => this.#readAlertsPaused(), reset });
    changes.subscribe(AUTH_CHANGE_CHANNEL, {
      // A failed login changes nobody's rights; everything else on this channel may.
      notify: (payload) => {
        if (!payload.startsWith('login:')) this.#scheduleRecheck();
      },
      reset,
    } satisfies ChangeSubscriber);
  }

  /** Open streams on this instance. */
  get open(): number {
    return this.#open;
  }

  /** Changes of the caller's org's data sources, from now on. */
  openDataSources(request: StreamRequest): LiveStream<DataSourceEvent> {
    return this.#openOrgFeed(this.#dataSourceFeeds, request, (event) => event.id, mergeDataSourceEvents);
  }

  /** Members of the caller's org added, removed, or changed (role, profile, disabled), from now on. */
  openOrgMembers(request: StreamRequest): LiveStream<OrgMemberEvent> {
    return this.#openOrgFeed(this.#memberFeeds, request, (event) => event.userId, mergeOrgMemberEvents);
  }

  /** The alert pause switch now, then each time it flips. */
  openAlertsPaused(request: StreamRequest): LiveStream<AlertsPausedEvent> {
    const subscriber = this.#register<AlertsPausedEvent>(request, {
      keyOf: () => 'paused',
      merge: (_older, newer) => newer,
      onClose: () => this.#alerts.delete(subscriber),
    });
    this.#alerts.add(subscriber);
    this.#readAlertsPaused();
    return subscriber.stream;
  }

  /**
   * A stream another module feeds (the live queries of src/query/live/), under the same rules as
   * this hub's own: the limits on open streams, the caller's rights rechecked whenever
   * credentials change, and the final event at shutdown or when the change feed is lost.
   */
  openStream<E>(request: StreamRequest, options: StreamOptions<E>): LiveStream<E> {
    const subscriber = this.#register<E>(request, {
      ...options,
      onClose: () => {
        this.#others.delete(subscriber.stream as LiveStream<unknown>);
        options.onClose();
      },
    });
    this.#others.set(subscriber.stream as LiveStream<unknown>, subscriber as Subscriber<unknown>);
    return subscriber.stream;
  }

  /** The rights a stream opened by `openStream` holds now, as last rechecked; null once it ended. */
  principalOf(stream: LiveStream<unknown>): Principal | null {
    return this.#others.get(stream)?.principal ?? null;
  }

  /**
   * Rechecks the callers of these streams now (one or two statements for all of them), ending
   * those that lost the right as a credential change would. A failed read keeps the streams.
   */
  async recheckStreams(streams: Iterable<LiveStream<unknown>>): Promise<void> {
    const subscribers: AnySubscriber[] = [];
    for (const stream of streams) {
      const subscriber = this.#others.get(stream);
      if (subscriber && !stream.closed) subscribers.push(subscriber);
    }
    if (subscribers.length === 0) return;
    try {
      await this.#recheckNow(subscribers);
    } catch (error) {
      this.#log.warn({ err: error }, 'could not recheck the credentials of live queries; their streams go on');
    }
  }

  /**
   * Resolves once no read started for subscribers is running. After `close` none starts, so
   * shutdown awaits this before closing the pool: a read still acquiring a connection when the
   * pool ends keeps it checked out for good, and closing the pool then never finishes.
   */
  async settled(): Promise<void> {
    while (this.#reading.size > 0) await Promise.allSettled([...this.#reading]);
  }

  /** Keeps `read` among the reads `settled` waits for; each handles its own failures. */
  #track(read: Promise<unknown>): void {
    this.#reading.add(read);
    const done = () => this.#reading.delete(read);
    read.then(done, done);
  }

  /** Ends every stream with a final error event, and refuses new ones (shutdown). */
  close(): void {
    this.#closed = true;
    if (this.#recheck.retry) clearTimeout(this.#recheck.retry);
    this.#endAll(ERRORS.shuttingDown);
  }

  #register<E>(request: StreamRequest, options: { capacity?: number; keyOf(event: E): unknown; merge(older: E, newer: E): E | null; onClose(): void }): Subscriber<E> {
    if (this.#closed) throw ERRORS.shuttingDown();
    if (!this.#changes.listening) throw ERRORS.notListening();
    const signal = request.signal;
    if (signal?.aborted) throw ERRORS.clientGone();
    const limitKey = request.principal.keyId !== undefined ? `key:${request.principal.keyId}` : `user:${request.principal.userId}`;
    if (this.#open >= this.#limits.maxStreams) throw ERRORS.tooMany(this.#limits.maxStreams);
    const held = this.#perPrincipal.get(limitKey) ?? 0;
    if (held >= this.#limits.maxStreamsPerPrincipal) throw ERRORS.tooManyForPrincipal(this.#limits.maxStreamsPerPrincipal);
    this.#open++;
    this.#perPrincipal.set(limitKey, held + 1);
    const onAbort = () => void subscriber.stream.return();
    const subscriber: Subscriber<E> = {
      principal: request.principal,
      authorize: request.authorize,
      expiry: null,
      stream: new LiveStream<E>({
        capacity: options.capacity ?? this.#limits.queueSize,
        keyOf: options.keyOf,
        merge: options.merge,
        onClose: () => {
          this.#open--;
          const left = (this.#perPrincipal.get(limitKey) ?? 1) - 1;
          if (left > 0) this.#perPrincipal.set(limitKey, left);
          else this.#perPrincipal.delete(limitKey);
          if (subscriber.expiry) clearTimeout(subscriber.expiry);
          signal?.removeEventListener('abort', onAbort);
          options.onClose();
        },
      }),
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // Credentials changed between authentication and now would otherwise go unnoticed; this also
    // learns the token's expiry and the password digest later rechecks compare with.
    this.#scheduleRecheck();
    return subscriber;
  }

  #subscribers(): AnySubscriber[] {
    const all: AnySubscriber[] = [...this.#alerts, ...this.#others.values()];
    for (const feed of this.#dataSourceFeeds.feeds.values()) all.push(...feed.subscribers);
    for (const feed of this.#memberFeeds.feeds.values()) all.push(...feed.subscribers);
    return all;
  }

  #endAll(error: () => DomainError): void {
    for (const subscriber of this.#subscribers()) subscriber.stream.end(error());
  }

  // --- per-org feeds -----------------------------------------------------------------------

  #openOrgFeed<E, N, K>(kind: OrgFeedKind<E, N, K>, request: StreamRequest, keyOf: (event: E) => unknown, merge: (older: E, newer: E) => E | null): LiveStream<E> {
    const orgId = request.principal.orgId;
    let feed = kind.feeds.get(orgId);
    const subscriber = this.#register<E>(request, {
      keyOf,
      merge,
      onClose: () => {
        const current = kind.feeds.get(orgId);
        current?.subscribers.delete(subscriber);
        if (current && current.subscribers.size === 0 && !current.running) kind.feeds.delete(orgId);
      },
    });
    if (!feed) kind.feeds.set(orgId, (feed = { subscribers: new Set(), known: null, pending: [], running: false }));
    feed.subscribers.add(subscriber);
    if (feed.known === null) this.#track(this.#drain(kind, orgId, feed));
    return subscriber.stream;
  }

  /** Queues a notice for its org's feed, or for every org's when it names none. */
  #queue<E, N, K>(kind: OrgFeedKind<E, N, K>, orgId: number | null, notice: N): void {
    const feeds = orgId !== null ? [[orgId, kind.feeds.get(orgId)] as const] : [...kind.feeds.entries()];
    for (const [id, feed] of feeds) {
      if (!feed) continue;
      feed.pending.push(notice);
      this.#track(this.#drain(kind, id, feed));
    }
  }

  /** Works through an org's notices in order, one batch at a time, one statement per batch. */
  async #drain<E, N, K>(kind: OrgFeedKind<E, N, K>, orgId: number, feed: OrgFeed<E, N, K>): Promise<void> {
    if (feed.running) return;
    feed.running = true;
    try {
      while (feed.subscribers.size > 0 && (feed.known === null || feed.pending.length > 0)) {
        const em = this.#orm.em.fork({ clear: true });
        if (feed.known === null) {
          feed.known = await kind.load(em, orgId);
          continue;
        }
        const batch = feed.pending.splice(0);
        for (const event of await kind.read(em, orgId, feed.known, batch)) {
          for (const subscriber of feed.subscribers) {
            if (kind.admits) {
              const admitted = kind.admits(em, subscriber, event);
              if (!(admitted instanceof Promise ? await admitted : admitted)) continue;
            }
            subscriber.stream.push(event, () => ERRORS.overflow(this.#limits.queueSize));
          }
        }
      }
    } catch (error) {
      this.#log.warn({ err: error, orgId }, `could not read ${kind.what} for subscribers; ending their streams`);
      for (const subscriber of feed.subscribers) subscriber.stream.end(ERRORS.readFailed());
      feed.pending = [];
    } finally {
      feed.running = false;
      if (feed.subscribers.size === 0 && kind.feeds.get(orgId) === feed) kind.feeds.delete(orgId);
    }
  }

  // --- data sources -------------------------------------------------------------------------

  #onDataSourceNotice(payload: string): void {
    const notice = parseDataSourceNotice(payload);
    if (!notice) {
      this.#log.debug({ payload }, 'data source notification names no data source; ignored by subscriptions');
      return;
    }
    // Without an org, each org with subscribers here looks for the data source among its own.
    this.#queue(this.#dataSourceFeeds, notice.orgId, notice);
  }

  /**
   * A data source change goes only to subscribers who may read that data source now (its
   * permissions, through the access cache: usually no statement). A deletion, which leaves no
   * permissions to look at, goes to the org's Admins and to those last told of the data source.
   */
  #admitsDataSource(em: EntityManager, subscriber: Subscriber<DataSourceEvent>, event: DataSourceEvent): boolean | Promise<boolean> {
    const principal = subscriber.principal;
    if (!this.#access || principal.orgRole === 'Admin') return true;
    let seen = this.#seen.get(subscriber);
    if (!seen) this.#seen.set(subscriber, (seen = new Set()));
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

  async #readBatch(em: EntityManager, orgId: number, known: Map<number, { uid: string; name: string }>, notices: DataSourceNotice[]): Promise<DataSourceEvent[]> {
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

  // --- org members ---------------------------------------------------------------------------

  #onOrgMemberNotice(payload: string): void {
    const notice = parseOrgMemberNotice(payload);
    if (!notice) {
      this.#log.debug({ payload }, 'org member notification names no member; ignored by subscriptions');
      return;
    }
    this.#queue(this.#memberFeeds, notice.orgId, notice);
  }

  // --- alert pause switch -------------------------------------------------------------------

  /** Reads the switch (one read at a time, so what subscribers see only moves forward). */
  #readAlertsPaused(): void {
    const state = this.#alertsRead;
    if (state.running) {
      state.again = true;
      return;
    }
    if (this.#alerts.size === 0) return;
    state.running = true;
    state.again = false;
    this.#track((async () => {
      try {
        const rows = await this.#orm.em.fork().execute<Array<{ paused: boolean }>>('select paused from alert_pause_state where id = 1');
        const paused = Boolean(rows[0]?.paused);
        for (const subscriber of this.#alerts) {
          if (this.#lastPaused.get(subscriber) === paused) continue;
          this.#lastPaused.set(subscriber, paused);
          subscriber.stream.push({ paused }, () => ERRORS.overflow(1));
        }
      } catch (error) {
        this.#log.warn({ err: error }, 'could not read the alert pause switch for subscribers; ending their streams');
        for (const subscriber of this.#alerts) subscriber.stream.end(ERRORS.readFailed());
      } finally {
        state.running = false;
        if (state.again) this.#readAlertsPaused();
      }
    })());
  }

  // --- authorization for the life of a stream ------------------------------------------------

  #scheduleRecheck(): void {
    const state = this.#recheck;
    if (state.running) {
      state.again = true;
      return;
    }
    if (state.retry) {
      clearTimeout(state.retry);
      state.retry = null;
    }
    state.running = true;
    state.again = false;
    // Started on the next tick, so a stream registering now is among those it reads.
    this.#track(Promise.resolve().then(() => this.#runRecheck()).catch((error: unknown) => {
      this.#log.error({ err: error }, 'rechecking the credentials of open subscriptions failed');
    }).finally(() => {
      state.running = false;
      if (state.again) this.#scheduleRecheck();
    }));
  }

  async #runRecheck(): Promise<void> {
    const subscribers = this.#subscribers();
    if (subscribers.length === 0) return;
    try {
      await this.#recheckNow(subscribers);
    } catch (error) {
      // Unverified is not revoked: keep the streams and try again shortly.
      this.#log.warn({ err: error }, 'could not recheck the credentials of open subscriptions; retrying');
      if (!this.#closed) {
        this.#recheck.retry = setTimeout(() => {
          this.#recheck.retry = null;
          this.#scheduleRecheck();
        }, RECHECK_RETRY_MS);
        this.#recheck.retry.unref();
      }
    }
  }

  /** Reads the subscribers' rights again and ends the streams of those that lost them; throws when the read fails. */
  async #recheckNow(subscribers: AnySubscriber[]): Promise<void> {
    const results = await recheckPrincipals(this.#orm.em.fork(), subscribers.map((s) => s.principal));
    for (const subscriber of subscribers) {
      if (subscriber.stream.closed) continue;
      const result = results.get(recheckKey(subscriber.principal));
      if (!result) continue;
      if ('error' in result) {
        subscriber.stream.end(result.error);
        continue;
      }
      if (subscriber.credentialMark === undefined) subscriber.credentialMark = result.credentialMark;
      else if (subscriber.credentialMark !== result.credentialMark) {
        subscriber.stream.end(AUTH_ERRORS.badPassword());
        continue;
      }
      try {
        subscriber.authorize(result.principal);
      } catch (error) {
        subscriber.stream.end(error instanceof DomainError ? error : AUTH_ERRORS.unauthorized());
        continue;
      }
      subscriber.principal = result.principal;
      this.#watchExpiry(subscriber, result.expiresAt);
    }
  }

  #watchExpiry(subscriber: AnySubscriber, expiresAt: number | null): void {
    if (subscriber.expiry) clearTimeout(subscriber.expiry);
    subscriber.expiry = null;
    if (expiresAt === null) return;
    const delay = expiresAt - Date.now();
    subscriber.expiry = setTimeout(() => {
      if (delay > MAX_TIMER_MS) this.#scheduleRecheck();
      else subscriber.stream.end(AUTH_ERRORS.expiredKey());
    }, Math.min(Math.max(delay, 0), MAX_TIMER_MS));
    subscriber.expiry.unref();
  }
}

/** A subscriber that has not read yet only needs the latest state of each data source. */
function mergeDataSourceEvents(older: DataSourceEvent, newer: DataSourceEvent): DataSourceEvent | null {
  if (older.kind === 'CREATED' && newer.kind === 'DELETED') return null; // never seen, now gone
  if (older.kind === 'CREATED' && newer.kind === 'UPDATED') return { ...newer, kind: 'CREATED' };
  return newer;
}
