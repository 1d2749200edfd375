import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, is2xx, json, notJson, ok, record, requestFailed, type HealthCheck } from '../health.ts';

const M = MESSAGES.health;

/** Jaeger (pkg/tsdb/jaeger): lists its services. */
export const jaegerHealth: HealthCheck = async (ctx) => {
  const { res, failure } = await attempt(ctx, { method: 'GET', path: 'api/services' });
  if (failure !== undefined) return error(failure);
  if (!is2xx(res)) return error(requestFailed(res));
  if (!record(json(res.body))) return error(notJson(res));
  return ok(M.working);
};
