import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, is2xx, json, notImplemented, notJson, ok, record, requestFailed, type HealthCheck } from '../health.ts';
import type { UpstreamRequest } from '../kind.ts';

const M = MESSAGES.health;

/** InfluxDB (pkg/tsdb/influxdb/healthcheck.go): `SHOW measurements` (InfluxQL) or `buckets()` (Flux). */
export const influxDbHealth: HealthCheck = async (ctx) => {
  const version = String(ctx.dataSource.jsonData.version ?? 'InfluxQL');
  const working = (found: string) => ok(M.influxWorking(found));
  const failed = (cause: string, what: string) => error(M.influxFailed(cause, what));

  if (version === 'Flux') {
    const organization = String(ctx.dataSource.jsonData.organization ?? '');
    const { res, failure } = await attempt(ctx, {
      method: 'POST',
      path: 'api/v2/query',
      query: `org=${encodeURIComponent(organization)}`,
      body: JSON.stringify({ query: 'buckets()', type: 'flux' }),
      headers: { 'content-type': 'application/json', accept: 'application/csv' },
      tokenAuthorization: true,
    });
    if (failure !== undefined) return failed(failure, 'error performing flux query');
    if (!is2xx(res)) return failed(String(record(json(res.body))?.message ?? requestFailed(res)), 'error performing flux query');
    const rows = csvDataRows(res.body);
    if (rows === null) return failed('error getting flux query buckets', '');
    return working(`${rows} buckets found`);
  }
  if (version !== 'InfluxQL') return notImplemented();

  const database = String(ctx.dataSource.jsonData.dbName || ctx.dataSource.database || '');
  const params = `db=${encodeURIComponent(database)}&q=${encodeURIComponent('SHOW measurements')}&epoch=ms`;
  const probe: UpstreamRequest = ctx.dataSource.jsonData.httpMode === 'POST'
    ? { method: 'POST', path: 'query', query: `db=${encodeURIComponent(database)}&epoch=ms`, body: `q=${encodeURIComponent('SHOW measurements')}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }
    : { method: 'GET', path: 'query', query: params };
  const { res, failure } = await attempt(ctx, probe);
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
