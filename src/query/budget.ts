import { busy } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

/**
 * The query API's budgets (`[query]` settings): what one refId and one request may build (points
 * and series), and the bytes of answers the whole instance builds and sends at once. Work is
 * checked before it is done: a refId's known size (TestData's, from its model) is planned when the
 * request is admitted; what only shows while running (an upstream answer's bytes, an expression's
 * series) is spent before it is built; what was built is counted again at the end. A refId past a
 * budget fails with its own error; a request the instance has no room for now gets 503 with
 * `Retry-After`.
 */

export interface QueryLimits {
  readonly pointsPerRefId: number;
  readonly seriesPerRefId: number;
  readonly pointsPerRequest: number;
  readonly seriesPerRequest: number;
  /** Bytes of answers in flight on the instance, over every request. */
  readonly bytesInFlight: number;
  /** A GraphQL request's: `pointsPerRequest` is then what `[query] max_points_per_graph_request` leaves it. */
  readonly graph?: { readonly pointsPerRequest: number };
}

/** Points (rows summed over fields, as `countPoints` counts them) and series (frames). */
export interface Size {
  points: number;
  series: number;
}

export const NOTHING: Readonly<Size> = Object.freeze({ points: 0, series: 0 });

/**
 * What an answer costs in memory while it is built and sent, per point and per series: a number in
 * a JS array or a written column (8 bytes) plus its JSON (about 16); a frame's objects, labels and
 * schema text (about 1 KiB). Estimates, on the high side.
 */
export const BYTES_PER_POINT = 24;
export const BYTES_PER_SERIES = 1024;
/** Held for a refId whose size shows only when its upstream answers (each body is then spent as it arrives). */
export const BYTES_PER_UNKNOWN = 64 * 1024;
/** An upstream body costs itself and about as much again in the columns read from it. */
export const BYTES_PER_BODY_BYTE = 2;
/** Seconds a client refused for want of room is told to wait (answers in flight are mostly sent by then). */
export const RETRY_AFTER_SECONDS = 2;

export function bytesOf(size: Size): number {
  return size.points * BYTES_PER_POINT + size.series * BYTES_PER_SERIES;
}

/** Why a refId of `size` may not be built at all, or null. */
export function refIdVerdict(size: Size, limits: QueryLimits): string | null {
  if (size.series > limits.seriesPerRefId) return MESSAGES.query.tooManySeries(limits.seriesPerRefId);
  if (size.points > limits.pointsPerRefId) return MESSAGES.query.tooManyPoints(limits.pointsPerRefId);
  return null;
}

/** Why `size` more may not be added to a request that has `used`, or null. */
export function requestVerdict(used: Size, size: Size, limits: QueryLimits): string | null {
  if (used.series + size.series > limits.seriesPerRequest) return MESSAGES.query.requestTooManySeries(limits.seriesPerRequest);
  if (used.points + size.points > limits.pointsPerRequest) {
    return limits.graph ? MESSAGES.query.graphTooManyPoints(limits.graph.pointsPerRequest) : MESSAGES.query.requestTooManyPoints(limits.pointsPerRequest);
  }
  return null;
}

export interface Plan {
  /** RefIds that may not run, and why. */
  refused: Map<string, string>;
  /** The admitted refIds' known sizes, summed with `used`. */
  used: Size;
  /** Admitted refIds whose size is not known before they run. */
  unknown: number;
}

/**
 * Which refIds run: in answer order (by refId, as the totals are counted at the end), each whose
 * known size fits its own budget and what is left of the request's. A refId of unknown size (null)
 * runs, and is counted when it answers. Pure.
 */
export function plan(estimates: ReadonlyArray<readonly [refId: string, size: Size | null]>, limits: QueryLimits, used: Size = NOTHING): Plan {
  const refused = new Map<string, string>();
  const total = { ...used };
  let unknown = 0;
  for (const [refId, size] of [...estimates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!size) {
      unknown++;
      continue;
    }
    const verdict = refIdVerdict(size, limits) ?? requestVerdict(total, size, limits);
    if (verdict) {
      refused.set(refId, verdict);
      continue;
    }
    total.points += size.points;
    total.series += size.series;
  }
  return { refused, used: total, unknown };
}

/**
 * The instance's bytes of answers in flight. A request takes what it expects to build before it
 * builds it, more as it finds more, and gives it all back once its answer is sent. Nothing is taken
 * past the capacity, except by the only request in flight: an idle instance always admits one
 * request (the per-request budgets bound it), so no request waits forever for room that will
 * never come.
 */
