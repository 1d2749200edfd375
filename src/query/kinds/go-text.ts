/**
 * Text the original's Go backends produce and that ends up on the wire or in upstream requests:
 * Go's `Duration.String()`, the SDK's interval formatting and parsing, `url.Values.Encode()`,
 * `%q` quoting and `json.Marshal` of a string map. Kinds share these so their bytes match.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Go's `time.Duration.String()` for a whole number of milliseconds: `0s`, `200ms`, `1.5s`, `1m0s`, `1h0m0s`. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < SECOND) return `${sign}${rest}ms`;
  const h = Math.floor(rest / HOUR);
  rest -= h * HOUR;
  const m = Math.floor(rest / MINUTE);
  rest -= m * MINUTE;
  const s = String(Math.floor(rest / SECOND)) + (rest % SECOND ? `.${String(rest % SECOND).padStart(3, '0')}`.replace(/0+$/, '') : '');
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

/** The SDK's `gtime.FormatInterval`: the largest whole unit, `1y`, `2d`, `1h`, `30s`, `500ms`; below 1ms, `1ms`. */
export function formatInterval(ms: number): string {
  const units: [number, string][] = [[365 * DAY, 'y'], [DAY, 'd'], [HOUR, 'h'], [MINUTE, 'm'], [SECOND, 's'], [1, 'ms']];
  for (const [size, unit] of units) if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  return '1ms';
}

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: SECOND, m: MINUTE, h: HOUR };
const EXTRA_UNITS: Record<string, number> = { d: DAY, w: 7 * DAY, M: 30 * DAY, y: 365 * DAY };

/**
 * The SDK's interval string parser (`ParseIntervalStringToTimeDuration` over `gtime.ParseDuration`):
 * `<` and `>` dropped, a bare number is seconds, `d`/`w`/`M`/`y` as single units, else a Go
 * duration (`1m30s`, `1.5s`). Milliseconds, or an Error worded as Go's.
 */
export function parseInterval(text: string): number {
  const s = text.replace('<', '').replace('>', '');
  const value = /^\d+$/.test(s) ? `${s}s` : s;
  const extra = /^(\d+)([dwMy])$/.exec(value);
  if (extra) return Number(extra[1]) * EXTRA_UNITS[extra[2]];
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  const body = value.startsWith('-') || value.startsWith('+') ? value.slice(1) : value;
  if (body === '0') return 0;
  while (at < body.length) {
    re.lastIndex = at;
    const m = re.exec(body);
    if (!m) throw new Error(`time: invalid duration ${goQuote(text)}`);
    total += Number(m[1]) * GO_UNITS[m[2]];
    at = re.lastIndex;
  }
  if (body.length === 0) throw new Error(`time: invalid duration ${goQuote(text)}`);
  return value.startsWith('-') ? -total : total;
}

/** Go's `url.QueryEscape`: only `A-Z a-z 0-9 - _ . ~` stay, space becomes `+`. */
export function queryEscape(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** Go's `url.Values.Encode()`: keys sorted, each `key=value` query-escaped, joined by `&`. */
export function encodeValues(values: Record<string, string | undefined>): string {
  return Object.keys(values)
    .filter((k) => values[k] !== undefined)
    .sort()
    .map((k) => `${queryEscape(k)}=${queryEscape(values[k] as string)}`)
    .join('&');
}

const SHORT_ESCAPES: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

/** Go's `%q` (`strconv.Quote`) for the printable text label values hold. */
export function goQuote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (SHORT_ESCAPES[ch]) out += SHORT_ESCAPES[ch];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0x80 && code < 0xa0) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's `json.Marshal` of a string: HTML-safe (`<`, `>`, `&` escaped) and U+2028/U+2029 escaped. */
export function goJsonString(value: string): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Go's `json.Marshal` of a `map[string]string`: keys in byte order, compact. */
export function goJsonStringMap(map: Readonly<Record<string, string>>): string {
  const keys = Object.keys(map).sort(byteOrder);
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i ? ',' : ''}${goJsonString(keys[i])}:${goJsonString(map[keys[i]])}`;
  return `${out}}`;
}

/** Go sorts strings by bytes; for UTF-16 this differs only above the BMP, where code points decide. */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Labels sorted by key, as Go writes a map. */
export function sortedLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(labels).sort(byteOrder)) out[k] = labels[k];
  return out;
}
