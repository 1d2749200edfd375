import type { Size } from '../budget.ts';
import type { DataResponse, Frame } from '../frames/frame.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../upstream/index.ts';

/**
 * One query of a request, after the envelope's defaults (SDK `backend.DataQuery`): the kind reads
 * its own keys from `model`, the whole query object as sent.
 */
export interface DataQuery {
  refId: string;
  queryType: string;
  /** Default 1000 (Prometheus reads `model.intervalMs` itself, where absent means 0). */
  intervalMs: number;
  /** Default 100. */
  maxDataPoints: number;
  /** Absolute range in epoch milliseconds, shared by every query of a request. */
  range: { from: number; to: number };
  model: Readonly<Record<string, unknown>>;
}

/** What a kind knows of the data source it runs against (secrets stay in the upstream layer). */
export interface DataSourceInfo {
  id: number;
  uid: string;
  orgId: number;
  name: string;
  type: string;
  url: string;
  database: string;
  jsonData: Readonly<Record<string, unknown>>;
}

/**
 * One call to the data source and its answer, as the opened data source takes and gives them
 * (policy, TLS, credentials, timeout and limits are the upstream layer's).
 */
export type { UpstreamRequest, UpstreamResponse } from '../../upstream/index.ts';

/** Everything a kind may use to answer: it never opens a connection itself. */
export interface KindContext {
  dataSource: DataSourceInfo;
  /**
   * Sends one call through the upstream layer. Rejects with an `UpstreamError`, whose `message`
   * is the refId's error (Go-style, as the original words it) and whose `status` is 502
   * (unreachable, unusable TLS material), 504 (timeout), 403 (egress policy), 499 (the client
   * left); the caller turns it into the refId's answer.
   */
  call(request: UpstreamRequest): Promise<UpstreamResponse>;
  /** Aborted when the client goes away or the request's deadline passes. */
  signal: AbortSignal;
  /** Most points (rows summed over fields) one refId may answer; past it the refId fails. */
  maxPoints: number;
  /** Most series (frames) one refId may answer; past it the refId fails. */
  maxSeries: number;
}

/** A resource call (`/api/datasources/uid/:uid/resources/*`) as the kind receives it. */
export interface ResourceRequest {
  method: string;
  /** The path after `resources/`, no leading slash. */
  path: string;
  /** Raw query string without `?`. */
  query: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

export interface ResourceResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** A data source kind's backend: model -> upstream calls -> frames, as the original's plugin does it. */
export interface QueryKind {
  /** Plugin type ids this kind answers, aliases included (`grafana-testdata-datasource`, `testdata`). */
  readonly types: readonly string[];
  /** Answers every query of one data source; a refId absent from the map is absent from the results. */
  query(ctx: KindContext, queries: readonly DataQuery[]): Promise<Map<string, DataResponse>>;
  /**
   * What a query will build (series and points, an upper bound), known from its model before it
   * runs; absent for kinds whose answers are sized by their upstream (counted as they are read).
   */
  estimate?(query: DataQuery): Size;
  /** Resources; a kind without them answers 404 "Not found" at the route. */
  resource?(ctx: KindContext, request: ResourceRequest): Promise<ResourceResponse>;
}

/** Helper for kinds: a refId's failure. */
export function failed(error: string, errorSource: 'plugin' | 'downstream', status: number, frames?: Frame[]): DataResponse {
  return frames ? { error, errorSource, status, frames } : { error, errorSource, status };
}
