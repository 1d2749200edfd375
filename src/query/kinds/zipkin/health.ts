import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, json, notJson, ok, type HealthCheck } from '../health.ts';

const M = MESSAGES.health;

/** Zipkin (pkg/tsdb/zipkin/handler_checkhealth.go): lists its services; anything but 200 fails. */
export const zipkinHealth: HealthCheck = async (ctx) => {
  const { res, failure } = await attempt(ctx, { method: 'GET', path: 'api/v2/services' });
  if (failure !== undefined) return error(failure);
  if (res.status !== 200) return error(M.zipkinStatus(res.status));
  if (!Array.isArray(json(res.body))) return error(notJson(res));
  return ok(M.working);
};
