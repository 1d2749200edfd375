import { DomainError } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { parseTimeRange, type TimeRange } from './time-range.ts';

/**
 * The body of `POST /api/ds/query` read as the original's `parseMetricRequest` reads it: the
 * range, then per query its refId (`A` by default), data source reference (`{type, uid}`, the
 * pre-8.3 string, or the legacy `datasourceId`), `intervalMs` (1000), `maxDataPoints` (100),
 * `queryType` and the whole object as the kind's model. Pure.
 */
export interface DataSourceReference {
  /** Set when the query names a uid (object or string form). */
  uid: string | null;
  /** The legacy numeric id, used only when there is no uid. */
  id: number | null;
}

export interface RequestedQuery {
  refId: string;
  ref: DataSourceReference;
  intervalMs: number;
  maxDataPoints: number;
  queryType: string;
  model: Record<string, unknown>;
}

export interface QueryRequest {
  range: TimeRange;
  queries: RequestedQuery[];
}

/** The uid of the server-side expression engine (`expr.IsDataSource`). */
export const EXPRESSION_UID = '__expr__';
/** Its uids: `__expr__`, and `-100` before 8.3. */
export const EXPRESSION_UIDS: ReadonlySet<string> = new Set([EXPRESSION_UID, '-100']);
export const isExpressionUid = (uid: string | null): boolean => uid !== null && EXPRESSION_UIDS.has(uid);
/** The built-in "-- Grafana --" data source of the original's dashboards. */
export const GRAFANA_UID = 'grafana';

/** The errutil body of the original (`PublicError`: statusCode, messageId, message). */
export function queryError(messageId: string, message: string): DomainError {
  return new DomainError('BAD_REQUEST', message, { statusCode: 400, messageId, message });
}

export const QUERY_ERRORS = {
  noQueries: () => queryError('query.noQueries', MESSAGES.query.noQueries),
  tooManyQueries: (limit: number) => queryError('query.tooManyQueries', MESSAGES.query.tooManyQueries(limit)),
  invalidDatasourceId: () => queryError('query.invalidDatasourceId', MESSAGES.query.invalidDatasourceId),
  duplicateRefId: () => queryError('query.duplicateRefId', MESSAGES.query.duplicateRefId),
};

/** simplejson's `MustInt64(default)`: an integral JSON number, else the default. */
function int64(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : fallback;
}

export function parseQueryRequest(body: Record<string, unknown>, now: number): QueryRequest {
  const raw = body.queries;
  if (!Array.isArray(raw) || raw.length === 0) throw QUERY_ERRORS.noQueries();
  const range = parseTimeRange(body.from, body.to, now);
  const queries = raw.map((item): RequestedQuery => {
    // A query that is not an object has no fields: no refId, no data source.
    const model = item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as Record<string, unknown>) : {};
    return {
      refId: typeof model.refId === 'string' ? model.refId : 'A',
      ref: referenceOf(model),
      intervalMs: int64(model.intervalMs, 1000),
      maxDataPoints: int64(model.maxDataPoints, 100),
      queryType: typeof model.queryType === 'string' ? model.queryType : '',
      model,
    };
  });
  return { range, queries };
}

/** `getDataSourceFromQuery`: `datasource.uid`, else `datasource` as a string, else a positive `datasourceId`. */
export function referenceOf(model: Record<string, unknown>): DataSourceReference {
  const ds = model.datasource;
  let uid = '';
  if (ds !== null && typeof ds === 'object' && !Array.isArray(ds)) {
    const value = (ds as Record<string, unknown>).uid;
    if (typeof value === 'string') uid = value;
  } else if (typeof ds === 'string') uid = ds;
  if (uid !== '') return { uid, id: null };
  const id = int64(model.datasourceId, 0);
  return { uid: null, id: id > 0 ? id : null };
}

/**
 * Ours: a request of more than `limit` queries is refused (400) before any is read, as each costs
 * a data source lookup, a refId's answer and often an upstream call.
 */
export function checkQueryCount(body: Record<string, unknown>, limit: number): void {
  if (Array.isArray(body.queries) && body.queries.length > limit) throw QUERY_ERRORS.tooManyQueries(limit);
}

/** Refused after the data sources are found, as the original validates the parsed request. */
export function checkRefIds(queries: readonly Pick<RequestedQuery, 'refId'>[]): void {
  const seen = new Set<string>();
  for (const { refId } of queries) {
    if (seen.has(refId)) throw QUERY_ERRORS.duplicateRefId();
    seen.add(refId);
  }
}
