import { MESSAGES } from '../../../errors/messages.ts';
import type { DataResponse } from '../../frames/frame.ts';
import { failed, type DataQuery, type KindContext, type QueryKind, type ResourceRequest, type ResourceResponse, type UpstreamRequest } from '../kind.ts';
import { callFailed } from '../kind-results.ts';
import { prometheusResponseSliced, TooManyPoints, TooManySeries } from './frames.ts';
import { alignedRange, parsePrometheusQuery, secondsParam, type PrometheusQuery } from './model.ts';
import { responseHeaders } from '../../../upstream/index.ts';

/**
 * Prometheus, as the original's backend queries it (`pkg/promlib`): per refId an instant and/or a
 * range call (`jsonData.httpMethod`, POST by default, with a form body; GET puts the same
 * parameters in the query string), `jsonData.customQueryParameters` appended and
 * `jsonData.queryTimeout` sent as `timeout`; the answers become frames (frames.ts).
 * Resources are passed through as the proxy passes requests, under its rules.
 */
export const prometheusKind: QueryKind = {
  types: ['prometheus'],

  async query(ctx, queries) {
    const out = new Map<string, DataResponse>();
    await Promise.all(queries.map(async (query) => out.set(query.refId, await runOne(ctx, query))));
    return out;
  },

  async resource(ctx, request) {
    return forwardResource(ctx, request);
  },
};

async function runOne(ctx: KindContext, query: DataQuery): Promise<DataResponse> {
  const jsonData = ctx.dataSource.jsonData;
  const parsed = parsePrometheusQuery(query, typeof jsonData.timeInterval === 'string' ? jsonData.timeInterval : '');
  if ('error' in parsed) return failed(parsed.error, 'plugin', 400);
  const response: DataResponse = { frames: [] };
  // Instant first, then range, as the original appends them.
  for (const type of ['instant', 'range'] as const) {
    if (type === 'instant' ? !parsed.instant : !parsed.range) continue;
    const part = await fetchOne(ctx, parsed, type);
    if (part.error !== undefined) {
      response.error = response.error === undefined ? part.error : `${response.error} ${part.error}`;
      response.errorSource = part.errorSource;
      response.status = part.status;
    }
    response.frames!.push(...(part.frames ?? []));
  }
  return response;
}

async function fetchOne(ctx: KindContext, q: PrometheusQuery, type: 'instant' | 'range'): Promise<DataResponse> {
  let answer;
  try {
    answer = await ctx.call(prometheusCall(ctx.dataSource.jsonData, q, type));
  } catch (error) {
    return callFailed(error);
  }
  try {
    return await prometheusResponseSliced(q, answer.status, answer.body, ctx);
  } catch (error) {
    // Anything else is this server's fault: the caller logs it and answers a fixed message.
    if (error instanceof TooManyPoints) return failed(MESSAGES.query.tooManyPoints(ctx.maxPoints), 'plugin', 400);
    if (error instanceof TooManySeries) return failed(MESSAGES.query.tooManySeries(ctx.maxSeries), 'plugin', 400);
    throw error;
  }
}

/** The upstream call of one query: path, method, parameters (Go's `url.Values.Encode` sorts them). */
export function prometheusCall(jsonData: Readonly<Record<string, unknown>>, q: PrometheusQuery, type: 'instant' | 'range'): UpstreamRequest {
  const params: Record<string, string> = { query: q.expr };
  if (type === 'range') {
    const { start, end } = alignedRange(q);
    Object.assign(params, { start: secondsParam(start), end: secondsParam(end), step: secondsParam(q.stepMs) });
  } else {
    params.time = secondsParam(q.end);
  }
  if (typeof jsonData.queryTimeout === 'string' && jsonData.queryTimeout !== '') params.timeout = jsonData.queryTimeout;
  const encoded = new URLSearchParams(Object.keys(params).sort().map((k) => [k, params[k]!])).toString();
  const custom = typeof jsonData.customQueryParameters === 'string' ? jsonData.customQueryParameters.replace(/^[?&]+/, '') : '';
  const method = typeof jsonData.httpMethod === 'string' && jsonData.httpMethod.toUpperCase() === 'GET' ? 'GET' : 'POST';
  const path = type === 'range' ? 'api/v1/query_range' : 'api/v1/query';
  if (method === 'GET') return { method, path, query: custom ? `${encoded}&${custom}` : encoded };
  return {
    method, path, query: custom || undefined,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: encoded,
  };
}

/**
 * Headers of a resource call that are dashgate's own, or ask for an encoding of an answer that is
 * read whole and served again: not passed on. The rest follows the proxy's policy.
 */
const OWN_REQUEST_HEADERS = new Set(['x-grafana-org-id', 'x-grafana-cache', 'accept-encoding']);

/**
 * A client's resource call passed on as the proxy passes it (its rules already applied by the
 * query service: methods and paths, traversal), the answer relayed with the proxy's cleaned
 * headers.
 */
async function forwardResource(ctx: KindContext, request: ResourceRequest): Promise<ResourceResponse> {
  const forwarded: Record<string, string | string[] | undefined> = {};
  for (const name in request.headers) if (!OWN_REQUEST_HEADERS.has(name)) forwarded[name] = request.headers[name];
  const answer = await ctx.call({
    method: request.method, path: request.path, query: request.query || undefined, forwarded,
    body: request.body.length ? request.body : undefined,
  });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(responseHeaders(answer.headers))) {
    if (name === 'content-length' || name === 'content-encoding') continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const cache = request.headers['x-grafana-cache'];
  if (typeof cache === 'string' && cache !== '') {
    out['x-grafana-cache'] = 'y';
    out['cache-control'] = cache;
  }
  out['content-type'] ??= 'application/json';
  return { status: answer.status, headers: out, body: answer.body };
}
