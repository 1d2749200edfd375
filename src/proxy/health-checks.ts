import type { IncomingHttpHeaders } from 'node:http';
import { MESSAGES } from '../errors/messages.ts';
import type { DataSourceHealth } from '../services/data-source-health.ts';

const M = MESSAGES.health;

/**
 * What each built-in kind's own health check asks its store and how it words the verdict, as the
 * original's plugins do (pkg/tsdb/<kind>): the same request, the same success message and the
 * same failure template, with the cause (refused, timeout, the store's status, a bad answer)
 * filled in. Kinds whose check needs more than HTTP (SQL databases, cloud APIs) answer as the
 * original does for a plugin without a check: UNKNOWN, "Health check not implemented".
 */

/** A request a kind's check sends, relative to the data source URL. */
export interface ProbeRequest {
  method: 'GET' | 'POST';
  /** Joined to the data source URL's path as the proxy joins proxy paths. */
  path: string;
  /** Without `?`; '' for none. */
  query?: string;
  body?: string;
  /** Set after the data source's own headers, so a kind's protocol header wins. */
  headers?: Record<string, string>;
}

export interface ProbeResponse {
  status: number;
  /** `401 Unauthorized`, as Go's `Response.Status` reads. */
  statusLine: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Why a probe got no answer, worded as the original's Go HTTP client words it. */
export class ProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeError';
  }
}

export interface ProbeContext {
  jsonData: Record<string, unknown>;
  database: string;
  /** The data source's decrypted secrets (for protocol-specific auth such as InfluxDB's token). */
  secrets: Readonly<Record<string, string>>;
  /** Sends through the proxy's connections with the data source's headers; rejects with `ProbeError`. */
  send(probe: ProbeRequest): Promise<ProbeResponse>;
}

export type HealthCheck = (context: ProbeContext) => Promise<DataSourceHealth>;

const ok = (message: string): DataSourceHealth => ({ status: 'OK', message });
const error = (message: string, details?: Record<string, unknown>): DataSourceHealth =>
  details ? { status: 'ERROR', message, details } : { status: 'ERROR', message };

/** The answer, or the reason there was none (only transport failures; anything else propagates). */
async function attempt(context: ProbeContext, probe: ProbeRequest): Promise<{ res: ProbeResponse; failure?: never } | { res?: never; failure: string }> {
  try {
    return { res: await context.send(probe) };
  } catch (cause) {
    if (cause instanceof ProbeError) return { failure: cause.message };
    throw cause;
  }
}

