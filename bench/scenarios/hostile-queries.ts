import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchContext, BenchRow, Target } from '../lib/types.ts';

const ADMIN = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const VIEWER = `Basic ${Buffer.from('bench-viewer:viewer-pass-1').toString('base64')}`;
const FROM = '1700000000000';
const TO = '1700003600000';
/** The event loop's worst delay while any one hostile request runs, on the default settings. */
const WORST_DELAY_MS = 250;

/** A Prometheus instant answer of `n` one-point series (about 5 MB for 100,000), as Prometheus writes it. */
function manySeries(n: number): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`{"metric":{"__name__":"up","instance":"host-${i}:9100"},"value":[1700003600,"1"]}`);
  return `{"status":"success","data":{"resultType":"vector","result":[${parts.join(',')}]}}`;
}

/** A Loki streams answer of `n` lines over ten streams: every line its own, or all alike. */
function manyLines(n: number, alike: boolean): string {
  const result = Array.from({ length: 10 }, (_, s) => ({
    stream: { job: 'app', stream: String(s) },
    values: Array.from({ length: n / 10 }, (_, i) => [`${1_700_000_000_000 + i * 10 + s}000000`, alike ? 'level=info msg="request served"' : `level=info row=${i} stream=${s} msg="request served"`]),
  }));
  return JSON.stringify({ status: 'success', data: { resultType: 'streams', result } });
}

/** An InfluxDB 1.x answer of about `mib` MiB: ten series of rows `[epoch ms, value]`. */
function bigInflux(mib: number): string {
  const rowsPerSeries = Math.floor((mib * 2 ** 20) / 10 / 36);
  const series = Array.from({ length: 10 }, (_, s) => {
    const rows: string[] = [];
    for (let i = 0; i < rowsPerSeries; i++) rows.push(`[${1_700_000_000_000 + i * 1000},${(i % 9973) / 7}]`);
    return `{"name":"cpu","tags":{"host":"h${s}"},"columns":["time","mean"],"values":[${rows.join(',')}]}`;
  });
  return `{"results":[{"statement_id":0,"series":[${series.join(',')}]}]}`;
}

/** A Graphite `/render` answer of about `mib` MiB: ten series of `[value, epoch s]` points. */
function bigGraphite(mib: number): string {
  const pointsPerSeries = Math.floor((mib * 2 ** 20) / 10 / 33);
  const series = Array.from({ length: 10 }, (_, s) => {
    const points: string[] = [];
    for (let i = 0; i < pointsPerSeries; i++) points.push(`[${(i % 9973) / 7},${1_700_000_000 + i}]`);
    return `{"target":"a.b.${s}","tags":{"name":"a.b.${s}"},"datapoints":[${points.join(',')}]}`;
  });
  return `[${series.join(',')}]`;
}

interface Case {
  name: string;
  queries: (ds: Record<string, { uid: string }>) => unknown[];
  from?: string;
  /** Sent as the graph's `dataQuery` (numbers of every field selected) rather than to `POST /api/ds/query`. */
  graph?: boolean;
}

const DATA_QUERY = 'query Q($from: String!, $to: String!, $queries: [JSONObject!]!) { dataQuery(from: $from, to: $to, queries: $queries) { results { refId error frames { fields { numbers } } } } }';

const expr = { uid: '__expr__', type: '__expr__' };
const walk = (ds: { uid: string }, extra: Record<string, unknown>) => ({ refId: 'A', datasource: ds, scenarioId: 'random_walk', seed: 1, ...extra });

