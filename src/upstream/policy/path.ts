/** Whether a path below a data source's URL stays inside it, however it is encoded. */

const PLAIN_PATH = /^[\w~-][\w.~-]*(?:\/[\w~-][\w.~-]*)*\/?$/;

/** Layers of percent-encoding looked through (`%25252e` is three); deeper nesting is refused. */
const MAX_DECODE_DEPTH = 4;
/** C0, DEL and C1 controls: never part of a legitimate path, and NUL truncates in C-based servers. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const PCT = /%[0-9a-fA-F]{2}/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One percent-decoding pass; a `%` not followed by two hex digits stays a literal `%`. The bytes
 * must form valid UTF-8, which refuses overlong forms such as `%c0%ae` (a dot to old decoders).
 */
function percentDecode(text: string): string | null {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < text.length; ) {
    if (text[i] === '%' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const char = String.fromCodePoint(text.codePointAt(i)!);
      bytes.push(...encoder.encode(char));
      i += char.length;
    }
  }
  try {
    return utf8.decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

/**
 * Whether one reading of the path is harmless: no control characters or backslashes, no empty
 * segment except a trailing one, no dot segment. A segment counts as a dot segment when it is
 * `.` or `..` once `;params` (Tomcat's `..;/`) and trailing spaces (Windows) are dropped; `...`
 * is an ordinary name everywhere.
 */
function layerSafe(layer: string): boolean {
  // ASCII is its own NFKC form: one reading is enough (the common case, checked per request).
  const forms = /^[\u0000-\u007f]*$/.test(layer) ? [layer] : new Set([layer, layer.normalize('NFKC')]);
  for (const form of forms) {
    if (CONTROL.test(form) || form.includes('\\')) return false;
    const segments = form.split('/');
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      if (segment === '') {
        if (i !== segments.length - 1) return false;
        continue;
      }
      const name = segment.split(';')[0]!.replace(/ +$/, '');
      if (name === '.' || name === '..') return false;
    }
  }
  return true;
}

/**
 * The proxy path unchanged if it cannot leave the data source's base path once joined and
 * resolved by us, the URL class or any upstream that decodes or normalises, else null.
 *
 * Refused in any layer of percent-decoding (so `%2e%2e`, `.%2e`, `%252e%252e` and `..%2f` alike),
 * and in the NFKC form of each layer (fullwidth `．`, `／`, `＼`): `.`/`..` segments, backslashes,
 * empty segments (`a//b`, a leading `/`), NUL and other control characters; also raw characters
 * outside printable ASCII and `#`, malformed percent-encoding and invalid UTF-8. `%2F` inside a
 * segment is fine as long as the segments it creates are (`afsd%2Fafsd` passes, `%2F..%2F` not).
 */
export function safeProxyPath(proxyPath: string): string | null {
  if (proxyPath === '') return '';
  // The common case, decided at once: word characters, `-` and `~` in segments that may contain
  // dots but never start with one, single slashes, nothing encoded. Anything else is looked at fully.
  if (PLAIN_PATH.test(proxyPath)) return proxyPath;
  if (!/^[\u0021-\u007e]*$/.test(proxyPath) || proxyPath.includes('#')) return null;
  if (/%(?![0-9a-fA-F]{2})/.test(proxyPath)) return null; // Go refuses the request line itself
  let layer = proxyPath;
  for (let depth = 0; ; depth++) {
    if (!layerSafe(layer)) return null;
    if (!PCT.test(layer)) return proxyPath;
    if (depth === MAX_DECODE_DEPTH) return null;
    const next = percentDecode(layer);
    if (next === null) return null;
    layer = next;
  }
}
