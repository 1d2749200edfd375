/**
 * When a live query runs and over which range: refresh periods, ticks aligned on the epoch so that
 * every subscriber of one query meets on the same ticks, and ranges evaluated at a tick by the
 * envelope's own time-range rules.
 * Pure; table-tested in test/query/live/timing.test.ts.
 */

import { parseGoDuration } from '../durations.ts';
import { evaluateDateMath, parseTimeRange } from '../time-range.ts';

export { parsePeriod } from '../../config/duration.ts';

/** The first tick strictly after `now`: ticks sit at multiples of `period` since the epoch, so subscribers meet. */
export function nextTick(now: number, period: number): number {
  return (Math.floor(now / period) + 1) * period;
}

/**
 * How the envelope will read one end of a range (`time-range.ts`, the SDK's `gtime.TimeRange`):
 * `relative` when it moves with the clock (`now-1h`, `5m`), `absolute` when it does not (epoch
 * milliseconds, an absolute date), null when it is none of those. The envelope reads such a value
 * as epoch 0 without an error; a live query refuses it rather than refresh a range in 1970.
 */
export function timeForm(text: string): 'relative' | 'absolute' | null {
  const value = text.trim();
  if (/^[+-]?\d+$/.test(value)) return Number.isSafeInteger(Number(value)) ? 'absolute' : null;
  if (parseGoDuration(`-${value}`) !== null) return 'relative';
  if (evaluateDateMath(value, 0, false) === null) return null;
  return value.startsWith('now') ? 'relative' : 'absolute';
}

/** A live query's range at one tick, as the epoch-millisecond strings the query envelope reads. */
export function rangeAt(from: string, to: string, now: number): { from: string; to: string } {
  const range = parseTimeRange(from, to, now);
  return { from: String(range.from), to: String(range.to) };
}
