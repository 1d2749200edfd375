/**
 * When a live query runs and over which range: refresh periods, ticks aligned on the epoch so that
 * every subscriber of one query meets on the same ticks, and relative ranges evaluated at a tick.
 * Pure; table-tested in test/query-live-pure.test.ts.
 */

export { parsePeriod } from '../../config/duration.ts';

/** The first tick strictly after `now`: ticks sit at multiples of `period` since the epoch, so subscribers meet. */
export function nextTick(now: number, period: number): number {
  return (Math.floor(now / period) + 1) * period;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DATE_UNITS = new Set(['s', 'm', 'h', 'd', 'w', 'M', 'y']);

/**
 * Evaluates one end of a time range at `now` (epoch ms) the way the original's `gtime.TimeRange`
 * reads `from` and `to`: an integer is epoch milliseconds, a bare duration (`5m`) means that long
 * before now, anything else is date math (`now`, `now-1h`, `now-1d/d`, `now/w`), UTC. Null when
 * none of those (the original reads such a value as epoch 0; a live query refuses it instead).
 * `relative` tells whether the value moves with the clock.
 */
export function evaluateTime(text: string, now: number, roundUp: boolean): { ms: number; relative: boolean } | null {
  const value = text.trim();
  if (/^-?\d+$/.test(value)) {
    const ms = Number(value);
    return Number.isSafeInteger(ms) ? { ms, relative: false } : null;
  }
  const bare = /^(\d+)(ms|s|m|h|d|w|M|y)$/.exec(value);
  if (bare) {
    const ms = shift(now, -Number(bare[1]), bare[2]!);
    return ms === null ? null : { ms, relative: true };
  }
  if (!value.startsWith('now')) return null;
  let time = now;
  let rest = value.slice(3);
  while (rest !== '') {
    const step = /^([+-])(\d*)([a-zA-Z]+)|^\/([a-zA-Z])/.exec(rest);
    if (!step) return null;
    if (step[4] !== undefined) {
      if (!DATE_UNITS.has(step[4])) return null;
      time = round(time, step[4], roundUp);
    } else {
      const amount = (step[2] === '' ? 1 : Number(step[2])) * (step[1] === '-' ? -1 : 1);
      const shifted = shift(time, amount, step[3]!);
      if (shifted === null) return null;
      time = shifted;
    }
    rest = rest.slice(step[0].length);
  }
  return { ms: time, relative: true };
}

function shift(time: number, amount: number, unit: string): number | null {
  if (unit === 'M' || unit === 'y') {
    const date = new Date(time);
    date.setUTCMonth(date.getUTCMonth() + amount * (unit === 'y' ? 12 : 1));
    return date.getTime();
  }
  const size = UNIT_MS[unit];
  return size === undefined ? null : time + amount * size;
}

/** Start (or, for `to`, end) of the UTC calendar unit holding `time`, as date math's `/unit`. */
function round(time: number, unit: string, up: boolean): number {
  const date = new Date(time);
  const start = (() => {
    switch (unit) {
      case 's': return Math.floor(time / 1_000) * 1_000;
      case 'm': return Math.floor(time / 60_000) * 60_000;
      case 'h': return Math.floor(time / 3_600_000) * 3_600_000;
      case 'd': return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
      case 'w': {
        // Weeks start on Monday, as the original's date math does by default.
        const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
        return day - ((date.getUTCDay() + 6) % 7) * 86_400_000;
      }
      case 'M': return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
      default: return Date.UTC(date.getUTCFullYear(), 0, 1);
    }
  })();
  if (!up) return start;
  const end = unit === 'M' || unit === 'y' ? shift(start, 1, unit)! : unit === 'w' ? start + UNIT_MS.w! : start + UNIT_MS[unit]!;
  return end - 1;
}

/** A live query's range at one tick, as epoch-millisecond strings the query envelope reads. */
export function rangeAt(from: string, to: string, now: number): { from: string; to: string } | null {
  const start = evaluateTime(from, now, false);
  const end = evaluateTime(to, now, true);
  if (!start || !end) return null;
  return { from: String(start.ms), to: String(end.ms) };
}

/** Whether a range moves with the clock (at least one end relative to now). */
export function isRelativeRange(from: string, to: string): boolean {
  return Boolean(evaluateTime(from, 0, false)?.relative || evaluateTime(to, 0, true)?.relative);
}
