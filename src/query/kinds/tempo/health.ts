import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, is2xx, ok, requestFailed, type HealthCheck } from '../health.ts';

const M = MESSAGES.health;

/** Tempo: its `/api/echo` readiness endpoint (the original checks Tempo from its UI, with this call). */
export const tempoHealth: HealthCheck = async (ctx) => {
  const { res, failure } = await attempt(ctx, { method: 'GET', path: 'api/echo' });
  if (failure !== undefined) return error(failure);
  if (!is2xx(res)) return error(requestFailed(res));
  if (res.body.trim() !== 'echo') return error(`invalid response: expected "echo", got ${JSON.stringify(res.body.slice(0, 100))}`);
  return ok(M.working);
};
