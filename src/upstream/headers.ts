import { validateHeaderValue, type IncomingHttpHeaders } from 'node:http';
import { HOP_BY_HOP } from './policy/hop-by-hop.ts';
import type { DataSourceTarget } from './target.ts';

/**
 * Never forwarded: the caller's credentials, the client's view of the request, our own user
 * header, and hop-by-hop headers (node frames the upstream request itself; `expect` was already
 * answered by our server).
 */
export const STRIPPED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'authorization', 'proxy-authorization', 'x-ds-authorization', 'cookie',
  'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'origin', 'referer', 'x-grafana-user',
  ...HOP_BY_HOP, 'expect',
]);

/**
 * Response headers of a data source that never reach the client. A proxied answer is served from
 * dashgate's own origin, so any header a browser applies to the whole origin (rather than to the
 * one response) would let a data source set policy for every page and API of dashgate.
 */
export const STRIPPED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  // Hop-by-hop: they describe the upstream connection, and node frames ours itself.
  ...HOP_BY_HOP, 'proxy-authenticate',
  // Cookies would land on dashgate's origin (and could overwrite its login cookie).
  'set-cookie', 'set-cookie2',
  // Origin-wide and remembered by the browser: HSTS for our host name, alternative services,
  // certificate pinning and transparency, network error logging and its reporting endpoints,
  // client hints, agent clustering, the federated login status.
  'strict-transport-security', 'alt-svc', 'public-key-pins', 'public-key-pins-report-only', 'expect-ct',
  'nel', 'report-to', 'reporting-endpoints', 'accept-ch', 'accept-ch-lifetime', 'critical-ch',
  'origin-agent-cluster', 'set-login',
  // Wipes our origin's cookies, storage and caches.
  'clear-site-data',
  // Would widen the scope a service worker may claim on our origin.
  'service-worker-allowed',
  // Cross-origin read permissions for our origin are not the data source's to grant.
  'access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods',
  'access-control-allow-headers', 'access-control-expose-headers', 'access-control-max-age',
  'access-control-allow-private-network', 'timing-allow-origin',
  // Ours is set below; a report-only policy of theirs would report our URLs to their collector.
  'content-security-policy', 'content-security-policy-report-only',
]);

export interface ForwardOptions {
  userAgent: string;
  loginCookie: string;
  /** The caller's login when `[dataproxy] send_user_header` is on and the caller is a user, else null. */
  userHeader: string | null;
  /** The caller's address, appended to `X-Forwarded-For`. */
  ip: string;
  /** The body has no declared length and must stay chunked. */
  chunked: boolean;
}

/**
 * What a client's request tells the data source when it is passed on (the proxy, resources): the
 * client's headers, minus everything stripped and any it named in Connection, plus ours, then the
 * data source's own credentials and configured headers, which always win. Built as a new object
 * rather than by deleting from the parsed one (which would slow every later access).
 */
export function forwardedHeaders(incoming: IncomingHttpHeaders, target: DataSourceTarget, options: ForwardOptions): IncomingHttpHeaders {
  // Headers the client listed in Connection are hop-by-hop too (usually it lists none).
  const listed = connectionListed(single(incoming.connection));
  const headers: IncomingHttpHeaders = {};
  for (const name in incoming) {
    if (STRIPPED_REQUEST_HEADERS.has(name) || listed?.has(name)) continue;
    headers[name] = incoming[name];
  }

  const cookies = target.keepCookies.size > 0 ? keptCookies(incoming.cookie, target.keepCookies, options.loginCookie) : '';
  if (cookies) headers.cookie = cookies;
  const forwardedFor = single(incoming['x-forwarded-for']);
  headers['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${options.ip}` : options.ip;
  const dsAuthorization = single(incoming['x-ds-authorization']);
  if (dsAuthorization) headers.authorization = dsAuthorization;
  if (target.upstream) headers.host = target.upstream.host;
  headers['user-agent'] = options.userAgent;
  if (options.userHeader) headers['x-grafana-user'] = options.userHeader;
  // A body of unknown length must stay chunked upstream: node would send GET, DELETE or OPTIONS
  // bodies unframed otherwise.
  if (options.chunked) headers['transfer-encoding'] = 'chunked';
  for (const [name, value] of target.headers) headers[name] = value;
  return headers;
}

/** The cookies named in `keepCookies`, never the login cookie, sorted by name as the original does. */
export function keptCookies(header: string | undefined, keep: ReadonlySet<string>, loginCookie: string): string {
  if (!header) return '';
  const kept: Array<[string, string]> = [];
  for (const part of header.split(';')) {
    const pair = part.trim();
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (name && name !== loginCookie && keep.has(name)) kept.push([name, pair]);
  }
  return kept
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, pair]) => pair)
    .join('; ');
}

/** Set on every proxied answer: the body runs in a sandbox, so it cannot script dashgate's origin. */
export const PROXIED_CONTENT_SECURITY_POLICY = 'sandbox';

const PLAIN_CONNECTION = /^\s*(?:keep-alive|close)\s*$/i;

/** The header names a Connection header lists; null for none, or for just `keep-alive` or `close`. */
function connectionListed(connection: string | undefined): Set<string> | null {
  if (!connection || PLAIN_CONNECTION.test(connection)) return null;
  return new Set(connection.split(',').map((name) => name.trim().toLowerCase()));
}

/**
 * The headers the client gets for a data source's answer: the upstream's, minus the stripped ones
 * and any the upstream named in its own Connection header, plus the sandbox policy.
 */
export function responseHeaders(upstream: IncomingHttpHeaders): Record<string, string | string[]> {
  const listed = connectionListed(upstream.connection);
  const headers: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || STRIPPED_RESPONSE_HEADERS.has(name) || listed?.has(name)) continue;
    headers[name] = value;
  }
  headers['content-security-policy'] = PROXIED_CONTENT_SECURITY_POLICY;
  return headers;
}

/**
 * `[dataproxy] user_agent`, or `dashgate/<version>` when it is empty, as the original sends its
 * own `Grafana/<version>` then; null for a configured value that is no valid header value.
 */
export function userAgentFor(configured: string, version: string): { userAgent: string; invalid: boolean } {
  const fallback = `dashgate/${version}`;
  if (!configured) return { userAgent: fallback, invalid: false };
  try {
    validateHeaderValue('user-agent', configured);
    return { userAgent: configured, invalid: false };
  } catch {
    return { userAgent: fallback, invalid: true };
  }
}

export function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
