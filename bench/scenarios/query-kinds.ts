import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { figures } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow } from '../lib/types.ts';
import { parseAndSerializeMicros } from './query.ts';

const ADMIN = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const LINES = 5000;
const SERIES = 100;
const POINTS = 1000;
const START_MS = 1_700_000_000_000;

/** A Loki streams answer of `LINES` log lines over ten streams, as Loki writes it. */
function lokiBody(): string {
  const result = Array.from({ length: 10 }, (_, s) => ({
    stream: { job: 'app', instance: `10.0.0.${s}:3100`, level: s % 3 === 0 ? 'error' : 'info' },
    values: Array.from({ length: LINES / 10 }, (_, i) => [
      `${START_MS + i * 1000 + s}${String(i * 7919 % 1_000_000).padStart(6, '0')}`,
      `ts=${i} level=info caller=handler.go:${100 + s} msg="request served" path=/api/v1/items/${i} status=200 duration=${(i % 97) / 10}ms`,
    ]),
  }));
  return JSON.stringify({ status: 'success', data: { resultType: 'streams', result } });
}

/** An InfluxDB 1.x answer of `SERIES` series of `POINTS` points (epoch=ms), as InfluxDB writes it. */
function influxBody(): string {
  const series = Array.from({ length: SERIES }, (_, s) => ({
    name: 'cpu',
    tags: { host: `host-${s}`, dc: `dc-${s % 4}` },
    columns: ['time', 'mean'],
    values: Array.from({ length: POINTS }, (_, i) => [START_MS + i * 15_000, Math.round(Math.random() * 1e6) / 100]),
  }));
  return JSON.stringify({ results: [{ statement_id: 0, series }] });
}

interface Case {
  name: string;
  type: string;
  body: string;
  jsonData?: Record<string, unknown>;
  query: Record<string, unknown>;
}

/**
 * Point 7 of the Loki/InfluxDB/Graphite issue: `POST /api/ds/query` on a Loki log query answering
 * 5,000 lines and on an InfluxDB query answering 100 series of 1,000 points (canned upstreams in
 * this process), server CPU per request against parsing and re-serializing the same upstream JSON
 * in-process (goal: at most 1.5x, as the Prometheus query scenario).
 */
export default async function queryKinds(ctx: BenchContext): Promise<BenchRow[]> {
  const cases: Case[] = [
    { name: `Loki log query, ${LINES} lines`, type: 'loki', body: lokiBody(), query: { expr: '{job="app"}', queryType: 'range', maxLines: LINES } },
    {
      name: `InfluxDB, ${SERIES} series x ${POINTS} points`, type: 'influxdb', body: influxBody(), jsonData: { dbName: 'bench' },
      query: { rawQuery: true, query: 'SELECT mean("value") FROM "cpu" WHERE $timeFilter GROUP BY time($__interval), "host", "dc"', resultFormat: 'time_series' },
    },
  ];
  const connection = await ctx.createDatabase('bench_query_kinds');
  const target = await ctx.startTarget({ kind: 'app', connection, overrides: { dataproxy: { response_limit: '0' } } });
  const rows: BenchRow[] = [];
  try {
    for (const c of cases) {
      const upstream = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(c.body) });
          res.end(c.body);
        });
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      try {
        const port = (upstream.address() as AddressInfo).port;
        const created = await fetch(`${target.url}/api/datasources`, {
          method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `bench-${c.type}`, type: c.type, access: 'proxy', url: `http://127.0.0.1:${port}`, jsonData: c.jsonData ?? {} }),
        });
        const uid = ((await created.json()) as { datasource: { uid: string } }).datasource.uid;
        const request = JSON.stringify({
          from: String(START_MS), to: String(START_MS + POINTS * 15_000),
          queries: [{ refId: 'A', datasource: { type: c.type, uid }, intervalMs: 15000, maxDataPoints: 1000, ...c.query }],
        });
        const headers = { authorization: ADMIN, 'content-type': 'application/json' };
        const probe = await fetch(`${target.url}/api/ds/query`, { method: 'POST', headers, body: request });
        const responseBytes = (await probe.arrayBuffer()).byteLength;
        if (probe.status !== 200) throw new Error(`POST /api/ds/query (${c.type}): ${probe.status}`);
        ctx.log(`query-kinds: ${c.name} (${fmt.mib(responseBytes)} answered)`);
        const [measured] = await ctx.compare([{ name: `ds/query ${c.type}`, target, load: { method: 'POST', path: '/api/ds/query', headers, body: request, connections: 1 } }]);
        const load = figures(measured!);
        const floor = parseAndSerializeMicros(c.body);
        const cpu = load.cpuMicrosPerRequest ?? NaN;
        const scenario = `Query: ${c.name}`;
        rows.push(
          { scenario, measurement: 'POST /api/ds/query, server CPU per request', value: cpu, unit: 'µs', load, notes: `${fmt.mib(responseBytes)} per answer` },
          { scenario, measurement: 'server CPU / in-process parse + re-serialize', value: cpu / floor, unit: 'count', target: { on: 'value', op: '<=', bound: 1.5 }, notes: `parse + stringify of the upstream body: ${Math.round(floor)} µs` },
        );
      } finally {
        upstream.closeAllConnections();
        await new Promise<void>((resolve) => upstream.close(() => resolve()));
      }
    }
    return rows;
  } finally {
    await target.close();
  }
}