/** The hostile requests of the query API, and the large answers it must convert in slices. */
const CASES: Case[] = [
  { name: '60 refIds x random_walk of 500 series at 1 ms (refused)', queries: ({ td }) => Array.from({ length: 60 }, (_, i) => walk(td!, { refId: `Q${i}`, seriesCount: 500, intervalMs: 1 })) },
  { name: 'random_walk of 1,000,000 series, from == to (refused)', from: TO, queries: ({ td }) => [walk(td!, { seriesCount: 1_000_000 })] },
  { name: '10,000 default refIds (refused)', queries: ({ td }) => Array.from({ length: 10_000 }, (_, i) => ({ refId: `R${i}`, datasource: td })) },
  { name: '1,000 default refIds (3,600 points each, built)', queries: ({ td }) => Array.from({ length: 1000 }, (_, i) => ({ refId: `R${i}`, datasource: td, seed: i })) },
  { name: '10,000,000 points, the largest request the defaults take', queries: ({ td }) => ['A', 'B', 'C'].map((refId) => walk(td!, { refId, seriesCount: 250, intervalMs: 360 })) },
  {
    name: '40 math expressions over 1,000,000 points',
    queries: ({ td }) => [walk(td!, { seriesCount: 100, intervalMs: 360, hide: true }),
      ...Array.from({ length: 40 }, (_, i) => ({ refId: `M${i}`, datasource: expr, type: 'math', expression: `$A * ${i + 1}` }))],
  },
  {
    name: 'resample of 40 series to 900,000 points each (refused)',
    queries: ({ td }) => [walk(td!, { seriesCount: 40, intervalMs: 60_000, hide: true }), { refId: 'R', datasource: expr, type: 'resample', expression: '$A', window: '4ms', downsampler: 'mean', upsampler: 'pad' }],
  },
  {
    name: 'math join of 1,000 by 1,000 series',
    queries: ({ td }) => [walk(td!, { seriesCount: 1000, labels: 'x=1', intervalMs: 60_000, hide: true }), walk(td!, { refId: 'B', seriesCount: 1000, labels: 'x=1,b=$seriesIndex', intervalMs: 60_000, hide: true }),
      { refId: 'J', datasource: expr, type: 'math', expression: '$A + $B' }],
  },
  { name: 'predictable_csv_wave of 10,000 waves (refused)', queries: ({ td }) => [{ refId: 'A', datasource: td, scenarioId: 'predictable_csv_wave', csvWave: Array.from({ length: 10_000 }, () => ({ timeStep: 1, valuesCSV: '1,2' })) }] },
  { name: 'GraphQL dataQuery of 10,000,000 points (past [query] max_points_per_graph_request)', graph: true, queries: ({ td }) => ['A', 'B', 'C'].map((refId) => walk(td!, { refId, seriesCount: 250, intervalMs: 360 })) },
  { name: 'GraphQL dataQuery of 100,000 points (all of [query] max_points_per_graph_request)', graph: true, queries: ({ td }) => ['A', 'B', 'C', 'D', 'E'].map((refId) => walk(td!, { refId, seriesCount: 1, intervalMs: 360 })) },
  { name: 'Prometheus answer of 100,000 one-point series (5 MB)', queries: ({ prom }) => [{ refId: 'A', datasource: prom, expr: 'up', instant: true }] },
  { name: 'Loki answer of 40,000 log lines, each its own', queries: ({ loki }) => [{ refId: 'A', datasource: loki, expr: '{job="app"}', queryType: 'range', maxLines: 40_000 }] },
  { name: 'Loki answer of 40,000 identical log lines', queries: ({ lokiAlike }) => [{ refId: 'A', datasource: lokiAlike, expr: '{job="app"}', queryType: 'range', maxLines: 40_000 }] },
  { name: 'InfluxDB answer of 54 MiB (1,750,000 rows)', queries: ({ influx }) => [{ refId: 'A', datasource: influx, query: 'SELECT mean("v") FROM "cpu"', rawQuery: true, resultFormat: 'time_series' }] },
  { name: 'Graphite answer of 54 MiB (1,900,000 points)', queries: ({ graphite }) => [{ refId: 'A', datasource: graphite, target: 'a.b.*' }] },
];

