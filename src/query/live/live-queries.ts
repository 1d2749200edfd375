import type { Principal } from '../../auth/principal.ts';
import { badRequest, DomainError } from '../../errors/domain.ts';
import { MESSAGES } from '../../errors/messages.ts';
import { StreamEnd, type LiveStream } from '../../live/stream.ts';
import { callerKey, type LiveStreams, type StreamRequest } from '../../live/streams.ts';
import type { Logger } from '../../logging/logger.ts';
import type { DataResponse } from '../frames/frame.ts';
import { CallBudget, callsPerRefresh, formatRate } from './budget.ts';
import type { SharedOutcome } from './answer-codec.ts';
import { resultsDelta, type ResultDelta } from './delta.ts';
import { shareKey } from './share-key.ts';
import type { LiveQueryPeers, PeerQuery, SharedAnswer } from './sharing.ts';
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
  /** Subscribers of this query on this instance (other instances' are not counted). */
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
  /** `[live] max_upstream_calls_per_second`: what one caller's live queries may ask for; 0 (or absent): no limit. */
  maxUpstreamCallsPerSecond?: number;
  /** Longest a run may take before its refIds fail with a timeout (the query timeout). */
  runTimeoutMs: number;
  /** Counted when a run starts, and when a tick is skipped because the previous run still runs. */
  onUpstreamCall?(): void;
  onSkippedTick?(): void;
  /**
   * The other instances serving live queries (sharing.ts): one of them fetches each tick of a
   * query they all watch. Absent: this instance runs every live query it serves itself.
   */
  peers?: LiveQueryPeers;
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
  /** The query as other instances know it; null without peers. */
  peer: PeerQuery | null;
  /** The newest tick whose viewers were checked here (at first, when the query started): a peer's answer up to it may go out. */
  checked: number;
  /** A peer's answer for a tick not checked here yet, handed out once it is (the newest only). */
  pending: SharedAnswer | null;
  /** The last tick this instance claimed, and whether it got it (leads). */
  claimed: number;
  leading: boolean;
  /** The leader released the query since this tick's claim began: the claim is tried again. */
  released: boolean;
  unfollow: (() => void) | null;
}

/**
 * Live queries: subscribers whose requests share a key (share-key.ts: same org, queries, range
 * and refresh) are served by one run per tick, on ticks aligned on the epoch so they meet; with
 * peers (sharing.ts), by one run per tick across every instance on the database, the others
 * handing out the answer of the instance that leads the query. Each
 * subscriber's stream is a one-slot "latest state": a reader slower than the ticks gets, when it
 * reads, the delta from what it last had to the newest answer, never a queue. The streams are
 * registered with LiveStreams (limits, rights rechecked on credential changes, the final event at shutdown);
 * at every tick the callers are also rechecked before the run, so a revoked token, a disabled
 * user or a lost role ends the stream at the latest then, and a data source gone ends every
 * stream of the query. What each caller's live queries ask of the data sources is bounded by a
 * budget of calls per second (budget.ts), checked when a subscription opens.
 */
export class LiveQueries {
  readonly #live: LiveStreams;
  readonly #log: Logger;
  readonly #options: LiveQueryOptions;
  readonly #now: () => number;
  readonly #shared = new Map<string, Shared>();
  readonly #budget: CallBudget;
  #closed = false;
  upstreamCalls = 0;
  skippedTicks = 0;
  /** Answers another instance fetched, handed to this instance's viewers. */
  followedAnswers = 0;

