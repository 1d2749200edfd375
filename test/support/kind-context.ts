import { request } from 'node:http';
import type { DataQuery, DataSourceInfo, KindContext, UpstreamResponse, UpstreamRequest } from '../../src/query/kinds/kind.ts';

/**
 * A KindContext whose `call` makes a real HTTP request to `baseUrl` (tests only: the server's
 * calls go through the upstream layer). A refused connection rejects as the upstream layer does,
 * with status 502.
 */
export function directContext(baseUrl: string, ds: Partial<DataSourceInfo> = {}, maxPoints = 1_000_000, maxSeries = 100_000): KindContext & { calls: UpstreamRequest[] } {
  const calls: UpstreamRequest[] = [];
  const base = new URL(baseUrl);
  const dataSource: DataSourceInfo = { id: 1, uid: 'ds', orgId: 1, name: 'ds', type: 'x', url: baseUrl, database: '', jsonData: {}, ...ds };
  return {
    dataSource,
    signal: new AbortController().signal,
    maxPoints,
    maxSeries,
    calls,
    call(call: UpstreamRequest): Promise<UpstreamResponse> {
      calls.push(call);
      const path = `${base.pathname.replace(/\/$/, '')}/${call.path}${call.query ? `?${call.query}` : ''}`;
      return new Promise((resolve, reject) => {
        const req = request({ host: base.hostname, port: base.port, method: call.method, path, headers: call.headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        });
        req.on('error', (error) => reject(Object.assign(new Error(`Post "${baseUrl}": ${error.message}`), { status: 502 })));
        req.end(call.body);
      });
    },
  };
}

/** A DataQuery as the envelope hands it over (defaults of the original: 1000 ms interval, 100 points). */
export function dataQuery(refId: string, model: Record<string, unknown>, range: { from: number; to: number }, over: Partial<DataQuery> = {}): DataQuery {
  return { refId, queryType: typeof model.queryType === 'string' ? model.queryType : '', intervalMs: 1000, maxDataPoints: 100, range, model: { refId, ...model }, ...over };
}
