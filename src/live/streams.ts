import type { MikroORM } from '@mikro-orm/postgresql';
import { AUTH_CHANGE_CHANNEL } from '../auth/principal-cache.ts';
import type { Principal } from '../auth/principal.ts';
import { recheckKey, recheckPrincipals } from '../auth/recheck.ts';
import type { ChangeListener } from '../db/change-listener.ts';
import { AUTH_ERRORS, DomainError } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import { LiveStream } from './stream.ts';

export interface StreamLimits {
  maxStreams: number;
  maxStreamsPerPrincipal: number;
  /** Most distinct events a stream holds for a reader slower than they come (unless it asks for fewer). */
  queueSize: number;
}

/** Who a stream serves and what it needs, re-evaluated whenever credentials may have changed. */
export interface StreamRequest {
  principal: Principal;
  /**
   * Throws the error a query would get when `principal` may no longer read this stream: the
   * subscription field's rule (its role check), asked at every recheck.
   */
  authorize(principal: Principal): void;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
}

/** How a stream queues what its reader has not taken yet. */
export interface StreamOptions<E> {
  /** Most distinct events held (1 with a constant `keyOf`: a slot holding only the latest); `queueSize` by default. */
  capacity?: number;
  keyOf(event: E): unknown;
  merge(older: E, newer: E): E | null;
  onClose(): void;
}

interface Subscriber {
  stream: LiveStream<unknown>;
  principal: Principal;
  authorize(principal: Principal): void;
  /** The password digest seen by the first recheck; undefined until then. */
  credentialMark?: string | null;
  expiry: NodeJS.Timeout | null;
}

const unavailable = (message: string) => new DomainError('UNAVAILABLE', message);

/** The final events streams end with, for the registry and the feeds alike. */
export const STREAM_ERRORS = {
  notListening: () => unavailable(MESSAGES.live.notListening),
  feedLost: () => unavailable(MESSAGES.live.feedLost),
  shuttingDown: () => unavailable(MESSAGES.live.shuttingDown),
  readFailed: () => unavailable(MESSAGES.live.readFailed),
  clientGone: () => unavailable(MESSAGES.live.clientGone),
  overflow: (size: number) => unavailable(MESSAGES.live.overflow(size)),
  tooMany: (limit: number) => new DomainError('TOO_MANY_REQUESTS', MESSAGES.live.tooMany(limit)),
  tooManyForPrincipal: (limit: number) => new DomainError('TOO_MANY_REQUESTS', MESSAGES.live.tooManyForPrincipal(limit)),
};

/** Whose limits a stream counts against: the token for token callers, else the user (in every org). */
export function callerKey(principal: Principal): string {
  return principal.keyId !== undefined ? `key:${principal.keyId}` : `user:${principal.userId}`;
}

const RECHECK_RETRY_MS = 1_000;
/** setTimeout's largest delay; a later expiry is rechecked when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Every open subscription stream of this instance, whatever feeds it (the change feeds of
 * feeds/, the live queries): the limits on open streams, authorization for a stream's life, and
 * shutdown. Whenever credentials change anywhere (the auth triggers notify), every open stream's
 * principal is read again in one or two statements, and a stream whose token or user lost the
 * right ends with the error a new request would get. While the change listener is down nothing
 * would be heard, so every stream ends then (clients subscribe again and reload) and new ones are
 * refused.
 */
export class LiveStreams {
  readonly #orm: MikroORM;
  readonly #changes: ChangeListener;
  readonly #log: Logger;
  readonly #limits: StreamLimits;
  readonly #subscribers = new Map<LiveStream<unknown>, Subscriber>();
  readonly #perPrincipal = new Map<string, number>();
  #closed = false;
  #recheck: { running: boolean; again: boolean; retry: NodeJS.Timeout | null } = { running: false, again: false, retry: null };
  /** Reads started for subscribers (by a notice, a new stream, a recheck) and not finished yet. */
  readonly #reading = new Set<Promise<unknown>>();

  constructor(orm: MikroORM, changes: ChangeListener, log: Logger, limits: StreamLimits) {
    this.#orm = orm;
    this.#changes = changes;
    this.#log = log;
    this.#limits = limits;
    changes.subscribe(AUTH_CHANGE_CHANNEL, {
      // A failed login changes nobody's rights; everything else on this channel may.
      notify: (payload) => {
        if (!payload.startsWith('login:')) this.#scheduleRecheck();
      },
      // Every channel resets together: the feeds' changes were missed as well as credentials'.
      reset: (listening) => {
        if (!listening) this.#endAll(STREAM_ERRORS.feedLost);
      },
    });
  }

  /** Open streams on this instance. */
  get open(): number {
    return this.#subscribers.size;
  }

  /** What a stream holds at most unless it asks for less: `[graphql] subscription_queue_size`. */
  get queueSize(): number {
    return this.#limits.queueSize;
  }