function json(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

const is2xx = (res: ProbeResponse) => res.status >= 200 && res.status < 300;
const requestFailed = (res: ProbeResponse) => `request failed: ${res.statusLine}`;
/** Go's decoder error for a body that is not JSON, shortened to what it means. */
const notJson = (res: ProbeResponse) => `invalid response: not JSON (${res.statusLine}, ${res.body.length} bytes)`;

/**
 * Prometheus (pkg/tsdb/prometheus/healthcheck.go): the instant query `1+1` at t=4s, with the
 * data source's HTTP method (POST unless `jsonData.httpMethod` is GET).
 */
const prometheus: HealthCheck = async (context) => {
  const template = (cause: string) => error(M.prometheusFailed(cause));
  const query = 'query=1%2B1&time=4';
  const probe: ProbeRequest = context.jsonData.httpMethod === 'GET'
    ? { method: 'GET', path: 'api/v1/query', query }
    : { method: 'POST', path: 'api/v1/query', body: query, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  const { res, failure } = await attempt(context, probe);
  if (failure !== undefined) return template(failure);
  const body = record(json(res.body));
  if (body?.status === 'error') return template(`${String(body.errorType ?? 'error')}: ${String(body.error ?? res.statusLine)}`);
  if (!is2xx(res)) return template(requestFailed(res));
  if (!body) return template(notJson(res));
  const result = record(body.data)?.result;
  if (body.status !== 'success' || !Array.isArray(result) || String(result[1]) !== '2') {
    return template(`invalid response: expected the result 2 of 1+1, got ${JSON.stringify(body.data ?? null).slice(0, 200)}`);
  }
  return ok(M.prometheusOk);
};

/** Loki (pkg/tsdb/loki/healthcheck.go): the instant query `vector(1)+vector(1)` at t=4s must give 2. */
const loki: HealthCheck = async (context) => {
  const template = (cause: string) => error(M.lokiFailed(cause));
  const { res, failure } = await attempt(context, { method: 'GET', path: 'loki/api/v1/query', query: 'query=vector%281%29%2Bvector%281%29&time=4000000000&limit=1' });
  if (failure !== undefined) return template(failure);
  if (!is2xx(res)) return template(requestFailed(res));
  const body = record(json(res.body));
  if (!body) return template(notJson(res));
  const data = record(body.data);
  const result = data?.result;
  // A vector of one sample, or (from some versions) a scalar.
  const value = Array.isArray(result) && data?.resultType === 'scalar' ? result[1] : record(Array.isArray(result) ? result[0] : null)?.value;
  if (!Array.isArray(result) || result.length === 0) return template('no frames');
  if (!(Array.isArray(value) ? String(value[1]) === '2' : String(value) === '2')) return template('invalid response');
  return ok(M.lokiOk);
};

/** Graphite (pkg/tsdb/graphite/healthcheck.go): renders `constantLine(100)` over the last hour as JSON. */
const graphite: HealthCheck = async (context) => {
  const failed = (cause: string) => error(M.graphiteFailed, { verboseMessage: cause });
  const body = 'target=constantLine%28100%29&from=-1h&until=now&format=json&maxDataPoints=100';
  const { res, failure } = await attempt(context, { method: 'POST', path: 'render', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  if (failure !== undefined) return failed(failure);
  if (!is2xx(res)) return failed(requestFailed(res));
  if (!Array.isArray(json(res.body))) return failed(notJson(res));
  return ok(M.graphiteOk);
};

/** InfluxDB (pkg/tsdb/influxdb/healthcheck.go): `SHOW measurements` (InfluxQL) or `buckets()` (Flux). */
const influxdb: HealthCheck = async (context) => {
  const version = String(context.jsonData.version ?? 'InfluxQL');
  const working = (found: string) => ok(M.influxWorking(found));
  const failed = (cause: string, what: string) => error(M.influxFailed(cause, what));

  if (version === 'Flux') {
    const organization = String(context.jsonData.organization ?? '');
    const token = context.secrets.token;
    const { res, failure } = await attempt(context, {
      method: 'POST',
      path: 'api/v2/query',
      query: `org=${encodeURIComponent(organization)}`,
      body: JSON.stringify({ query: 'buckets()', type: 'flux' }),
      headers: { 'content-type': 'application/json', accept: 'application/csv', ...(token ? { authorization: `Token ${token}` } : {}) },
    });
    if (failure !== undefined) return failed(failure, 'error performing flux query');
    if (!is2xx(res)) return failed(String(record(json(res.body))?.message ?? requestFailed(res)), 'error performing flux query');
    const rows = csvDataRows(res.body);
    if (rows === null) return failed('error getting flux query buckets', '');
    return working(`${rows} buckets found`);
  }
  if (version !== 'InfluxQL') return { status: 'UNKNOWN', message: M.notImplemented };

  const database = String(context.jsonData.dbName || context.database || '');
  const params = `db=${encodeURIComponent(database)}&q=${encodeURIComponent('SHOW measurements')}&epoch=ms`;
  const probe: ProbeRequest = context.jsonData.httpMode === 'POST'
    ? { method: 'POST', path: 'query', query: `db=${encodeURIComponent(database)}&epoch=ms`, body: `q=${encodeURIComponent('SHOW measurements')}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }
    : { method: 'GET', path: 'query', query: params };
  const { res, failure } = await attempt(context, probe);
  if (failure !== undefined) return failed(failure, 'error performing influxQL query');
  const body = record(json(res.body));
  if (!is2xx(res)) return failed(typeof body?.error === 'string' ? `InfluxDB returned error: ${body.error}` : requestFailed(res), 'error performing influxQL query');
  if (!body) return failed(notJson(res), 'error performing influxQL query');
  const first = record(Array.isArray(body.results) ? body.results[0] : null);
  if (!first) return failed('invalid response: no results', 'error performing influxQL query');
  if (typeof first.error === 'string') return failed(first.error, 'error reading influxDB');
  const series = Array.isArray(first.series) ? first.series : [];
  if (series.length === 0) return working('0 measurements found');
  const values = record(series[0])?.values;
  return working(`${Array.isArray(values) ? values.length : 0} measurements found`);
};

/** Data rows of an annotated CSV answer (InfluxDB 2's query API), or null when it is not CSV. */
function csvDataRows(body: string): number | null {
  const lines = body.split(/\r?\n/).filter((line) => line !== '' && !line.startsWith('#'));
  if (lines.length === 0) return 0;
  const header = lines[0]!;
  if (!header.includes(',')) return null;
  return lines.filter((line) => line !== header).length;
}

/** Elasticsearch (pkg/tsdb/elasticsearch/healthcheck.go): `_cluster/health?wait_for_status=yellow`. */
const elasticsearch: HealthCheck = async (context) => {
  const { res, failure } = await attempt(context, { method: 'GET', path: '_cluster/health', query: 'wait_for_status=yellow' });
  if (failure !== undefined) return error(M.elasticsearchUnreachable(failure));
  if (res.status === 408) return error(M.elasticsearchTimedOut);
  if (res.status >= 400) return error(M.elasticsearchStatus(res.statusLine));
  const body = record(json(res.body));
  if (!body) {
    const shown = res.body.length > 200 ? `${res.body.slice(0, 200)}...` : res.body;
    return { status: 'UNKNOWN', message: M.elasticsearchUnparsable(shown) };
  }
  if (body.status === 'red') return error(M.elasticsearchRed);
  return ok(M.elasticsearchOk);
};

/** Tempo: its `/api/echo` readiness endpoint (the original checks Tempo from its UI, with this call). */
const tempo: HealthCheck = async (context) => {
  const { res, failure } = await attempt(context, { method: 'GET', path: 'api/echo' });
  if (failure !== undefined) return error(failure);
  if (!is2xx(res)) return error(requestFailed(res));
  if (res.body.trim() !== 'echo') return error(`invalid response: expected "echo", got ${JSON.stringify(res.body.slice(0, 100))}`);
  return ok(M.working);
};

/** Jaeger (pkg/tsdb/jaeger): lists its services. */
const jaeger: HealthCheck = async (context) => {
  const { res, failure } = await attempt(context, { method: 'GET', path: 'api/services' });
  if (failure !== undefined) return error(failure);
  if (!is2xx(res)) return error(requestFailed(res));
  if (!record(json(res.body))) return error(notJson(res));
  return ok(M.working);
};

/** Zipkin (pkg/tsdb/zipkin/handler_checkhealth.go): lists its services; anything but 200 fails. */
const zipkin: HealthCheck = async (context) => {
  const { res, failure } = await attempt(context, { method: 'GET', path: 'api/v2/services' });
  if (failure !== undefined) return error(failure);
  if (res.status !== 200) return error(M.zipkinStatus(res.status));
  if (!Array.isArray(json(res.body))) return error(notJson(res));
  return ok(M.working);
};

/** TestData answers its check without calling anything. */
const testdata: HealthCheck = () => Promise.resolve(ok(M.working));

const CHECKS: Record<string, HealthCheck> = {
  prometheus,
  loki,
  graphite,
  influxdb,
  elasticsearch,
  tempo,
  jaeger,
  zipkin,
  testdata,
  'grafana-testdata-datasource': testdata,
};

/** The check of a kind, or null when the original has none reachable over HTTP. */
export function checkFor(type: string): HealthCheck | null {
  return Object.hasOwn(CHECKS, type) ? CHECKS[type]! : null;
}

/** Whether a check answers without calling its data source (so needs no URL). */
export function callsNothing(check: HealthCheck): boolean {
  return check === testdata;
}
