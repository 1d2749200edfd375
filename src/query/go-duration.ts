/** Go's duration syntax, which the original's query models use (`time.ParseDuration`, SDK `gtime`). */

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's `time.ParseDuration` in milliseconds (`1h2m3.5s`, `300ms`, `-1.5h`, `0`); undefined when invalid. */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  const part = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const match = part.exec(rest);
    if (!match) return undefined;
    total += Number(match[1]) * DURATION_UNITS[match[2]];
    rest = rest.slice(match[0].length);
  }
  return sign * total;
}

const CALENDAR_UNITS: Record<string, number> = { d: 86_400_000, w: 604_800_000, M: 2_592_000_000, y: 31_536_000_000 };

/** The SDK's `gtime.ParseDuration`: `<n>d`, `<n>w`, `<n>M`, `<n>y`, else Go's syntax. */
export function parseGtimeDuration(text: string): number | undefined {
  const match = /^(\d+)([dwMy])$/.exec(text);
  if (match) return Number(match[1]) * CALENDAR_UNITS[match[2]];
  return parseGoDuration(text);
}
