import { MESSAGES } from '../../../errors/messages.ts';
import { attempt, error, json, ok, record, type HealthCheck } from '../health.ts';

const M = MESSAGES.health;

/** Elasticsearch (pkg/tsdb/elasticsearch/healthcheck.go): `_cluster/health?wait_for_status=yellow`. */
export const elasticsearchHealth: HealthCheck = async (ctx) => {
  const { res, failure } = await attempt(ctx, { method: 'GET', path: '_cluster/health', query: 'wait_for_status=yellow' });
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