  /**
   * A new stream for `request`, counted against the limits, its caller rechecked whenever
   * credentials change, ended at shutdown or when the change feed is lost. Throws the refusal
   * (limits, shutdown, no change feed, client gone).
   */
  openStream<E>(request: StreamRequest, options: StreamOptions<E>): LiveStream<E> {
    if (this.#closed) throw STREAM_ERRORS.shuttingDown();
    if (!this.#changes.listening) throw STREAM_ERRORS.notListening();
    const signal = request.signal;
    if (signal?.aborted) throw STREAM_ERRORS.clientGone();
    const limitKey = callerKey(request.principal);
    if (this.#subscribers.size >= this.#limits.maxStreams) throw STREAM_ERRORS.tooMany(this.#limits.maxStreams);
    const held = this.#perPrincipal.get(limitKey) ?? 0;
    if (held >= this.#limits.maxStreamsPerPrincipal) throw STREAM_ERRORS.tooManyForPrincipal(this.#limits.maxStreamsPerPrincipal);
    this.#perPrincipal.set(limitKey, held + 1);
    const onAbort = () => void stream.return();
    const stream: LiveStream<E> = new LiveStream<E>({
      capacity: options.capacity ?? this.#limits.queueSize,
      keyOf: options.keyOf,
      merge: options.merge,
      onClose: () => {
        this.#subscribers.delete(stream as LiveStream<unknown>);
        const left = (this.#perPrincipal.get(limitKey) ?? 1) - 1;
        if (left > 0) this.#perPrincipal.set(limitKey, left);
        else this.#perPrincipal.delete(limitKey);
        if (subscriber.expiry) clearTimeout(subscriber.expiry);
        signal?.removeEventListener('abort', onAbort);
        options.onClose();
      },
    });
    const subscriber: Subscriber = { stream: stream as LiveStream<unknown>, principal: request.principal, authorize: request.authorize, expiry: null };
    this.#subscribers.set(subscriber.stream, subscriber);
    signal?.addEventListener('abort', onAbort, { once: true });
    // Credentials changed between authentication and now would otherwise go unnoticed; this also
    // learns the token's expiry and the password digest later rechecks compare with.
    this.#scheduleRecheck();
    return stream;
  }

  /** The rights a stream's caller holds now, as last rechecked; null once the stream ended. */
  principalOf(stream: LiveStream<unknown>): Principal | null {
    return this.#subscribers.get(stream)?.principal ?? null;
  }

  /**
   * Rechecks the callers of these streams now (one or two statements for all of them), ending
   * those that lost the right as a credential change would. A failed read keeps the streams.
   */
  async recheckStreams(streams: Iterable<LiveStream<unknown>>): Promise<void> {
    const subscribers: Subscriber[] = [];
    for (const stream of streams) {
      const subscriber = this.#subscribers.get(stream);
      if (subscriber && !stream.closed) subscribers.push(subscriber);
    }
    if (subscribers.length === 0) return;
    try {
      await this.#recheckNow(subscribers);
    } catch (error) {
      this.#log.warn({ err: error }, 'could not recheck the credentials of live queries; their streams go on');
    }
  }

  /** Keeps `read` (a feed's read for its subscribers) among those `settled` waits for; each handles its own failures. */
  track(read: Promise<unknown>): void {
    this.#reading.add(read);
    const done = () => this.#reading.delete(read);
    read.then(done, done);
  }

  /**
   * Resolves once no read started for subscribers is running. After `close` none starts, so
   * shutdown awaits this before closing the pool: a read still acquiring a connection when the
   * pool ends keeps it checked out for good, and closing the pool then never finishes.
   */
  async settled(): Promise<void> {
    while (this.#reading.size > 0) await Promise.allSettled([...this.#reading]);
  }

  /** Ends every stream with a final error event, and refuses new ones (shutdown). */
  close(): void {
    this.#closed = true;
    if (this.#recheck.retry) clearTimeout(this.#recheck.retry);
    this.#endAll(STREAM_ERRORS.shuttingDown);
  }

  #endAll(error: () => DomainError): void {
    for (const subscriber of [...this.#subscribers.values()]) subscriber.stream.end(error());
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
    this.track(Promise.resolve().then(() => this.#runRecheck()).catch((error: unknown) => {
      this.#log.error({ err: error }, 'rechecking the credentials of open subscriptions failed');
    }).finally(() => {
      state.running = false;
      if (state.again) this.#scheduleRecheck();
    }));
  }

  async #runRecheck(): Promise<void> {
    const subscribers = [...this.#subscribers.values()];
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
  async #recheckNow(subscribers: Subscriber[]): Promise<void> {
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

  #watchExpiry(subscriber: Subscriber, expiresAt: number | null): void {
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
