import type { DomainError } from '../errors/domain.ts';

/** The last item of a stream that ends for a reason the subscriber must hear (sent as an error event). */
export class StreamEnd {
  readonly error: DomainError;

  constructor(error: DomainError) {
    this.error = error;
  }
}

export interface LiveStreamOptions<E> {
  /** Most events held for a subscriber that reads slower than they come. */
  capacity: number;
  /** Events with the same key replace one another in the queue (the subscriber only needs the latest). */
  keyOf(event: E): unknown;
  /** What a queued event and a newer one with the same key become; null drops both. */
  merge(older: E, newer: E): E | null;
  /** Called once, however the stream ends (client gone, `end`, or overflow). */
  onClose(): void;
}

/**
 * One subscriber's events, as the async iterator a GraphQL subscription returns. Memory is bounded
 * whatever the reader does: a queued event is replaced by a newer one with the same key, and a
 * queue full of distinct keys ends the stream (the subscriber subscribes again and reloads) rather
 * than growing. The HTTP side pulls the next event only when the connection can take it, so a
 * slow connection holds events here and nowhere else.
 */
export class LiveStream<E> implements AsyncIterableIterator<E | StreamEnd> {
  readonly #options: LiveStreamOptions<E>;
  readonly #queue = new Map<unknown, E>();
  #end: StreamEnd | null = null;
  /** The end was handed to the reader; the next pull finishes the iteration. */
  #endSent = false;
  #closed = false;
  #waiting: ((result: IteratorResult<E | StreamEnd>) => void) | null = null;

  constructor(options: LiveStreamOptions<E>) {
    this.#options = options;
  }

  get closed(): boolean {
    return this.#closed || this.#end !== null;
  }

  /** Events waiting for the reader. */
  get queued(): number {
    return this.#queue.size;
  }

  /** Queues an event; false when the queue was full, in which case the stream ended with `overflow`. */
  push(event: E, overflow: () => DomainError): boolean {
    if (this.closed) return true;
    if (this.#waiting) {
      this.#resolve({ value: event, done: false });
      return true;
    }
    const key = this.#options.keyOf(event);
    const older = this.#queue.get(key);
    if (older !== undefined) {
      const merged = this.#options.merge(older, event);
      if (merged === null) this.#queue.delete(key);
      else this.#queue.set(key, merged);
      return true;
    }
    if (this.#queue.size >= this.#options.capacity) {
      this.end(overflow());
      return false;
    }
    this.#queue.set(key, event);
    return true;
  }

  /** Ends the stream after what is queued, with `error` as its last event (or quietly without). */
  end(error: DomainError | null): void {
    if (this.closed) return;
    if (error) {
      // The reason matters more than the backlog: a client told to stop should not act on stale events first.
      this.#queue.clear();
      this.#end = new StreamEnd(error);
    } else {
      this.#closed = true;
    }
    this.#options.onClose();
    if (this.#waiting) {
      if (this.#end) {
        this.#endSent = true;
        this.#resolve({ value: this.#end, done: false });
      } else this.#resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<E | StreamEnd>> {
    const first = this.#queue.entries().next();
    if (!first.done) {
      this.#queue.delete(first.value[0]);
      return Promise.resolve({ value: first.value[1], done: false });
    }
    if (this.#end && !this.#endSent) {
      this.#endSent = true;
      return Promise.resolve({ value: this.#end, done: false });
    }
    if (this.#closed || this.#endSent) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  /** The reader is gone (client disconnected, or the subscription finished). */
  return(): Promise<IteratorResult<E | StreamEnd>> {
    this.#queue.clear();
    if (!this.closed) {
      this.#closed = true;
      this.#options.onClose();
    }
    this.#closed = true;
    if (this.#waiting) this.#resolve({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #resolve(result: IteratorResult<E | StreamEnd>): void {
    const waiting = this.#waiting!;
    this.#waiting = null;
    waiting(result);
  }
}
