/**
 * A fixed number of slots and a first-in, first-out queue of waiters: what bounds the buffered
 * calls in flight, one queue per request and one for the whole server, so however many refIds a
 * request holds, the sockets it opens stay within the configured count and the rest wait.
 */
export class CallQueue {
  readonly size: number;
  #free: number;
  /** Waiters in arrival order; a settled one (given up) is skipped when its turn comes. */
  readonly #waiting: Array<{ grant(): boolean }> = [];
  #head = 0;

  constructor(size: number) {
    this.size = size;
    this.#free = size;
  }

  /** Calls in flight. */
  get busy(): number {
    return this.size - this.#free;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  /** A slot at once when one is free (the usual case: no promise is made), else null. */
  tryAcquire(): (() => void) | null {
    if (this.#free === 0) return null;
    this.#free--;
    return this.#releaser();
  }

  /**
   * A slot once one frees, in arrival order. `giveUp` settles with the reason when the waiter
   * stops waiting first (the client left, its deadline passed): it then holds no slot.
   */
  acquire(giveUp: (fail: (reason: unknown) => void) => () => void): Promise<() => void> {
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      let settled = false;
      const stop = giveUp((reason) => {
        if (settled) return;
        settled = true;
        reject(reason);
      });
      this.#waiting.push({
        grant: () => {
          if (settled) return false;
          settled = true;
          stop();
          resolve(this.#releaser());
          return true;
        },
      });
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot goes straight to the next waiter still waiting, else back to the pool.
      while (this.#head < this.#waiting.length) {
        const next = this.#waiting[this.#head]!;
        this.#head++;
        if (next.grant()) return this.#compact();
      }
      this.#compact();
      this.#free++;
    };
  }

  /** Drops the served part of the queue now and then, so a long queue is not kept whole. */
  #compact(): void {
    if (this.#head === this.#waiting.length) {
      this.#waiting.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
