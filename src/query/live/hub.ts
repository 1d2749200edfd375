import type { Principal } from '../../auth/principal.ts';
import { badRequest, DomainError } from '../../errors/domain.ts';
import { MESSAGES } from '../../errors/messages.ts';
import type { LiveChanges, StreamRequest } from '../../live/hub.ts';
import { StreamEnd, type LiveStream } from '../../live/stream.ts';
import type { Logger } from '../../logging/logger.ts';
import type { DataResponse } from '../frames/frame.ts';
import { resultsDelta, type ResultDelta } from './delta.ts';
import { shareKey } from './share-key.ts';
import { nextTick, parsePeriod, rangeAt, timeForm } from './timing.ts';

/** A live query as a subscriber asks for it: the `liveQuery` field's arguments, as sent. */
export interface LiveQueryRequest {
  /** The query objects of `POST /api/ds/query`, as sent. */
  queries: ReadonlyArray<Readonly<Record<string, unknown>>>;
  from: string;
  to: string;
  /** A duration (`5s`, `1m`), at least `[live] min_refresh`. */
  refresh: string;
}

/** What one shared run asks the query service: the request's queries over an absolute range (epoch-ms strings). */
export interface QueryRunRequest {
  queries: ReadonlyArray<Readonly<Record<string, unknown>>>;
  from: string;
  to: string;
}

/**
 * Runs one `/api/ds/query` request as `caller` (the envelope, its data sources, kinds and
 * expressions, with their permissions): the answers by refId. Throws a DomainError for what the
 * envelope refuses as a whole (no queries, an unknown data source, access denied).
 */
export type QueryRunner = (caller: Principal, request: QueryRunRequest, signal: AbortSignal) => Promise<ReadonlyMap<string, DataResponse>>;

/** One event of a live query: what changed since the subscriber's previous event. */
export interface LiveQueryEvent {
  /** The tick (epoch ms) whose answer this is: the `now` its range was evaluated at. */
  refreshedAt: number;
  /** Subscribers of this query on this instance. */
  viewers: number;
  /** Only the refIds that changed; all of them in a subscriber's first event. */
  results: ResultDelta[];
}

export interface LiveQueryOptions {
  runner: QueryRunner;
  /**
   * Throws the refusal a new request would get when `caller` may no longer query every data source
   * `queries` name (their permissions): asked when a subscriber joins a running query and, for
   * every subscriber, before every tick's run.
   */
  authorize?(caller: Principal, queries: ReadonlyArray<Readonly<Record<string, unknown>>>): Promise<void>;
  /** `[live] min_refresh`, in milliseconds. */
  minRefreshMs: number;
  /** Longest a run may take before its refIds fail with a timeout (the query timeout). */
  runTimeoutMs: number;
  /** Counted when a run starts, and when a tick is skipped because the previous run still runs. */
  onUpstreamCall?(): void;
  onSkippedTick?(): void;
  now?: () => number;
}

/** One answer of a shared query; subscribers hold references to it, never copies. */
interface Snapshot {
  at: number;
  results: ReadonlyMap<string, DataResponse>;
  /** The deltas from an older snapshot to this one, worked out once for every subscriber that had it. */
  deltas: WeakMap<Snapshot, ResultDelta[]>;
  full: ResultDelta[] | null;
}

interface Viewer {
  stream: LiveStream<Snapshot>;
  /** The snapshot this subscriber's last event brought it to. */
  sent: Snapshot | null;
}

interface Shared {
  key: string;
  queries: LiveQueryRequest['queries'];
  from: string;
  to: string;
  refreshMs: number;
  viewers: Set<Viewer>;
  latest: Snapshot | null;
  /** The run in flight; a tick meeting one is skipped. */
  running: AbortController | null;
  /** Settles when the first run has answered (rejects when the envelope refused the request). */
  first: Promise<void>;
  timer: NodeJS.Timeout | null;
}

/**
 * Live queries: subscribers whose requests share a key (share-key.ts: same org, queries, range
 * and refresh) are served by one run per tick, on ticks aligned on the epoch so they meet. Each
 * subscriber's stream is a one-slot "latest state": a reader slower than the ticks gets, when it
 * reads, the delta from what it last had to the newest answer, never a queue. The streams are
 * LiveChanges' own (limits, rights rechecked on credential changes, the final event at shutdown);
 * at every tick the callers are also rechecked before the run, so a revoked token, a disabled
 * user or a lost role ends the stream at the latest then.
 */
export class LiveQueries {
  readonly #live: LiveChanges;
  readonly #log: Logger;
  readonly #options: LiveQueryOptions;
  readonly #now: () => number;
  readonly #shared = new Map<string, Shared>();
  #closed = false;
  upstreamCalls = 0;
  skippedTicks = 0;

