/**
 * Text the original's Go backends produce and that ends up on the wire or in upstream requests:
 * `url.Values.Encode()`, `%q` quoting and `json.Marshal` of a string map (durations and intervals
 * are in ../durations.ts). Kinds share these so their bytes match.
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
