import { compareGoStrings, goString } from './frames/encode.ts';

/**
 * Text the original's Go backends produce and that ends up on the wire or in upstream requests:
 * `url.Values.Encode()`, `%q` quoting and `json.Marshal` of a string map (durations and intervals
 * are in ../durations.ts, JSON strings in ../frames/encode.ts). Kinds share these so their bytes match.
 */

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

/** Go's `json.Marshal` of a `map[string]string`: keys in byte order, compact. */
export function goJsonStringMap(map: Readonly<Record<string, string>>): string {
  const keys = Object.keys(map).sort(compareGoStrings);
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i ? ',' : ''}${goString(keys[i])}:${goString(map[keys[i]])}`;
  return `${out}}`;
}

/** Labels sorted by key, as Go writes a map; without a prototype, so a `__proto__` label stays a label. */
export function sortedLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const k of Object.keys(labels).sort(compareGoStrings)) out[k] = labels[k];
  return out;
}
