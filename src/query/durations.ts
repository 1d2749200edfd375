/**
 * Go's and the plugin SDK's duration rules (`time.ParseDuration`, `Duration.String()`,
 * `gtime.ParseDuration`, `gtime.FormatInterval`, `gtime.RoundInterval`), on milliseconds that may
 * carry a fraction (Go counts nanoseconds; a request's steps and ranges never need more than that).
 */

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const GO_PART = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;

/** `time.ParseDuration`: `[-+]` then one or more `<decimal><unit>`; `0` alone is zero. Null when invalid. */
export function parseGoDuration(text: string): number | null {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return null;
  let total = 0;
  while (rest !== '') {
    const m = GO_PART.exec(rest);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) return null;
    total += Number(`${m[1] || '0'}.${m[2] || '0'}`) * GO_UNITS[m[3]!]!;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

const DAY = 86_400_000;
const YEAR = DAY * 365.25;
const CALENDAR_UNITS: Record<string, number> = { d: DAY, w: 7 * DAY, M: YEAR / 12, y: YEAR };

/** `gtime.ParseDuration`: Go durations plus `<n>d`, `<n>w`, `<n>M`, `<n>y` (Julian year). */
export function parseSdkDuration(text: string): number | null {
  const m = /^(\d+)([dwMy])$/.exec(text);
  if (m) return Number(m[1]) * CALENDAR_UNITS[m[2]!]!;
  return parseGoDuration(text);
}

/** `gtime.ParseIntervalStringToTimeDuration`: `<` and `>` dropped, a bare number is seconds. */
export function parseIntervalString(text: string): number | null {
  const formatted = text.replace('<', '').replace('>', '');
  return parseSdkDuration(/^\d+$/.test(formatted) ? `${formatted}s` : formatted);
}

/** `gtime.FormatInterval`: the largest whole unit, `15s`, `1m`, `2h`, `1d`, `1y`; `1ms` below a millisecond. */
export function formatInterval(ms: number): string {
  const units: Array<[number, string]> = [[DAY * 365, 'y'], [DAY, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1000, 's'], [1, 'ms']];
  for (const [size, unit] of units) if (ms >= size) return `${Math.trunc(ms / size)}${unit}`;
  return '1ms';
}

/** Go's `Duration.String()`: `15s`, `1m0s`, `1h0m0s`, `1.5s`, `200ms`, `0s`. */
export function goDurationString(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return '0s';
  const negative = ns < 0;
  if (negative) ns = -ns;
  let out: string;
  if (ns < 1e9) {
    // Below a second: the largest of ns, µs, ms with a fraction.
    const [size, unit] = ns < 1e3 ? [1, 'ns'] : ns < 1e6 ? [1e3, 'µs'] : [1e6, 'ms'];
    out = `${fraction(ns, size)}${unit}`;
  } else {
    const hours = Math.floor(ns / 3.6e12);
    const minutes = Math.floor((ns % 3.6e12) / 6e10);
    const seconds = fraction(ns % 6e10, 1e9);
    out = hours > 0 ? `${hours}h${minutes}m${seconds}s` : minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
  }
  return negative ? `-${out}` : out;
}

/** `value / size` with its fraction's trailing zeros dropped, as Go prints it. */
function fraction(value: number, size: number): string {
  const whole = Math.floor(value / size);
  const rest = value - whole * size;
  if (rest === 0) return String(whole);
  const digits = String(size).length - 1;
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** `gtime.RoundInterval`: a computed interval snapped to a readable step (upper bounds inclusive). */
const ROUNDING: ReadonlyArray<readonly [upTo: number, to: number]> = [
  [10, 1], [15, 10], [35, 20], [75, 50], [150, 100], [350, 200], [750, 500],
  [1500, 1000], [3500, 2000], [7500, 5000], [12_500, 10_000], [17_500, 15_000], [25_000, 20_000], [45_000, 30_000],
  [90_000, 60_000], [210_000, 120_000], [450_000, 300_000], [750_000, 600_000], [1_050_000, 900_000], [1_500_000, 1_200_000],
  [2_700_000, 1_800_000], [5_400_000, 3_600_000], [9_000_000, 7_200_000], [16_200_000, 10_800_000], [32_400_000, 21_600_000],
  [86_400_000, 43_200_000], [172_800_000, 86_400_000], [604_800_000, 86_400_000], [1_814_400_000, 604_800_000],
];

export function roundInterval(ms: number): number {
  for (const [upTo, to] of ROUNDING) if (ms <= upTo) return to;
  // Below six weeks a month (30 days), else a year (365 days).
  return ms < 3_628_800_000 ? 2_592_000_000 : 31_536_000_000;
}