export class AnswerMemory {
  readonly capacity: number;
  #used = 0;
  #holders = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get used(): number {
    return this.#used;
  }

  /** Requests holding bytes now. */
  get holders(): number {
    return this.#holders;
  }

  /** Takes `bytes` for a holder that has `holding` already; false (nothing taken) when they do not fit. */
  take(bytes: number, holding: number): boolean {
    if (bytes <= 0) return true;
    const alone = this.#holders === 0 || (this.#holders === 1 && holding > 0);
    if (!alone && this.#used + bytes > this.capacity) return false;
    if (holding === 0) this.#holders++;
    this.#used += bytes;
    return true;
  }

  /** Takes `bytes` whatever is in flight: memory already in use, counted so others see it. */
  force(bytes: number, holding: number): void {
    if (bytes <= 0) return;
    if (holding === 0) this.#holders++;
    this.#used += bytes;
  }

  /** Gives back `bytes` of a holder that had `holding` (all of it ends its hold). */
  give(bytes: number, holding: number): void {
    if (bytes <= 0) return;
    const given = Math.min(bytes, holding);
    this.#used -= given;
    if (given === holding) this.#holders--;
  }
}

/**
 * One request's budget: the points and series its refIds may still build, and its bytes in the
 * instance's `AnswerMemory`. `release` gives the bytes back once the answer is sent (or dropped); it
 * may be called more than once.
 */
export class RequestBudget {
  readonly limits: QueryLimits;
  readonly #memory: AnswerMemory;
  #used: Size = { points: 0, series: 0 };
  readonly #perRefId = new Map<string, Size>();
  #held = 0;

  constructor(limits: QueryLimits, memory: AnswerMemory) {
    this.limits = limits;
    this.#memory = memory;
  }

  /** Bytes this request holds in the instance's memory budget. */
  get held(): number {
    return this.#held;
  }

  /**
   * Plans the refIds about to run: answers those that may not (and why), and takes the bytes of
   * the rest. Throws 503 with `Retry-After` when the instance has no room for them now.
   */
  admit(estimates: ReadonlyArray<readonly [refId: string, size: Size | null]>): Map<string, string> {
    const planned = plan(estimates, this.limits, this.#used);
    const added = { points: planned.used.points - this.#used.points, series: planned.used.series - this.#used.series };
    if (!this.#take(bytesOf(added) + planned.unknown * BYTES_PER_UNKNOWN)) throw busy(MESSAGES.query.answersBusy, RETRY_AFTER_SECONDS);
    this.#used = planned.used;
    for (const [refId, size] of estimates) if (size && !planned.refused.has(refId)) this.#perRefId.set(refId, { ...size });
    return planned.refused;
  }

  /**
   * `size` more for `refId` (an expression's next series), before it is built: null when it fits,
   * else why not (the refId's error). Nothing is counted when it does not fit.
   */
  spend(refId: string, size: Size): string | null {
    const verdict = this.check(refId, size);
    if (verdict) return verdict;
    if (!this.#take(bytesOf(size))) return MESSAGES.query.answersBusy;
    const mine = this.#perRefId.get(refId) ?? NOTHING;
    this.#perRefId.set(refId, { points: mine.points + size.points, series: mine.series + size.series });
    this.#used = { points: this.#used.points + size.points, series: this.#used.series + size.series };
    return null;
  }

  /** Whether `size` more for `refId` would fit its budget and the request's: null, else why not. Spends nothing. */
  check(refId: string, size: Size): string | null {
    const mine = this.#perRefId.get(refId) ?? NOTHING;
    return refIdVerdict({ points: mine.points + size.points, series: mine.series + size.series }, this.limits)
      ?? requestVerdict(this.#used, size, this.limits);
  }

  /** Bytes of an upstream body that arrived: false (nothing taken) when the instance has no room for them. */
  body(bytes: number): boolean {
    return this.#take(bytes * BYTES_PER_BODY_BYTE);
  }

  /**
   * The request's answers are built and measure `size`: what it holds becomes what they take (the
   * bodies they were read from are garbage now). Taken even past the capacity: it is in memory.
   */
  settle(size: Size): void {
    const bytes = bytesOf(size);
    if (bytes > this.#held) {
      this.#memory.force(bytes - this.#held, this.#held);
      this.#held = bytes;
    } else if (bytes < this.#held) {
      this.#memory.give(this.#held - bytes, this.#held);
      this.#held = bytes;
    }
  }

  release(): void {
    this.#memory.give(this.#held, this.#held);
    this.#held = 0;
  }

  #take(bytes: number): boolean {
    if (bytes <= 0) return true;
    if (!this.#memory.take(bytes, this.#held)) return false;
    this.#held += bytes;
    return true;
  }
}
