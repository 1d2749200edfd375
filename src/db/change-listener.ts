import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../logging/logger.ts';
import type { PgConnection } from './embedded.ts';

const RECONNECT_DELAY_MS = 1_000;
/** A query (a barrier round trip) slower than this fails, and the connection is replaced. */
const BARRIER_TIMEOUT_MS = 5_000;

/** A query on the listening connection, under BARRIER_TIMEOUT_MS (pg reads the limit from a query's config too; its types leave it out). */
function timed(text: string, values?: unknown[]): pg.QueryConfig {
  return { text, values, query_timeout: BARRIER_TIMEOUT_MS } as pg.QueryConfig;
}

/** A barrier round trip sent and not yet answered; `settle` ends it (an error: unanswered), once. */
interface InFlight {
  number: number;
  waiters: number;
  /** `performance.now()` when it went out. */
  sentAt: number;
  done: Promise<boolean>;
  settle(error?: Error): void;
}

/**
 * The empty query as pg's query object interface (what pg calls on the query it runs): the answer
 * to an empty query is EmptyQueryResponse then ReadyForQuery; an error (or the connection ending)
 * reaches `handleError`, possibly before a ReadyForQuery, and `settle` only counts the first call.
 */
function barrierQuery(settle: (error?: Error) => void) {
  const ignore = () => {};
  return {
    submit(connection: { query(text: string): void }) {
      connection.query('');
    },
    handleEmptyQuery: ignore,
    handleRowDescription: ignore,
    handleDataRow: ignore,
    handleCommandComplete: ignore,
    handleReadyForQuery: () => settle(),
    handleError: (error: Error) => settle(error),
  };
}
/** Shows up in pg_stat_activity, so operators (and tests) can tell the listener apart. */
export const LISTENER_APPLICATION_NAME = 'dashgate-change-listener';

/** A random positive 63-bit advisory lock key, as the decimal text PostgreSQL's bigint takes. */
function randomLockKey(): string {
  return (randomBytes(8).readBigUInt64BE() >> 1n | 1n << 61n).toString();
}

/** An in-memory cache kept in step with PostgreSQL through one channel. */
export interface ChangeSubscriber {
  notify(payload: string): void;
  /**
   * The listening connection came up or went down. Either way a notification may have been
   * missed, so everything cached must go; while `listening` is false nothing may be cached.
   */
  reset(listening: boolean): void;
}

/**
 * Lets a cache hit prove it misses no change committed before its request arrived. A request
 * takes a `mark()` when it arrives; `caughtUp(mark)` resolves true once every notification
 * committed before then has reached the subscribers, false when that cannot be known (then the
 * caller must read the database).
 */
export interface ChangeBarrier {
  mark(): number;
  caughtUp(mark: number): boolean | Promise<boolean>;
}

/**
 * One LISTEN connection per process for every cache that other instances' writes invalidate.
 * Writers notify inside their transaction (or through triggers), so a message arrives once the
 * change is visible. If PostgreSQL is unreachable it keeps reconnecting in the background.
 *
 * Notifications travel asynchronously, so on their own they would leave a window in which another
 * instance's committed write is not yet known here. The barrier closes it: a query on the
 * listening connection sent after a commit is answered only after that commit's notifications
 * (PostgreSQL delivers pending notifications before it reads the next command on a listening
 * connection, and the writer signals listeners before its commit returns). Concurrent requests
 * share one round trip: each waits for the first one sent after its mark. Behind a round trip in
 * flight, the next goes out at the end of the event-loop turn that answers it, so every request
 * read meanwhile (under load, many) shares it. With none in flight and the last one asked for by a
 * single caller (a quiet server), it goes out at once: there is no one to wait for, and the wait
 * for the end of the turn cost about 4% of a proxied call's time at one connection.
 */
export class ChangeListener implements ChangeBarrier {
  readonly #subscribers = new Map<string, ChangeSubscriber[]>();
  readonly #connection: PgConnection;
  readonly #log: Logger;
  #client: pg.Client | null = null;
  #sessionLock: string | null = null;
  #closed = false;
  #timer: NodeJS.Timeout | null = null;
  /** Barrier round trips sent so far; a mark is this count when it was taken. */
  #sent = 0;
  /** The highest-numbered round trip answered (a lost connection empties the caches anyway). */
  #answered = 0;
  #inFlight: InFlight | null = null;
  /** Fails the round trip in flight once it has waited BARRIER_TIMEOUT_MS (see `#watch`). */
  #watchdog: NodeJS.Timeout | null = null;
  /** The next round trip, not sent yet (its number is taken when it is): anyone may join it. */
  #next: Promise<boolean> | null = null;
  /** Callers waiting for `#next`. */
  #nextWaiters = 0;
  /** How many callers the last answered round trip served: one means no batch worth waiting for. */
  #lastWaiters = 0;

  constructor(connection: PgConnection, log: Logger) {
    this.#connection = connection;
    this.#log = log;
  }

  /** Subscribes before `start()`: channels are listened to when the connection opens. */
  subscribe(channel: string, subscriber: ChangeSubscriber): void {
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
    this.#subscribers.set(channel, [...(this.#subscribers.get(channel) ?? []), subscriber]);
  }

  get listening(): boolean {
    return this.#client !== null;
  }

