/** Where a proxied call goes inside its data source, and whether that stays inside it. */

export const PROXY_ERRORS = {
  idInvalid: 'id is invalid',
  uidInvalid: 'UID is invalid',
  notFound: 'Unable to find datasource',
  badPath: 'invalid proxy path',
} as const;

export type ProxyRef = { kind: 'id'; id: number } | { kind: 'uid'; uid: string };

export type ExtractedPath =
  | { ok: true; ref: ProxyRef; proxyPath: string }
  | { ok: false; message: string };

const PREFIX = '/api/datasources/proxy/';
const UID_PATTERN = /^[a-zA-Z0-9\-_]*$/;

/**
 * Splits `/api/datasources/proxy/<id|uid/<uid>>/<rest>` (the raw, still-escaped path, so `%2F`
 * survives) into the data source reference and the path to call on it.
 */
export function extractProxyPath(rawPath: string): ExtractedPath | null {
  if (!rawPath.startsWith(PREFIX)) return null;
  const rest = rawPath.slice(PREFIX.length);
  let ref: ProxyRef;
  let after: string;
  if (rest.startsWith('uid/')) {
    const end = rest.indexOf('/', 4);
    const uid = end < 0 ? rest.slice(4) : rest.slice(4, end);
    if (!uid || !UID_PATTERN.test(uid)) return { ok: false, message: PROXY_ERRORS.uidInvalid };
    ref = { kind: 'uid', uid };
    after = end < 0 ? '' : rest.slice(end + 1);
  } else {
    const end = rest.indexOf('/');
    const id = end < 0 ? rest : rest.slice(0, end);
    if (!/^\d{1,10}$/.test(id) || Number(id) > 2 ** 31 - 1) return { ok: false, message: PROXY_ERRORS.idInvalid };
    ref = { kind: 'id', id: Number(id) };
    after = end < 0 ? '' : rest.slice(end + 1);
  }
  return { ok: true, ref, proxyPath: after };
}

/**
 * The proxy path if it cannot climb out of the data source's base path, else null. Rejected:
 * `.`/`..` segments (also percent-encoded, once or twice, and split by encoded slashes), empty
 * segments (`a//b`), backslashes, NUL and other control characters.
 */
export function safeProxyPath(proxyPath: string): string | null {
  if (proxyPath === '') return proxyPath;
  let decoded = proxyPath;
  // Decode repeatedly (double encoding) until stable; undecodable input is refused outright.
  for (let i = 0; i < 3; i++) {
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      return null;
    }
    if (next === decoded) break;
    decoded = next;
  }
  if (/[\u0000-\u001f\u007f\\]/.test(decoded)) return null;
  if (decoded.startsWith('/')) return null;
  const segments = decoded.split('/');
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment === '.' || segment === '..') return null;
    // An empty segment is only fine as the very last one (a trailing slash).
    if (segment === '' && i !== segments.length - 1) return null;
  }
  return proxyPath;
}

/**
 * Joins the data source URL's path and the proxy path with exactly one slash between them;
 * a trailing slash on the proxy path is kept and an empty proxy path leaves the base unchanged.
 */
export function joinUpstreamPath(basePath: string, proxyPath: string): string {
  if (proxyPath === '') return basePath || '/';
  const base = basePath.endsWith('/') ? basePath.slice(0, -1) : basePath;
  const tail = proxyPath.startsWith('/') ? proxyPath.slice(1) : proxyPath;
  return `${base}/${tail}`;
}