  constructor(live: LiveChanges, log: Logger, options: LiveQueryOptions) {
    this.#live = live;
    this.#log = log;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Distinct live queries running on this instance. */
  get active(): number {
    return this.#shared.size;
  }

  /** Subscribers of live queries on this instance. */
  get subscribers(): number {
    let count = 0;
    for (const shared of this.#shared.values()) count += shared.viewers.size;
    return count;
  }

  async open(request: StreamRequest, query: LiveQueryRequest): Promise<AsyncIterableIterator<LiveQueryEvent | StreamEnd>> {
    const refreshMs = parsePeriod(query.refresh);
    if (refreshMs === null) throw badRequest(MESSAGES.live.badRefresh(query.refresh));
    if (refreshMs < this.#options.minRefreshMs) throw badRequest(MESSAGES.live.refreshTooShort(query.refresh, `${this.#options.minRefreshMs}ms`));
    for (const text of [query.from, query.to]) if (timeForm(text) === null) throw badRequest(MESSAGES.live.badRange(text));
    const key = shareKey({ orgId: request.principal.orgId, queries: query.queries, from: query.from, to: query.to, refreshMs });
    let shared = this.#shared.get(key);
    // The first subscriber's run loads the data sources as that subscriber; a later one is asked here.
    if (shared && this.#options.authorize) await this.#options.authorize(request.principal, query.queries);
    shared = this.#shared.get(key);
    const viewer: Viewer = {
      sent: null,
      stream: this.#live.openStream<Snapshot>(request, {
        capacity: 1,
        keyOf: () => 0,
        merge: (_older, newer) => newer,
        onClose: () => this.#leave(key, viewer),
      }),
    };
    if (!shared) {
      shared = {
        key, queries: query.queries, from: query.from, to: query.to, refreshMs,
        viewers: new Set([viewer]), latest: null, running: null, first: Promise.resolve(), timer: null,
      };
      this.#shared.set(key, shared);
      shared.first = this.#run(shared, this.#now(), true);
      this.#schedule(shared);
    } else {
      shared.viewers.add(viewer);
      if (shared.latest) viewer.stream.push(shared.latest, overflow);
    }
    try {
      await shared.first;
    } catch (error) {
      void viewer.stream.return();
      throw error;
    }
    return this.#events(shared, viewer);
  }

  /** Stops every run and tick; the streams themselves end with LiveChanges (its `close`). */
  close(): void {
    this.#closed = true;
    for (const shared of this.#shared.values()) {
      if (shared.timer) clearTimeout(shared.timer);
      shared.running?.abort();
      for (const viewer of shared.viewers) void viewer.stream.return();
    }
    this.#shared.clear();
  }

  #events(shared: Shared, viewer: Viewer): AsyncIterableIterator<LiveQueryEvent | StreamEnd> {
    const stream = viewer.stream;
    const iterator: AsyncIterableIterator<LiveQueryEvent | StreamEnd> = {
      next: async () => {
        const item = await stream.next();
        if (item.done || item.value instanceof StreamEnd) return item as IteratorResult<StreamEnd>;
        const snapshot = item.value;
        const event: LiveQueryEvent = { refreshedAt: snapshot.at, viewers: shared.viewers.size, results: deltaFrom(viewer.sent, snapshot) };
        viewer.sent = snapshot;
        return { value: event, done: false };
      },
      return: async () => {
        await stream.return();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  #schedule(shared: Shared): void {
    if (this.#closed) return;
    const now = this.#now();
    const at = nextTick(now, shared.refreshMs);
    shared.timer = setTimeout(() => {
      shared.timer = null;
      if (this.#shared.get(shared.key) !== shared) return;
      this.#schedule(shared);
      void this.#run(shared, at, false);
    }, at - now);
    shared.timer.unref();
  }

  /** One shared run at tick `at`; the first one rejects when the envelope refuses the request. */
  async #run(shared: Shared, at: number, first: boolean): Promise<void> {
    if (shared.running) {
      this.skippedTicks++;
      this.#options.onSkippedTick?.();
      this.#log.debug({ refreshMs: shared.refreshMs, at }, 'live query tick skipped: the previous run is still running');
      return;
    }
    const controller = new AbortController();
    shared.running = controller;
    let settled = true;
    try {
      if (!first) {
        await this.#live.recheckStreams([...shared.viewers].map((v) => v.stream as LiveStream<unknown>));
        await this.#authorizeViewers(shared);
      }
      const caller = this.#caller(shared);
      if (!caller || controller.signal.aborted) return;
      const range = rangeAt(shared.from, shared.to, at);
      this.upstreamCalls++;
      this.#options.onUpstreamCall?.();
      const run = this.#options.runner(caller, { queries: shared.queries, from: range.from, to: range.to }, controller.signal);
      let results: ReadonlyMap<string, DataResponse>;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.#options.runTimeoutMs);
      });
      try {
        const answer = await Promise.race([run, deadline]);
        if (answer === 'timeout') {
          // The run may go on (an upstream that ignores the abort): it keeps the slot until it
          // settles, so later ticks are skipped rather than stacked on it.
          controller.abort();
          settled = false;
          run.then(() => undefined, () => undefined).finally(() => {
            if (shared.running === controller) shared.running = null;
          });
          results = failedResults(shared.queries, new DomainError('UNAVAILABLE', MESSAGES.live.runTimeout), 504, 'downstream');
        } else results = answer;
      } catch (error) {
        if (first && error instanceof DomainError) throw error;
        if (!(error instanceof DomainError)) this.#log.warn({ err: error }, 'a live query run failed');
        results = error instanceof DomainError
          ? failedResults(shared.queries, error, error.status, 'plugin')
          : failedResults(shared.queries, new DomainError('INTERNAL', MESSAGES.live.runFailed), 500, 'plugin');
      } finally {
        clearTimeout(timer);
      }
      if (this.#shared.get(shared.key) !== shared) return; // everyone left meanwhile
      const snapshot: Snapshot = { at, results, deltas: new WeakMap(), full: null };
      shared.latest = snapshot;
      for (const viewer of shared.viewers) viewer.stream.push(snapshot, overflow);
    } finally {
      if (settled && shared.running === controller) shared.running = null;
    }
  }

  /**
   * Ends the stream of every subscriber who may no longer query the data sources (a permission,
   * team membership or role taken away), with the error a new request would get. Subscribers with
   * the same identity are asked once.
   */
  async #authorizeViewers(shared: Shared): Promise<void> {
    const authorize = this.#options.authorize;
    if (!authorize) return;
    const verdicts = new Map<string, Promise<DomainError | null>>();
    for (const viewer of [...shared.viewers]) {
      const principal = this.#live.principalOf(viewer.stream as LiveStream<unknown>);
      if (!principal) continue;
      const identity = `${principal.orgId}:${principal.userId ?? '-'}:${principal.orgRole}:${principal.kind}`;
      let verdict = verdicts.get(identity);
      if (!verdict) {
        // Only a refusal ends the stream; a data source gone or another failure is the run's to report per refId.
        verdict = authorize(principal, shared.queries).then(() => null, (error: unknown) => {
          if (error instanceof DomainError && (error.code === 'FORBIDDEN' || error.code === 'UNAUTHENTICATED')) return error;
          return null;
        });
        verdicts.set(identity, verdict);
      }
      const refused = await verdict;
      if (refused) viewer.stream.end(refused);
    }
  }

  /** Whom the shared run acts as: any subscriber still open (all of one org, all rechecked). */
  #caller(shared: Shared): Principal | null {
    for (const viewer of shared.viewers) {
      const principal = this.#live.principalOf(viewer.stream as LiveStream<unknown>);
      if (principal) return principal;
    }
    return null;
  }

  #leave(key: string, viewer: Viewer): void {
    const shared = this.#shared.get(key);
    if (!shared || !shared.viewers.delete(viewer) || shared.viewers.size > 0) return;
    if (shared.timer) clearTimeout(shared.timer);
    shared.running?.abort();
    this.#shared.delete(key);
  }
}

/** A one-slot stream never overflows: a newer snapshot replaces the one waiting. */
const overflow = () => new DomainError('UNAVAILABLE', MESSAGES.live.overflow(1));

function deltaFrom(sent: Snapshot | null, snapshot: Snapshot): ResultDelta[] {
  if (sent === null) return (snapshot.full ??= resultsDelta(null, snapshot.results));
  let delta = snapshot.deltas.get(sent);
  if (!delta) snapshot.deltas.set(sent, (delta = resultsDelta(sent.results, snapshot.results)));
  return delta;
}

/** Every refId of the request failing with one error, as the envelope reports a group's failure. */
function failedResults(queries: LiveQueryRequest['queries'], error: Error, status: number, errorSource: 'plugin' | 'downstream'): Map<string, DataResponse> {
  const results = new Map<string, DataResponse>();
  for (const query of queries) {
    const refId = typeof query.refId === 'string' && query.refId !== '' ? query.refId : 'A';
    results.set(refId, { error: error.message, errorSource, status });
  }
  return results;
}
