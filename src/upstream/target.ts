import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { DataSourceRecord } from '../services/data-sources.ts';

/** Where a data source's calls go: what http-proxy-3 needs of a target URL, parsed once. */
export interface UpstreamBase {
  protocol: 'http:' | 'https:';
  /** `host[:port]`, as sent in the Host header (the port only when it is not the scheme's default). */
  host: string;
  /** May be a bracketed IPv6 literal; http-proxy-3 strips the brackets before connecting. */
  hostname: string;
  /** '' for the scheme's default port. */
  port: string;
  /** The data source URL's path, still escaped. */
  basePath: string;
}

/**
 * What the proxy needs of one version of a data source, computed once when it is loaded: the
 * parsed URL, the headers it injects (secrets already decrypted and encoded) and its options.
 */
export interface DataSourceTarget {
  id: number;
  orgId: number;
  uid: string;
  type: string;
  version: number;
  /** The URL as stored, for the "Invalid data source URL" message. */
  rawUrl: string;
  /** Null when the stored URL is not an absolute http(s) URL. */
  upstream: UpstreamBase | null;
  /** Cookie names (`jsonData.keepCookies`) that may reach the data source. */
  keepCookies: ReadonlySet<string>;
  /** Set on every call, in order, after the caller's headers are cleaned (lower-case names). */
  headers: ReadonlyArray<readonly [name: string, value: string]>;
  /** `jsonData.timeout` in seconds when set and positive, else null (the `[dataproxy] timeout`). */
  timeoutSeconds: number | null;
  /** Header names from `jsonData.httpHeaderName<N>` that were skipped as unusable (never values). */
  skippedHeaders: readonly string[];
}

/** Framing and routing headers a data source may not override: they would desynchronise the connection. */
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);

/** Builds the prepared target of a stored row whose secrets are already decrypted. */
export function prepareTarget(row: DataSourceRecord, secrets: Readonly<Record<string, string>>): DataSourceTarget {
  const jsonData = row.jsonData;
  const headers: Array<readonly [string, string]> = [];
  const skippedHeaders: string[] = [];

  // The original server's HTTP client: basic auth from basicAuthUser, else from user + password.
  if (row.basicAuth) headers.push(['authorization', basicHeader(row.basicAuthUser, secrets.basicAuthPassword ?? '')]);
  else if (row.user) headers.push(['authorization', basicHeader(row.user, secrets.password ?? '')]);

  // httpHeaderName1, 2, ... until the first missing one, each with secureJsonData.httpHeaderValue<N>.
  for (let n = 1; ; n++) {
    const name = jsonData[`httpHeaderName${n}`];
    if (typeof name !== 'string' || name === '') break;
    const value = secrets[`httpHeaderValue${n}`] ?? '';
    if (RESERVED_HEADERS.has(name.toLowerCase()) || !validHeader(name, value)) {
      skippedHeaders.push(name);
      continue;
    }
    headers.push([name.toLowerCase(), value]);
  }

  const keep = Array.isArray(jsonData.keepCookies) ? jsonData.keepCookies.filter((c): c is string => typeof c === 'string') : [];
  const timeout = Number(jsonData.timeout);

  return {
    id: row.id,
    orgId: row.orgId,
    uid: row.uid,
    type: row.type,
    version: row.version,
    rawUrl: row.url,
    upstream: parseUpstream(row.url),
    keepCookies: new Set(keep),
    headers,
    timeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : null,
    skippedHeaders,
  };
}

/** The stored URL (scheme-less ones are http, as the data source API accepts them) when it is absolute http(s). */
export function parseUpstream(raw: string): UpstreamBase | null {
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(/^[^:]*:\/\//.test(raw) ? raw : `http://${raw}`);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return null;
  return { protocol: url.protocol, host: url.host, hostname: url.hostname, port: url.port, basePath: url.pathname };
}

function validHeader(name: string, value: string): boolean {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}

function basicHeader(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/**
 * Grafana's `JoinURLFragments`: exactly one slash between the data source URL's path and the
 * proxy path; a trailing slash on the proxy path is kept; an empty proxy path leaves the base
 * unchanged (an empty result is sent as `/`).
 */
export function joinUpstreamPath(basePath: string, proxyPath: string): string {
  if (proxyPath === '') return basePath;
  const baseSlash = basePath.endsWith('/');
  const pathSlash = proxyPath.startsWith('/');
  if (baseSlash && pathSlash) return basePath + proxyPath.slice(1);
  if (!baseSlash && !pathSlash) return `${basePath}/${proxyPath}`;
  return basePath + proxyPath;
}
