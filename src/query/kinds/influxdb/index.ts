import { ownMessage } from '../../answer-error.ts';
import type { DataResponse } from '../../frames/frame.ts';
import { failed, type DataQuery, type DataSourceInfo, type KindContext, type QueryKind, type UpstreamRequest } from '../kind.ts';
import { callFailed, framesOrLimit } from '../kind-results.ts';
import { encodeValues } from '../../go-text.ts';
import { drainSliced } from '../../slices.ts';
import { influxFramesSteps } from './frames.ts';
import { buildInfluxQL, parseInfluxQuery } from './influxql.ts';

/** InfluxDB 1.x over InfluxQL (`pkg/tsdb/influxdb/influxql`): one `/query` call per refId. */

/** influxql.go `createRequest`: `db`, `epoch=ms`, `rp` unless default, `q` in the query string (GET) or a form body (POST). */
export function influxRequest(ds: DataSourceInfo, rawQuery: string, policy: string): UpstreamRequest | { error: string } {
  const httpMode = typeof ds.jsonData.httpMode === 'string' && ds.jsonData.httpMode !== '' ? ds.jsonData.httpMode : 'GET';
  if (httpMode !== 'GET' && httpMode !== 'POST') return { error: "'httpMode' should be either 'GET' or 'POST'" };
  const dbName = typeof ds.jsonData.dbName === 'string' && ds.jsonData.dbName !== '' ? ds.jsonData.dbName : ds.database;
  const params: Record<string, string | undefined> = {
    db: dbName,
    epoch: 'ms',
    rp: policy !== '' && policy !== 'default' ? policy : undefined,
  };
  if (httpMode === 'GET') return { method: 'GET', path: 'query', query: encodeValues({ ...params, q: rawQuery }) };
  return {
    method: 'POST',
    path: 'query',
    query: encodeValues(params),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: encodeValues({ q: rawQuery }),
  };
}

async function runOne(ctx: KindContext, query: DataQuery): Promise<DataResponse> {
  let parsed;
  let rawQuery: string;
  try {
    parsed = parseInfluxQuery(query.refId, query.model, query.intervalMs);
    rawQuery = buildInfluxQL(parsed, query.range);
  } catch (error) {
    return failed(ownMessage(error), 'plugin', 400);
  }
  const request = influxRequest(ctx.dataSource, rawQuery, parsed.policy);
  if ('error' in request) return failed(request.error, 'plugin', 400);
  let answer;
  try {
    answer = await ctx.call(request);
  } catch (error) {
    return callFailed(error);
  }
  const result = await drainSliced(influxFramesSteps(answer.status, answer.body, parsed, rawQuery));
  if ('error' in result) {
    const status = answer.status < 200 || answer.status > 299 ? answer.status : 400;
    return failed(result.error, 'downstream', status);
  }
  return framesOrLimit(result.frames, ctx.maxPoints);
}

export const influxDbKind: QueryKind = {
  types: ['influxdb'],

  async query(ctx, queries) {
    const version = ctx.dataSource.jsonData.version;
    if (version === 'Flux' || version === 'SQL') {
      // Flux and SQL speak to InfluxDB 2.x/3.x; InfluxQL is what InfluxDB 1.x answers.
      const answer = failed(`InfluxDB ${version} queries are not supported; use InfluxQL`, 'plugin', 501);
      return new Map(queries.map((q) => [q.refId, answer]));
    }
    const answers = await Promise.all(queries.map((q) => runOne(ctx, q)));
    return new Map(queries.map((q, i) => [q.refId, answers[i]]));
  },
};