  constructor(live: LiveStreams, log: Logger, options: LiveQueryOptions) {
    this.#live = live;
    this.#log = log;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#budget = new CallBudget(options.maxUpstreamCallsPerSecond ?? 0);
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
    // Reserved and registered in one synchronous step, so concurrent subscriptions cannot both fit.
    const calls = callsPerRefresh(query.queries);
    const reserved = this.#budget.reserve(callerKey(request.principal), key, (calls * 1000) / refreshMs);
    if ('refused' in reserved) {
      const { limit, asked, held } = reserved.refused;
      throw new DomainError('TOO_MANY_REQUESTS', MESSAGES.live.overBudget(limit, `${formatRate(asked)}/s (${calls} ${calls === 1 ? 'query' : 'queries'} every ${query.refresh})`, `${formatRate(held)}/s`));
    }
    let viewer: Viewer;
    try {
      viewer = {
        sent: null,
        stream: this.#live.openStream<Snapshot>(request, {
          capacity: 1,
          keyOf: () => 0,
          merge: (_older, newer) => newer,
          onClose: () => {
            reserved.release();
            this.#leave(key, viewer);
          },
        }),
      };
    } catch (error) {
      reserved.release();
      throw error;
    }
    if (!shared) {
      const peers = this.#options.peers;
      const created: Shared = shared = {
        key, queries: query.queries, from: query.from, to: query.to, refreshMs,
        viewers: new Set([viewer]), latest: null, running: null, first: Promise.resolve(), timer: null,
        peer: peers ? { shareKey: key, orgId: request.principal.orgId, refreshMs } : null,
        checked: this.#now(), pending: null, claimed: -Infinity, leading: false, released: false, unfollow: null,
      };
      this.#shared.set(key, created);
      if (peers && created.peer) {
        created.unfollow = peers.follow(created.peer, {
          newest: () => newest(created),
          answer: (answer) => this.#offer(created, answer),
          released: () => void this.#leaderLeft(created),
        });
      }
      shared.first = this.#first(created, request.principal);
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

  /**
   * Stops every run and tick; the streams themselves end with LiveStreams (its `close`). Resolves
   * once this instance's leases went to the others (so one of them leads the next tick) and no
   * statement of its own is under way.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const shared of this.#shared.values()) {
      if (shared.timer) clearTimeout(shared.timer);
      shared.running?.abort();
      shared.unfollow?.();
      for (const viewer of shared.viewers) void viewer.stream.return();
    }
    this.#shared.clear();
    await this.#options.peers?.close();
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
    this.#arm(shared, nextTick(this.#now(), shared.refreshMs));
  }

  /** Runs the query at tick `at`, then schedules the next one. */
  #arm(shared: Shared, at: number): void {
    const delay = at - this.#now();
    shared.timer = setTimeout(() => {
      shared.timer = null;
      if (this.#shared.get(shared.key) !== shared) return;
      // A timer waits at most MAX_TIMER_MS (a longer delay fires at once): a refresh of weeks waits in steps.
      if (delay > MAX_TIMER_MS) return this.#arm(shared, at);
      this.#schedule(shared);
      void this.#tick(shared, at);
    }, Math.min(Math.max(delay, 0), MAX_TIMER_MS));
    shared.timer.unref();
  }

  /**
   * The first answer of a query new on this instance: another instance's answer of the last tick
   * or two when there is one (the subscriber asked about it first), else a run of its own, now.
   * Rejects with the envelope's refusal.
   */
  async #first(shared: Shared, principal: Principal): Promise<void> {
    const peers = this.#options.peers;
    if (peers && shared.peer) {
      const now = this.#now();
      const answer = await peers.latest(shared.peer, now - 2 * shared.refreshMs).catch((error: unknown) => {
        this.#log.warn({ err: error }, 'could not read the answer another instance shared; running the live query here');
        return null;
      });
      if (answer?.outcome.kind === 'results') {
        await this.#options.authorize?.(principal, shared.queries);
        this.#publish(shared, snapshotOf(answer.at, answer.outcome.results));
        return;
      }
    }
    await this.#run(shared, this.#now(), 'first');
  }

  /**
   * One tick. Alone, as one run: the viewers checked, then the fetch. With peers, the viewers are
   * checked here whoever fetches, while the tick is claimed; the instance that gets it fetches and
   * shares the answer, the others hand out the answer they receive once their check is done.
   */
  async #tick(shared: Shared, at: number): Promise<void> {
    const peers = this.#options.peers;
    if (!peers || !shared.peer) return this.#run(shared, at, 'alone');
    shared.released = false;
    let [leads] = await Promise.all([peers.claim(shared.peer, at), this.#check(shared)]);
    if (this.#shared.get(shared.key) !== shared) return;
    shared.checked = Math.max(shared.checked, at);
    shared.claimed = at;
    this.#offerPending(shared);
    // The leader let go meanwhile (its viewers left): its tick is anyone's again.
    if (!leads && shared.released) leads = await peers.claim(shared.peer, at);
    shared.leading = leads;
    if (leads && newest(shared) < at) await this.#run(shared, at, 'led');
  }

  /** The leader released the query: if this instance still waits for its last tick's answer, it claims that tick. */
  async #leaderLeft(shared: Shared): Promise<void> {
    shared.released = true;
    const peers = this.#options.peers;
    const at = shared.claimed;
    if (!peers || !shared.peer || shared.leading || newest(shared) >= at || this.#shared.get(shared.key) !== shared) return;
    if (!(await peers.claim(shared.peer, at)) || this.#shared.get(shared.key) !== shared) return;
    shared.leading = true;
    if (newest(shared) < at) await this.#run(shared, at, 'led');
  }

  /**
   * One run of a shared query at `at`, as any of its viewers, its answer handed to every viewer:
   * the first (`first`: rejects when the envelope refuses the request), a tick's run alone (its
   * viewers checked first), one led for the peers too (checked already; the outcome is shared), or
   * one whose answer was too large to share (checked already). A tick meeting a run still under
   * way is skipped.
   */
  async #run(shared: Shared, at: number, kind: 'first' | 'alone' | 'led' | 'unshared'): Promise<void> {
    if (shared.running) {
      this.skippedTicks++;
      this.#options.onSkippedTick?.();
      this.#log.debug({ refreshMs: shared.refreshMs, at }, 'live query tick skipped: the previous run is still running');
      return;
    }
    const controller = new AbortController();
    shared.running = controller;
    const slot = { heldPastRun: false };
    try {
      if (kind === 'alone') await this.#check(shared);
      const caller = this.#caller(shared);
      if (!caller || controller.signal.aborted) return;
      const results = await this.#fetch(shared, caller, at, controller, kind === 'first', slot);
      if (results === 'gone') {
        // Deleted between the tick's check and its run: nothing left to run, for anyone.
        for (const viewer of [...shared.viewers]) viewer.stream.end(dataSourceGone());
        if (kind === 'led') this.#share(shared, at, { kind: 'gone' });
        return;
      }
      if (this.#shared.get(shared.key) !== shared) return; // everyone left meanwhile
      this.#publish(shared, snapshotOf(at, results));
      if (kind === 'led') this.#share(shared, at, { kind: 'results', results });
    } finally {
      if (!slot.heldPastRun && shared.running === controller) shared.running = null;
    }
  }

  #share(shared: Shared, at: number, outcome: SharedOutcome): void {
    if (shared.peer) this.#options.peers?.share(shared.peer, at, outcome);
  }

  /** The viewers of a query rechecked (credentials, then data source rights), those refused ended. */
  async #check(shared: Shared): Promise<void> {
    await this.#live.recheckStreams([...shared.viewers].map((v) => v.stream as LiveStream<unknown>));
    await this.#authorizeViewers(shared);
  }

  /** A peer's answer: handed out now if its tick was checked here, else once it is. */
  #offer(shared: Shared, answer: SharedAnswer): void {
    if (this.#shared.get(shared.key) !== shared || answer.at <= newest(shared)) return;
    if (answer.at > shared.checked) {
      shared.pending = answer;
      return;
    }
    shared.pending = null;
    const outcome = answer.outcome;
    if (outcome.kind === 'results') {
      this.followedAnswers++;
      this.#publish(shared, snapshotOf(answer.at, outcome.results));
    } else if (outcome.kind === 'gone') {
      for (const viewer of [...shared.viewers]) viewer.stream.end(dataSourceGone());
    } else {
      void this.#run(shared, answer.at, 'unshared');
    }
  }

  #offerPending(shared: Shared): void {
    const pending = shared.pending;
    if (pending && pending.at <= shared.checked) {
      shared.pending = null;
      this.#offer(shared, pending);
    }
  }

  /**
   * The answers of one run at tick `at` as `caller`, every failure turned into the refIds' errors
   * as the envelope reports them, except a data source gone (`'gone'`) and, on the first run, the
   * envelope's refusal (thrown). A run outliving the timeout keeps the query's slot until it
   * settles (`slot.heldPastRun`), so later ticks are skipped rather than stacked on it.
   */
  async #fetch(shared: Shared, caller: Principal, at: number, controller: AbortController, first: boolean, slot: { heldPastRun: boolean }): Promise<ReadonlyMap<string, DataResponse> | 'gone'> {
    const range = rangeAt(shared.from, shared.to, at);
    this.upstreamCalls++;
    this.#options.onUpstreamCall?.();
    const run = this.#options.runner(caller, { queries: shared.queries, from: range.from, to: range.to }, controller.signal);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.#options.runTimeoutMs);
    });
    try {
      const answer = await Promise.race([run, deadline]);
      if (answer !== 'timeout') return answer;
      // The run may go on (an upstream that ignores the abort).
      controller.abort();
      slot.heldPastRun = true;
      run.then(() => undefined, () => undefined).finally(() => {
        if (shared.running === controller) shared.running = null;
      });
      return failedResults(shared.queries, new DomainError('UNAVAILABLE', MESSAGES.live.runTimeout), 504, 'downstream');
    } catch (error) {
      if (first && error instanceof DomainError) throw error;
      if (error instanceof DomainError && error.code === 'NOT_FOUND') return 'gone';
      if (!(error instanceof DomainError)) this.#log.warn({ err: error }, 'a live query run failed');
      return error instanceof DomainError
        ? failedResults(shared.queries, error, error.status, 'plugin')
        : failedResults(shared.queries, new DomainError('INTERNAL', MESSAGES.live.runFailed), 500, 'plugin');
    } finally {
      clearTimeout(timer);
    }
  }

  /** Hands a new answer to every viewer (each stream holds the latest only); later joiners start from it. */
  #publish(shared: Shared, snapshot: Snapshot): void {
    // A first run outrun by a peer's newer answer is no news.
    if (shared.latest && snapshot.at <= shared.latest.at) return;
    shared.latest = snapshot;
    for (const viewer of shared.viewers) viewer.stream.push(snapshot, overflow);
  }

  /**
   * Ends the stream of every subscriber who may no longer query the data sources (a permission,
   * team membership or role taken away), with the error a new request would get, and every
   * stream once a data source is gone (deleted, or its uid changed): a run would only fail with
   * 404 at every refresh. Subscribers with the same identity are asked once.
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
        // A refusal or a data source gone ends the stream; another failure (the database
        // unreachable) is the run's to report per refId.
        verdict = authorize(principal, shared.queries).then(() => null, (error: unknown) => {
          if (error instanceof DomainError && (error.code === 'FORBIDDEN' || error.code === 'UNAUTHENTICATED')) return error;
          if (error instanceof DomainError && error.code === 'NOT_FOUND') return dataSourceGone();
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
    shared.unfollow?.();
    // Another instance watching it leads from now on, from the tick this one leaves unanswered.
    if (shared.peer) this.#options.peers?.release(shared.peer);
  }
}

/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The final event of every stream of a live query whose data source is gone. */
const dataSourceGone = () => new DomainError('NOT_FOUND', MESSAGES.live.dataSourceGone);

/** A one-slot stream never overflows: a newer snapshot replaces the one waiting. */
const overflow = () => new DomainError('UNAVAILABLE', MESSAGES.live.overflow(1));

function snapshotOf(at: number, results: ReadonlyMap<string, DataResponse>): Snapshot {
  return { at, results, deltas: new WeakMap(), full: null };
}

/** The newest tick a shared query has an answer for, handed out or waiting for its check. */
function newest(shared: Shared): number {
  return Math.max(shared.latest?.at ?? -Infinity, shared.pending?.at ?? -Infinity);
}

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
