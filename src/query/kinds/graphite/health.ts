import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, is2xx, json, notJson, ok, requestFailed, type HealthCheck } from '../health.ts';

const M = MESSAGES.health;

/** Graphite (pkg/tsdb/graphite/healthcheck.go): renders `constantLine(100)` over the last hour as JSON. */
export const graphiteHealth: HealthCheck = async (ctx) => {
  const failed = (cause: string) => error(M.graphiteFailed, { verboseMessage: cause });
  const body = 'target=constantLine%28100%29&from=-1h&until=now&format=json&maxDataPoints=100';
  const { res, failure } = await attempt(ctx, { method: 'POST', path: 'render', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  if (failure !== undefined) return failed(failure);
  if (!is2xx(res)) return failed(requestFailed(res));
  if (!Array.isArray(json(res.body))) return failed(notJson(res));
  return ok(M.graphiteOk);
};
