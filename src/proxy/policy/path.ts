/** Which data source a proxy URL names, and the path below it. */
import { MESSAGES } from '../../errors/messages.ts';
import { UID_PATTERN } from '../../services/data-source-types.ts';

/** The data source a proxy URL names, by id or by uid. */
export type ProxyRef = { kind: 'id'; id: number } | { kind: 'uid'; uid: string };

export interface ProxyPathMatch {
  ok: true;
  ref: ProxyRef;
  /** Still percent-encoded (`%2F` stays), without the leading slash; '' for the data source root. */
  proxyPath: string;
  /** The query string as received, with its `?`; '' when there is none. */
  search: string;
}

export interface ProxyPathError {
  ok: false;
  error: 'id-invalid' | 'uid-invalid' | 'not-found';
  status: 400 | 404;
  message: string;
}

const ROUTE = /^\/api\/datasources\/proxy\/(?:uid\/([^/]+)|([^/]+))(?:\/(.*))?$/s;
const INT64_MAX = 2n ** 63n - 1n;
/** data_source.id is a Postgres integer: a larger id cannot exist, and asking would be a 500. */
const STORED_ID_MAX = 2 ** 31 - 1;

/**
 * Splits a request target (`/api/datasources/proxy/<id>|uid/<uid>[/<path>][?query]`) into the data
 * source reference, the still-escaped proxy path and the query. Like Grafana it strips
 * `^/api/datasources/proxy/([\d]+|uid/[\w-]+)/?` from the escaped path, so exactly one slash
 * after the reference goes (`/1//x` gives `/x`). Null when this is not a proxy route at all.
 *
 * Errors: a reference that is not an integer answers 400 `id is invalid` (Grafana also takes
 * `+1`/`-1` from strconv; those are refused here too); a uid outside `[a-zA-Z0-9-_]` 400
 * `UID is invalid`; an int64 id beyond the stored id range 404 `Unable to find datasource`.
 */
export function extractProxyPath(rawUrl: string): ProxyPathMatch | ProxyPathError | null {
  const q = rawUrl.indexOf('?');
  const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const search = q < 0 || q === rawUrl.length - 1 ? '' : rawUrl.slice(q);
  const match = ROUTE.exec(path);
  if (!match) return null;
  const [, uid, id, rest = ''] = match;
  if (uid !== undefined) {
    if (!UID_PATTERN.test(uid)) return { ok: false, error: 'uid-invalid', status: 400, message: MESSAGES.proxy.uidInvalid };
    return { ok: true, ref: { kind: 'uid', uid }, proxyPath: rest, search };
  }
  // Up to 18 digits always fits int64; only longer ones need the exact (BigInt) comparison.
  if (!/^[0-9]+$/.test(id!) || (id!.length > 18 && BigInt(id!) > INT64_MAX)) return { ok: false, error: 'id-invalid', status: 400, message: MESSAGES.proxy.idInvalid };
  const value = Number(id);
  if (value > STORED_ID_MAX) return { ok: false, error: 'not-found', status: 404, message: MESSAGES.proxy.notFound };
  return { ok: true, ref: { kind: 'id', id: value }, proxyPath: rest, search };
}
