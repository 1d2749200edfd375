/**
 * Which live queries are the same work. Subscribers share one upstream run per tick when their
 * keys are equal: the same org (nothing of one org is ever shared with another), range text,
 * refresh period, and queries once normalized. Pure; table-tested in test/query/live/share-key.test.ts.
 */

/** The envelope's defaults (`parseMetricRequest`): a query without them means the same as with them. */
const QUERY_DEFAULTS: Readonly<Record<string, unknown>> = { refId: 'A', intervalMs: 1000, maxDataPoints: 100, queryType: '', hide: false };

/**
 * Keys a front end sends that no data source kind reads, and that differ between viewers of the
 * same panel (the frontend's per-request `requestId`, its row `key`, its cache hint).
 */
const NOISE = new Set(['requestId', 'key', 'queryCachingTTL']);

/**
 * One query as a share key sees it: defaults applied, noise dropped, the data source reduced to
 * what picks it (`uid`, the legacy string form being a uid; `datasourceId` only when no uid), and
 * every object's keys sorted, so key order and spelled-out defaults do not split viewers.
 */
export function normalizeQuery(query: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(QUERY_DEFAULTS)) out[key] = value;
  for (const [key, value] of Object.entries(query)) {
    if (NOISE.has(key) || value === undefined) continue;
    out[key] = value;
  }
  const uid = dataSourceUid(query.datasource);
  if (uid !== null) {
    out.datasource = { uid };
    delete out.datasourceId;
  }
  return sortKeys(out) as Record<string, unknown>;
}

function dataSourceUid(ref: unknown): string | null {
  if (typeof ref === 'string' && ref !== '') return ref;
  if (ref !== null && typeof ref === 'object' && !Array.isArray(ref)) {
    const uid = (ref as Record<string, unknown>).uid;
    if (typeof uid === 'string' && uid !== '') return uid;
  }
  return null;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

export interface ShareKeyInput {
  orgId: number;
  queries: ReadonlyArray<Readonly<Record<string, unknown>>>;
  from: string;
  to: string;
  refreshMs: number;
}

/** The share key: equal for requests that may be answered by one upstream run, never across orgs. */
export function shareKey(input: ShareKeyInput): string {
  const queries = input.queries.map(normalizeQuery).sort((a, b) => (String(a.refId) < String(b.refId) ? -1 : String(a.refId) > String(b.refId) ? 1 : 0));
  return JSON.stringify([input.orgId, input.from.trim(), input.to.trim(), input.refreshMs, queries]);
}