  /**
   * A session advisory lock key the listening connection holds for as long as it is open, new for
   * each connection; null while not listening. Other instances learn whether this one is still
   * connected by trying that lock: PostgreSQL frees it the moment the connection ends, whether the
   * process closed it, died or was cut off. Live queries lead under it (query/live/sharing.ts).
   */
  get sessionLock(): string | null {
    return this.#client ? this.#sessionLock : null;
  }

  mark(): number {
    return this.#sent;
  }

  caughtUp(mark: number): boolean | Promise<boolean> {
    if (!this.#client) return false;
    if (this.#answered > mark) return true;
    const inFlight = this.#inFlight;
    if (inFlight && inFlight.number > mark) {
      inFlight.waiters++;
      return inFlight.done;
    }
    if (!inFlight && !this.#next && this.#lastWaiters <= 1) return this.#roundTrip(1);
    this.#nextWaiters++;
    return (this.#next ??= this.#sendNext());
  }

  /** Once the round trip in flight (if any) is answered, at the end of that turn: the next one. */
  async #sendNext(): Promise<boolean> {
    if (this.#inFlight) await this.#inFlight.done;
    await new Promise((resolve) => setImmediate(resolve));
    this.#next = null;
    const waiters = this.#nextWaiters;
    this.#nextWaiters = 0;
    return this.#roundTrip(waiters);
  }

  #roundTrip(waiters: number): Promise<boolean> {
    const client = this.#client;
    if (!client) return Promise.resolve(false);
    const number = ++this.#sent;
    const inFlight: InFlight = { number, waiters, sentAt: performance.now(), done: null!, settle: null! };
    let settled = false;
    inFlight.done = new Promise<boolean>((resolve) => {
      inFlight.settle = (error) => {
        if (settled) return;
        settled = true;
        this.#lastWaiters = inFlight.waiters;
        if (this.#inFlight === inFlight) this.#inFlight = null;
        if (error) {
          // Unanswered, the connection's state is unknown: start over on a new one.
          this.#log.warn({ err: error }, 'change listener barrier failed');
          this.#drop(client);
          return resolve(false);
        }
        if (this.#client !== client) return resolve(false);
        this.#answered = Math.max(this.#answered, number);
        resolve(true);
      };
    });
    this.#inFlight = inFlight;
    // An empty query: nothing to parse, plan or run, yet read as a command like any other. Given to
    // pg as a query object of its own (as cursors are), it builds no result, and its time limit
    // is the watchdog's rather than a timer per round trip.
    client.query(barrierQuery(inFlight.settle) as never);
    this.#watch();
    return inFlight.done;
  }

  /**
   * Fails a round trip unanswered for BARRIER_TIMEOUT_MS. One timer serves every round trip: it
   * is armed when one goes out with none armed, and when it fires it looks at the one in flight
   * then (if any), re-arming for what that one has left.
   */
  #watch(): void {
    if (this.#watchdog) return;
    const check = () => {
      this.#watchdog = null;
      const inFlight = this.#inFlight;
      if (!inFlight) return;
      const left = inFlight.sentAt + BARRIER_TIMEOUT_MS - performance.now();
      if (left > 0) {
        this.#watchdog = setTimeout(check, left);
        this.#watchdog.unref();
        return;
      }
      inFlight.settle(new Error('Query read timeout'));
    };
    this.#watchdog = setTimeout(check, BARRIER_TIMEOUT_MS);
    this.#watchdog.unref();
  }

  async start(): Promise<void> {
    await this.#connect().catch((error: unknown) => {
      this.#log.warn({ err: error }, 'change listener could not connect; caches of data sources and verified credentials stay empty until it does');
      this.#scheduleReconnect();
    });
  }

  #reset(listening: boolean): void {
    for (const list of this.#subscribers.values()) for (const subscriber of list) subscriber.reset(listening);
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ ...this.#connection, application_name: LISTENER_APPLICATION_NAME, keepAlive: true });
    let lock: string;
    // Registered before connecting: a pg client without an 'error' listener crashes the process.
    client.on('error', (error) => {
      this.#log.warn({ err: error }, 'change listener lost its connection');
      this.#drop(client);
    });
    client.on('end', () => this.#drop(client));
    client.on('notification', (message) => {
      for (const subscriber of this.#subscribers.get(message.channel) ?? []) subscriber.notify(message.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.#subscribers.keys()) await client.query(timed(`listen ${channel}`));
      lock = await takeSessionLock(client);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#sessionLock = lock;
    this.#reset(true);
  }

  #drop(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = null;
    this.#sessionLock = null;
    this.#reset(false);
    client.end().catch(() => {});
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#connect().catch((error: unknown) => {
        this.#log.debug({ err: error }, 'change listener reconnect failed');
        this.#scheduleReconnect();
      });
    }, RECONNECT_DELAY_MS);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#watchdog) clearTimeout(this.#watchdog);
    this.#watchdog = null;
    const client = this.#client;
    this.#client = null;
    this.#sessionLock = null;
    this.#reset(false);
    await client?.end().catch(() => {});
  }
}

/** Takes a fresh advisory lock key for the life of `client`'s session (another key if one is taken). */
async function takeSessionLock(client: pg.Client): Promise<string> {
  for (;;) {
    const key = randomLockKey();
    const { rows } = await client.query<{ taken: boolean }>(timed('select pg_try_advisory_lock($1::bigint) as taken', [key]));
    if (rows[0]?.taken) return key;
  }
}
