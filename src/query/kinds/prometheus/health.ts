import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, is2xx, json, notJson, ok, record, requestFailed, type HealthCheck } from '../health.ts';
import { prometheusCall } from './index.ts';
import { parsePrometheusQuery } from './model.ts';

const M = MESSAGES.health;

/**
 * Prometheus (pkg/promlib/healthcheck.go): the query path running the instant query `1+1` over
 * 1s..4s (so evaluated at 4s), with the data source's HTTP method, custom query parameters and
 * query timeout, as every query of its is sent; the answer must be the scalar 2.
 */
export const prometheusHealth: HealthCheck = async (ctx) => {
  const template = (cause: string) => error(M.prometheusFailed(cause));
  const jsonData = ctx.dataSource.jsonData;
  const query = parsePrometheusQuery(
    { refId: '__healthcheck__', queryType: '', intervalMs: 1000, maxDataPoints: 100, range: { from: 1000, to: 4000 }, model: { refId: '__healthcheck__', expr: '1+1', instant: true } },
    typeof jsonData.timeInterval === 'string' ? jsonData.timeInterval : '',
  );
  if ('error' in query) return template(query.error);
  const { res, failure } = await attempt(ctx, prometheusCall(jsonData, query, 'instant'));
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
