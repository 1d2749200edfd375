import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { figures, processStatusBytes } from '../lib/harness.ts';
import { fmt, medianOf } from '../lib/report.ts';
import type { BenchContext, BenchRow, Target } from '../lib/types.ts';

const ADMIN = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const SERIES = 100;
const POINTS = 1000;
/** Answers whose memory is measured one at a time. */
const ANSWERS = 9;

/** A Prometheus range answer of `SERIES` series of `POINTS` points, as Prometheus writes it. */
function upstreamBody(): string {
  const start = 1_700_000_000;
  const result = Array.from({ length: SERIES }, (_, s) => ({
    metric: { __name__: 'http_requests_total', instance: `10.0.0.${s}:9100`, job: 'node', code: String(200 + (s % 5)) },
    values: Array.from({ length: POINTS }, (_, i) => [start + i * 15, String(Math.round(Math.random() * 1e6) / 100)]),
  }));
  return JSON.stringify({ status: 'success', data: { resultType: 'matrix', result } });
}

/** CPU µs of this process for one parse and re-serialization of `body`: the practical floor of any conversion. */
export function parseAndSerializeMicros(body: string): number {
  for (let i = 0; i < 5; i++) JSON.stringify(JSON.parse(body)); // warm-up
  const n = 30;
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) JSON.stringify(JSON.parse(body));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

/**
 * The server's memory while it answers one request, for each of `answers` requests sent one at a
 * time: the peak of its RSS over the answer (the kernel's high-water mark, reset just before it)
 * less its RSS just before, after a last-resort collection. That collection returns the garbage
 * of earlier answers and the freed pages V8 pools; what the process still holds from them (the
 * allocator's free lists, reused buffers, compiled code) is reported apart, as RSS before each
 * answer less RSS before the first.
 */
async function peakGrowthPerAnswer(target: Target, send: () => Promise<void>, answers: number): Promise<{ peaks: number[]; kept: number[] }> {
  const first = await target.reduced!();
  const peaks: number[] = [];
  const kept: number[] = [];
  for (let i = 0; i < answers; i++) {
    const before = await target.reduced!();
    writeFileSync(`/proc/${target.pid}/clear_refs`, '5');
    await send();
    peaks.push(processStatusBytes(target.pid, 'VmHWM') - before);
    kept.push(before - first);
  }
  return { peaks, kept };
}

/**
 * Point 10 of the query issue: `POST /api/ds/query` on a Prometheus range query answering 100
 * series of 1,000 points (from a canned upstream in this process), its server CPU per request
 * against parsing and re-serializing the same upstream JSON here (goal: at most 1.5x), CPU per
 * returned point, and the server's memory while answering against the response's size (goal:
 * below 4x).
 */
export default async function query(ctx: BenchContext): Promise<BenchRow[]> {
  const body = upstreamBody();
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const connection = await ctx.createDatabase('bench_query');
  const target = await ctx.startTarget({ kind: 'app', connection, overrides: { dataproxy: { response_limit: '0' } } });
  try {
    const port = (upstream.address() as AddressInfo).port;
    const created = await fetch(`${target.url}/api/datasources`, {
      method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-prom', type: 'prometheus', access: 'proxy', url: `http://127.0.0.1:${port}` }),
    });
    const uid = ((await created.json()) as { datasource: { uid: string } }).datasource.uid;
    const request = JSON.stringify({
      from: '1700000000000', to: '1700015000000',
      queries: [{ refId: 'A', datasource: { type: 'prometheus', uid }, expr: 'rate(http_requests_total[5m])', range: true, intervalMs: 15000, maxDataPoints: 1000 }],
    });
    let responseBytes = 0;
    const answer = async () => {
      const res = await fetch(`${target.url}/api/ds/query`, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: request });
      responseBytes = (await res.arrayBuffer()).byteLength;
      if (res.status !== 200) throw new Error(`POST /api/ds/query: ${res.status}`);
    };
    const { peaks, kept } = await peakGrowthPerAnswer(target, answer, ANSWERS);
    const peak = medianOf(peaks);

    ctx.log(`query: POST /api/ds/query, ${SERIES} series x ${POINTS} points (${fmt.mib(responseBytes)} answered)`);
    const idleRss = await target.rss();
    const [measured] = await ctx.compare([{ name: 'ds/query', target, load: { method: 'POST', path: '/api/ds/query', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: request, connections: 1 } }]);
    const load = figures(measured!);
    const busyRss = await target.rss();
    const retainedRss = (await target.retained?.()) ?? busyRss;
    const floor = parseAndSerializeMicros(body);
    const cpu = load.cpuMicrosPerRequest ?? NaN;
    const scenario = 'Query: Prometheus range, 100 series x 1,000 points';
    return [
      { scenario, measurement: 'POST /api/ds/query, server CPU per request', value: cpu, unit: 'µs', load, notes: `${fmt.mib(responseBytes)} per answer` },
      { scenario, measurement: 'server CPU / in-process parse + re-serialize', value: cpu / floor, unit: 'count', target: { on: 'value', op: '<=', bound: 1.5 }, notes: `parse + stringify of the upstream body: ${Math.round(floor)} µs` },
      { scenario, measurement: 'server CPU per returned point', value: (cpu * 1000) / (SERIES * POINTS), unit: 'count', notes: 'nanoseconds' },
      {
        scenario, measurement: 'server memory while answering one request (peak RSS growth) / response size', value: peak / responseBytes, unit: 'count', target: { on: 'value', op: '<', bound: 4 },
        notes: `median of ${ANSWERS} answers one at a time (${peaks.map((p) => (p / responseBytes).toFixed(1)).join(', ')}), ${fmt.bytes(peak)} over ${fmt.mib(responseBytes)} answered; `
          + `kept from earlier answers before each, after a last-resort collection: ${kept.map((k) => (k / responseBytes).toFixed(1)).join(', ')}`,
      },
      {
        scenario, measurement: 'server RSS growth over the load / response size', value: Math.max(0, busyRss - idleRss) / responseBytes, unit: 'count',
        notes: `RSS ${fmt.mib(idleRss)} before, ${fmt.mib(busyRss)} after the load, ${fmt.mib(retainedRss)} once garbage is collected: V8 collects a busy heap only when it has grown, and keeps freed pages`,
      },
    ];
  } finally {
    await target.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  }
}
