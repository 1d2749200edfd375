import { readFileSync } from 'node:fs';
import { startUpstream, type Upstream } from './upstream.ts';

/**
 * A stand-in for Loki (none is packaged here): answers Loki's HTTP API paths with the recorded
 * answers in test/fixtures/loki, and Loki's own 400 for a query it cannot parse.
 */
export function fixture(name: string): Buffer {
  return readFileSync(new URL(`../fixtures/loki/${name}`, import.meta.url));
}

/**
 * `{generated="<tag>", lines="<n>"}`: n lines over three streams, each line naming the tag and its
 * row, written as Loki writes a streams answer (for many large answers at once).
 */
function generatedStreams(query: string): string {
  const tag = /generated="([^"]*)"/.exec(query)?.[1] ?? '';
  const lines = Number(/lines="(\d+)"/.exec(query)?.[1] ?? '10');
  const result = [0, 1, 2].map((s) => ({
    stream: { generated: tag, stream: String(s) },
    values: Array.from({ length: Math.ceil((lines - s) / 3) }, (_, i) => {
      const row = i * 3 + s;
      return [`${1700000000000 + row}000${String(row % 1000).padStart(3, '0')}`, `tag=${tag} row=${row} msg="served <ok>" ${'x'.repeat(row % 50)}`];
    }),
  }));
  return JSON.stringify({ status: 'success', data: { resultType: 'streams', result } });
}

export function startLokiStandIn(): Promise<Upstream> {
  return startUpstream((req, res) => {
    const url = new URL(req.url ?? '/', 'http://loki');
    const query = url.searchParams.get('query') ?? '';
    const send = (status: number, body: Buffer | string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    req.resume();
    switch (url.pathname) {
      case '/loki/api/v1/query_range':
        if (query.startsWith('bad')) return send(400, fixture('parse-error.txt'), 'text/plain; charset=utf-8');
        if (query.includes('too_many')) return send(400, '{"message":"max entries limit per query exceeded, limit > max_entries_limit (5001 > 5000)"}');
        if (query.includes('crash')) return send(500, 'internal error: boom', 'text/plain');
        if (query.includes('generated=')) return send(200, generatedStreams(query));
        return send(200, fixture(query.startsWith('{') ? (query.includes('nothing') ? 'empty-streams.json' : 'streams.json') : 'matrix.json'));
      case '/loki/api/v1/query':
        return send(200, fixture('vector.json'));
      case '/loki/api/v1/labels':
        return send(200, fixture('labels.json'));
      case '/loki/api/v1/label/job/values':
        return send(200, fixture('label-job-values.json'));
      case '/loki/api/v1/series':
        if (url.search.includes('crash')) return send(500, 'internal error: boom', 'text/plain');
        return send(200, fixture('series.json'));
      case '/loki/api/v1/index/stats':
        if (!query) return send(400, '{"message":"query is required"}');
        return send(200, '{"streams":2,"chunks":2,"entries":5,"bytes":2433}');
      default:
        return send(404, '404 page not found\n', 'text/plain');
    }
  });
}
