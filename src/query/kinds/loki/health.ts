import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, is2xx, json, notJson, ok, record, requestFailed, type HealthCheck } from '../health.ts';

const M = MESSAGES.health;

/** Loki (pkg/tsdb/loki/healthcheck.go): the instant query `vector(1)+vector(1)` at t=4s must give 2. */
export const lokiHealth: HealthCheck = async (ctx) => {
  const template = (cause: string) => error(M.lokiFailed(cause));
  const { res, failure } = await attempt(ctx, { method: 'GET', path: 'loki/api/v1/query', query: 'query=vector%281%29%2Bvector%281%29&time=4000000000&limit=1' });
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
