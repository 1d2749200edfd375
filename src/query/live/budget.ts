/**
 * How many data source calls per second a caller's live queries ask for, and the limit on that
 * (`[live] max_upstream_calls_per_second`). `min_refresh` bounds one subscription's refresh, not
 * how many queries it carries nor how many subscriptions a caller opens: this bounds their product.
 * Pure; table-tested in test/query/live/budget.test.ts.
 */

import { isExpressionUid, referenceOf } from '../request.ts';

/**
 * Calls one refresh of a live query makes: one per query naming a data source (an expression
 * names none; it works on the others' answers), and at least one (a live query made only of
 * expressions still runs once per refresh).
 */
export function callsPerRefresh(queries: ReadonlyArray<Readonly<Record<string, unknown>>>): number {
  let calls = 0;
  for (const query of queries) if (!isExpressionUid(referenceOf(query as Record<string, unknown>).uid)) calls++;
  return Math.max(calls, 1);
}

/** `12`, `0.5`, `3.33`: a rate as messages show it. */
export function formatRate(rate: number): string {
  return String(Math.round(rate * 100) / 100);
}

/** What a refused reservation reports: the limit, what was asked, and what the caller already holds. */
export interface OverBudget {
  limit: number;
  asked: number;
  held: number;
}

/** Below this, sums of rates that should meet the limit exactly may miss it by a rounding error. */
const EPSILON = 1e-9;

/**
 * The calls per second each caller's live queries hold, by share key: a caller watching one live
 * query through several subscriptions holds its rate once. `limit` 0 holds no limit.
 */
export class CallBudget {
  readonly #limit: number;
  /** Caller -> share key -> [rate, subscriptions]. */
  readonly #held = new Map<string, Map<string, { rate: number; count: number }>>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Calls per second `caller` holds now. */
  held(caller: string): number {
    let sum = 0;
    for (const entry of this.#held.get(caller)?.values() ?? []) sum += entry.rate;
    return sum;
  }

  /**
   * Counts one more subscription of `caller` to the live query `key` at `rate`. Returns the
   * release to call once when that subscription ends, or what refused it.
   */
  reserve(caller: string, key: string, rate: number): { release(): void } | { refused: OverBudget } {
    let keys = this.#held.get(caller);
    const entry = keys?.get(key);
    if (!entry && this.#limit > 0) {
      const held = this.held(caller);
      if (held + rate > this.#limit + EPSILON) return { refused: { limit: this.#limit, asked: rate, held } };
    }
    if (!keys) this.#held.set(caller, (keys = new Map()));
    if (entry) entry.count++;
    else keys.set(key, { rate, count: 1 });
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const current = keys.get(key);
        if (!current || --current.count > 0) return;
        keys.delete(key);
        if (keys.size === 0 && this.#held.get(caller) === keys) this.#held.delete(caller);
      },
    };
  }
}
