import { parseGoDuration } from './durations.ts';

/** An absolute range in epoch milliseconds. */
export interface TimeRange {
  from: number;
  to: number;
}

/**
 * The request's `from`/`to` as the plugin SDK's `gtime.TimeRange` reads them, in order: an integer
 * is epoch milliseconds; a Go duration (`5m`) is that long before now; otherwise date math
 * (`now-1h`, `now/d`, `now-1d/d`, `2026-01-02T03:04:05Z||+1h`), rounding to the end of the unit for
 * `to`. Whatever fails to parse is epoch 0, as the original has it (no error).
 */
export function parseTimeRange(from: unknown, to: unknown, now: number): TimeRange {
  return { from: parseTime(from, now, false), to: parseTime(to, now, true) };
}

export function parseTime(raw: unknown, now: number, roundUp: boolean): number {
  // The DTO's fields are Go strings: anything else fails to decode there; here it counts as unparsable.
  if (typeof raw !== 'string') return 0;
  if (/^[+-]?\d+$/.test(raw)) {
    const ms = Number(raw);
    return Number.isSafeInteger(ms) ? ms : 0;
  }
  const ago = parseGoDuration(`-${raw}`);
  if (ago !== null) return Math.trunc(now + ago);
  return evaluateDateMath(raw, now, roundUp) ?? 0;
}

type Unit = 'y' | 'M' | 'w' | 'd' | 'h' | 'm' | 's';
const UNITS = new Set<string>(['y', 'M', 'w', 'd', 'h', 'H', 'm', 's']);

/**
 * Date math as the SDK's datemath library evaluates it, in UTC with weeks starting on Monday:
 * an anchor (`now`, or an absolute date followed by `||`) then operations `+N<unit>`,
 * `-N<unit>` and `/<unit>` (round down, or up to the unit's last millisecond with `roundUp`).
 */
export function evaluateDateMath(text: string, now: number, roundUp: boolean): number | null {
  let rest: string;
  let date: Date;
  if (text.startsWith('now')) {
    date = new Date(now);
    rest = text.slice(3);
  } else {
    const sep = text.indexOf('||');
    const anchor = sep < 0 ? text : text.slice(0, sep);
    rest = sep < 0 ? '' : text.slice(sep + 2);
    // Absolute dates: ISO 8601 forms only (a date alone is midnight UTC).
    if (!/^\d{4}(-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$/.test(anchor)) return null;
    const iso = /^\d{4}$/.test(anchor) ? `${anchor}-01-01` : /^\d{4}-\d{2}$/.test(anchor) ? `${anchor}-01` : anchor.replace(' ', 'T');
    const ms = Date.parse(/[T ]\d{2}/.test(anchor) && !/(Z|[+-]\d{2}:?\d{2})$/.test(anchor) ? `${iso}Z` : iso);
    if (Number.isNaN(ms)) return null;
    date = new Date(ms);
  }
  while (rest !== '') {
    const op = rest[0];
    if (op === '/') {
      const unit = rest[1];
      if (!unit || !UNITS.has(unit)) return null;
      date = roundTo(date, unit === 'H' ? 'h' : (unit as Unit), roundUp);
      rest = rest.slice(2);
    } else if (op === '+' || op === '-') {
      const m = /^[+-](\d*)([yMwdhHms])/.exec(rest);
      if (!m) return null;
      const n = (m[1] === '' ? 1 : Number(m[1])) * (op === '-' ? -1 : 1);
      date = add(date, m[2] === 'H' ? 'h' : (m[2] as Unit), n);
      rest = rest.slice(m[0].length);
    } else {
      return null;
    }
  }
  const ms = date.getTime();
  return Number.isFinite(ms) ? ms : null;
}

function add(date: Date, unit: Unit, n: number): Date {
  const d = new Date(date.getTime());
  switch (unit) {
    case 'y': d.setUTCFullYear(d.getUTCFullYear() + n); break;
    case 'M': d.setUTCMonth(d.getUTCMonth() + n); break;
    case 'w': d.setUTCDate(d.getUTCDate() + 7 * n); break;
    case 'd': d.setUTCDate(d.getUTCDate() + n); break;
    case 'h': d.setTime(d.getTime() + n * 3_600_000); break;
    case 'm': d.setTime(d.getTime() + n * 60_000); break;
    case 's': d.setTime(d.getTime() + n * 1000); break;
  }
  return d;
}

/** Start of the unit containing `date`, or with `roundUp` its last millisecond. */
function roundTo(date: Date, unit: Unit, roundUp: boolean): Date {
  const y = date.getUTCFullYear();
  const mo = date.getUTCMonth();
  const d = date.getUTCDate();
  let start: number;
  switch (unit) {
    case 'y': start = Date.UTC(y, 0, 1); break;
    case 'M': start = Date.UTC(y, mo, 1); break;
    case 'w': start = Date.UTC(y, mo, d - ((date.getUTCDay() + 6) % 7)); break;
    case 'd': start = Date.UTC(y, mo, d); break;
    case 'h': start = Date.UTC(y, mo, d, date.getUTCHours()); break;
    case 'm': start = Date.UTC(y, mo, d, date.getUTCHours(), date.getUTCMinutes()); break;
    case 's': start = Math.floor(date.getTime() / 1000) * 1000; break;
  }
  if (!roundUp) return new Date(start);
  return new Date(add(new Date(start), unit, 1).getTime() - 1);
}