/** An upstream answering every call with `body`. */
async function canned(body: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function post(target: Target, path: string, body: unknown, auth = ADMIN): Promise<{ status: number; json: () => Promise<unknown> }> {
  const res = await fetch(`${target.url}${path}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: () => res.json() };
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

/**
 * Point 2 of the hostile-query issue: each hostile request of the query API (and the large answers
 * it converts) sent once to the app, as a Viewer, while `/api/health` is asked every 10 ms from
 * here; the row is the worst delay of the server's event loop over the request
 * (`perf_hooks.monitorEventLoopDelay` in the server process), with `/api/health`'s 99th-percentile
 * and worst latency in the notes. Goal: under 250 ms for each.
 */
export default async function hostileQueries(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_hostile_queries');
  const target = await ctx.startTarget({ kind: 'app', connection });
  const upstreams = await Promise.all([canned(manySeries(100_000)), canned(manyLines(40_000, false)), canned(manyLines(40_000, true)), canned(bigInflux(60)), canned(bigGraphite(60))]);
  const rows: BenchRow[] = [];
  try {
    const create = async (name: string, type: string, url = '', jsonData: Record<string, unknown> = {}) => {
      const res = await post(target, '/api/datasources', { name, type, access: 'proxy', url, jsonData });
      if (res.status !== 200) throw new Error(`creating data source ${name}: ${res.status}`);
      return { uid: ((await res.json()) as { datasource: { uid: string } }).datasource.uid };
    };
    const ds = {
      td: await create('bench-testdata', 'grafana-testdata-datasource'),
      prom: await create('bench-prometheus', 'prometheus', upstreams[0].url),
      loki: await create('bench-loki', 'loki', upstreams[1].url),
      lokiAlike: await create('bench-loki-alike', 'loki', upstreams[2].url),
      influx: await create('bench-influxdb', 'influxdb', upstreams[3].url, { dbName: 'bench' }),
      graphite: await create('bench-graphite', 'graphite', upstreams[4].url),
    };
    const user = await post(target, '/api/admin/users', { login: 'bench-viewer', password: 'viewer-pass-1' });
    if (user.status !== 200) throw new Error(`creating the viewer: ${user.status}`);
    // The graph's document compiled once, as any is on its first use: the cases measure the answers.
    const warm = await post(target, '/graphql', { query: DATA_QUERY, variables: { from: FROM, to: TO, queries: [walk(ds.td, {})] } }, VIEWER);
    if (warm.status !== 200) throw new Error(`the graph's dataQuery: ${warm.status}`);

    for (const c of CASES) {
      await target.resetLoopDelay!();
      const latencies: number[] = [];
      let done = false;
      const probing = (async () => {
        while (!done) {
          const started = performance.now();
          const res = await fetch(`${target.url}/api/health`);
          await res.arrayBuffer();
          latencies.push(performance.now() - started);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      const started = performance.now();
      let status = 0;
      let bytes = 0;
      try {
        const variables = { from: c.from ?? FROM, to: TO, queries: c.queries(ds) };
        const res = await fetch(`${target.url}${c.graph ? '/graphql' : '/api/ds/query'}`, {
          method: 'POST', headers: { authorization: VIEWER, 'content-type': 'application/json' },
          body: JSON.stringify(c.graph ? { query: DATA_QUERY, variables } : variables),
        });
        status = res.status;
        // Read and dropped: parsing it here would take this process's loop, the probes'.
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
      } finally {
        done = true;
        await probing;
      }
      const seconds = (performance.now() - started) / 1000;
      const loop = await target.loopDelay!();
      const healthP99 = percentile(latencies, 0.99);
      ctx.log(`hostile-queries: ${c.name}: ${status}, ${(bytes / 2 ** 20).toFixed(1)} MiB in ${seconds.toFixed(1)} s, loop worst ${loop.maxMs.toFixed(0)} ms`);
      rows.push({
        scenario: 'Hostile queries: the event loop while each runs',
        measurement: `${c.name}: worst event-loop delay`,
        value: loop.maxMs,
        unit: 'ms',
        target: { on: 'value', op: '<', bound: WORST_DELAY_MS },
        notes: `answer ${status}, ${(bytes / 2 ** 20).toFixed(1)} MiB in ${seconds.toFixed(1)} s; loop p99 ${loop.p99Ms.toFixed(0)} ms; /api/health p99 ${healthP99.toFixed(0)} ms, worst ${Math.max(0, ...latencies).toFixed(0)} ms over ${latencies.length} probes`,
      });
    }
    return rows;
  } finally {
    for (const { server } of upstreams) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await target.close();
  }
}
