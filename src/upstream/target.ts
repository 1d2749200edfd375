import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { DataSourceRecord } from '../services/data-sources.ts';
import { HOP_BY_HOP } from './policy/hop-by-hop.ts';
import { tlsSettingsFor, type TlsMaterial } from './tls.ts';

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
 * What calling one version of a data source needs, computed once when it is loaded: what kinds
 * read of it (never its secrets), the parsed URL, the headers every call carries (secrets already
 * decrypted and encoded) and its options.
 */
export interface DataSourceTarget {
  id: number;
  orgId: number;
  uid: string;
  name: string;
  type: string;
  version: number;
  database: string;
  jsonData: Readonly<Record<string, unknown>>;
  /** The URL as stored, for the "Invalid data source URL" message. */
  rawUrl: string;
  /** Null when the stored URL is not an absolute http(s) URL. */
  upstream: UpstreamBase | null;
  /** Cookie names (`jsonData.keepCookies`) that may reach the data source. */
  keepCookies: ReadonlySet<string>;
  /** Set on every call, in order, after the caller's headers are cleaned (lower-case names). */
  headers: ReadonlyArray<readonly [name: string, value: string]>;
  /** `jsonData.timeout` in seconds when it is a positive finite number, else null (the `[dataproxy] timeout`). */
  timeoutSeconds: number | null;
  /**
   * `Token <secureJsonData.token>` for an InfluxDB 2 (Flux) data source: the `Authorization` its
   * own client sends on the calls its kind makes (never on proxied ones); null otherwise.
   */
  tokenAuthorization: string | null;
  /** Header names from `jsonData.httpHeaderName<N>` that were skipped as unusable (never values). */
  skippedHeaders: readonly string[];
  /** An https data source's own TLS material; null for the defaults (and for http). */
  tls: TlsMaterial | null;
  /** Why its TLS material is unusable (every call then fails with it), else null. Names the field, never its value. */
  tlsError: string | null;
  /** Its stored secrets could not be decrypted (another `[security] secret_key`, or a blob sealed for another row or key): no call can be made. */
  secretsUnreadable: boolean;
}

/** Framing and routing headers a data source may not override: they would desynchronise the connection. */
const RESERVED_HEADERS = new Set([...HOP_BY_HOP, 'content-length', 'expect']);

/** `jsonData.timeout` (a number, or a numeric string as forms send it) when it is a positive finite number of seconds. */
export function configuredTimeout(value: unknown): number | null {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(seconds) && seconds > 0 ? seconds : null;
}

/**
 * Builds the prepared target of a stored row from its decrypted secrets; `secrets` null when they
 * could not be decrypted (the target then fails every call).
 */
export function prepareTarget(row: DataSourceRecord, decrypted: Readonly<Record<string, string>> | null): DataSourceTarget {
  const secrets = decrypted ?? {};
  const jsonData = row.jsonData ?? {};
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
  const upstream = parseUpstream(row.url);
  const tls = upstream?.protocol === 'https:' ? tlsSettingsFor(jsonData, secrets) : { material: null, error: null };

  return {
    id: row.id,
    orgId: row.orgId,
    uid: row.uid,
    name: row.name,
    type: row.type,
    version: row.version,
    database: row.database,
    jsonData,
    rawUrl: row.url,
    upstream,
    keepCookies: new Set(keep),
    headers,
    timeoutSeconds: configuredTimeout(jsonData.timeout),
    tokenAuthorization: row.type === 'influxdb' && jsonData.version === 'Flux' && secrets.token ? `Token ${secrets.token}` : null,
    skippedHeaders,
    tls: tls.material,
    tlsError: tls.error,
    secretsUnreadable: decrypted === null,
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
