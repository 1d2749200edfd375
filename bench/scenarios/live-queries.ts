import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seed } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow, Target } from '../lib/types.ts';

/** A smaller run to check the scenario works (not for RESULTS.md): BENCH_LIVE_STREAMS=30 BENCH_LIVE_TICKS=2. */
const STREAMS = Number(process.env.BENCH_LIVE_STREAMS) || 1000;
const QUERIES = 10;
const REFRESH_S = 5;
const TICKS = Number(process.env.BENCH_LIVE_TICKS) || 6;
/** The instances the subscriptions are spread over, one variant each: alone, and three on one database. */
const INSTANCES = [1, 3];
const DELIVERY_LIMIT_MS = 250;
const MEMORY_LIMIT = 40 * 1024;
const SUBSCRIPTION = `subscription($queries: [JSONObject!]!) {
  liveQuery(queries: $queries, from: "now-1h", to: "now", refresh: "${REFRESH_S}s") {
    refreshedAt viewers results { refId kind status error frames { length fields { name values } } appends { frame drop values } }
  }
}`;

/** The refresh tick (epoch ms, ticks are aligned on the epoch) that a moment falls in. */
const tickOf = (epochMs: number) => Math.floor(epochMs / (REFRESH_S * 1000)) * REFRESH_S * 1000;

/**
 * A Prometheus query API on loopback in this process: answers query_range with one series of a
 * point per step, counts every call by the tick it arrives in (not by the range's end, which the
 * step alignment moves), and notes when each answer was written, so delivery is timed from the
 * upstream's answer.
 */
async function startUpstream() {
  const answered = new Map<string, number>();
  const calls = new Map<number, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const expr = url.searchParams.get('query') ?? '';
    const start = Number(url.searchParams.get('start'));
    const end = Number(url.searchParams.get('end'));
    const step = Number(url.searchParams.get('step')) || REFRESH_S;
    const tick = tickOf(Date.now());
    calls.set(tick, (calls.get(tick) ?? 0) + 1);
    const values: Array<[number, string]> = [];
    for (let t = Math.ceil(start / step) * step; t <= end; t += step) values.push([t, String((t / step) % 100)]);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric: { __name__: expr, job: 'bench' }, values }] } }), () => {
      answered.set(`${expr}@${tick}`, performance.now());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answered,
    calls,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

interface Stream {
  expr: string;
  /** When each tick's event (by refreshedAt) arrived. */
  arrived: Map<number, number>;
  close(): void;
}

/**
 * One subscription, read off its socket with node:http: each event is stamped when its last bytes
 * are read. The thousand viewers share this one process (and the servers' two cores), where real
 * viewers each have their own machine, so they are read as cheaply as can be: read through fetch's
 * web streams and a text decoder each, they cost this process over half the CPU per tick of all
 * the servers' deliveries together, and that queueing was timed as the servers' delay.
 */
function open(url: string, authorization: string, expr: string, uid: string): Promise<Stream> {
  const queries = [{ refId: 'A', datasource: { type: 'prometheus', uid }, expr, range: true, intervalMs: REFRESH_S * 1000 }];
  const body = JSON.stringify({ query: SUBSCRIPTION, variables: { queries } });
  const arrived = new Map<number, number>();
  return new Promise((resolve, reject) => {
    const req = request(`${url}/graphql`, {
      method: 'POST',
      agent: false,
      headers: { authorization, accept: 'text/event-stream', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => reject(new Error(`subscription refused: ${res.statusCode} ${text}`)));
        return;
      }
      // Bytes as they are: the markers are ASCII, so nothing needs decoding.
      res.setEncoding('latin1');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const at = /"refreshedAt":(\d+)/.exec(buffer.slice(0, boundary));
          buffer = buffer.slice(boundary + 2);
          if (at) arrived.set(Number(at[1]), performance.now());
        }
      });
      res.on('error', () => undefined);
      resolve({ expr, arrived, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * 1,000 `liveQuery` subscriptions over 10 distinct queries at a 5 s refresh, on one instance and
 * spread over three instances on one database (each subscription on the next instance in turn),
 * against an upstream that counts its calls: calls per tick (10 expected, whatever the number of
 * viewers and instances), the slowest subscriber's delay from the upstream's answer, server
 * memory per subscription (all instances' together) and server CPU per tick.
 */
export default async function liveQueries(ctx: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const instances of INSTANCES) rows.push(...(await measure(ctx, instances)));
  return rows;
}

const sum = async (targets: Target[], read: (t: Target) => Promise<number> | undefined) => (await Promise.all(targets.map((t) => read(t) ?? 0))).reduce((a, b) => a + b, 0);

async function measure(ctx: BenchContext, instances: number): Promise<BenchRow[]> {
  const upstream = await startUpstream();
  const connection = await ctx.createDatabase(`bench_live_queries_${instances}`);
  const targets: Target[] = [];
  const streams: Stream[] = [];
  try {
    // One after another: the first migrates the new database.
    for (let i = 0; i < instances; i++) {
      targets.push(await ctx.startTarget({
        kind: 'app',
        connection,
        overrides: { graphql: { max_subscriptions: String(STREAMS * 2), max_subscriptions_per_principal: String(STREAMS * 2) } },
      }));
    }
    const target = targets[0]!;
    const { token } = await seed(target);
    const created = await fetch(`${target.url}/api/datasources`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-live-prom', type: 'prometheus', access: 'proxy', url: upstream.url, jsonData: { httpMethod: 'GET', timeInterval: `${REFRESH_S}s` } }),
    });
    if (!created.ok) throw new Error(`data source: ${created.status} ${await created.text()}`);
    const uid = ((await created.json()) as { datasource: { uid: string } }).datasource.uid;
    // Warm every instance's code through one tick (its first answer, then a tick's: fetched, or
    // received from the instance that fetched it), as the measured ticks find it.
    const warm = await Promise.all(targets.map((instance) => open(instance.url, token, 'warm', uid)));
    while (warm.some((w) => w.arrived.size < 2)) await sleep(10);
    for (const w of warm) w.close();
    await sleep(2000);
    const rssBefore = await sum(targets, (t) => t.rss());
    const retainedBefore = await sum(targets, (t) => t.retained?.() ?? t.rss());
    const reducedBefore = await sum(targets, (t) => t.reduced?.() ?? t.retained?.() ?? t.rss());

    for (let i = 0; i < STREAMS; i += 100) {
      streams.push(...(await Promise.all(Array.from({ length: Math.min(100, STREAMS - i) }, (_, j) => open(targets[(i + j) % instances]!.url, token, `q${(i + j) % QUERIES}`, uid)))));
    }
    // Measure whole ticks from the next one on, all streams open and their first answers in (an
    // open stream has its headers, not yet its first event: without this wait the first measured
    // tick could meet the instances still writing first answers).
    const opened = Date.now();
    while (streams.some((s) => s.arrived.size === 0)) {
      if (Date.now() - opened > 60_000) throw new Error(`${streams.filter((s) => s.arrived.size === 0).length} subscriptions had no first event after a minute`);
      await sleep(10);
    }
    const firstTick = (Math.floor(Date.now() / (REFRESH_S * 1000)) + 1) * REFRESH_S * 1000;
    await sleep(firstTick - Date.now() + 100);
    const cpuBefore = await sum(targets, (t) => t.cpu?.());
    const viewersBefore = process.cpuUsage();
    await sleep(TICKS * REFRESH_S * 1000);
    const cpuAfter = await sum(targets, (t) => t.cpu?.());
    const viewersCpu = process.cpuUsage(viewersBefore);
    await sleep(1000);
    const rssOpen = await sum(targets, (t) => t.rss());
    const retainedOpen = await sum(targets, (t) => t.retained?.() ?? t.rss());
    const reducedOpen = await sum(targets, (t) => t.reduced?.() ?? t.retained?.() ?? t.rss());

    const ticks = Array.from({ length: TICKS }, (_, i) => firstTick + i * REFRESH_S * 1000);
    const perTick = ticks.map((t) => upstream.calls.get(t) ?? 0);
    const slowest = ticks.map((t) => Math.max(...streams.map((s) => {
      const answer = upstream.answered.get(`${s.expr}@${t}`);
      const got = s.arrived.get(t);
      return answer === undefined || got === undefined ? Infinity : got - answer;
    })));
    const perStream = (reducedOpen - reducedBefore) / STREAMS;
    const where = instances === 1 ? '' : `, spread over ${instances} instances on one database`;
    const scenario = `Live queries: ${STREAMS} subscriptions over ${QUERIES} distinct queries, ${REFRESH_S} s refresh${where}`;
    ctx.log(`live queries (${instances} instance${instances === 1 ? '' : 's'}): calls per tick ${perTick.join(', ')}; slowest delivery ${slowest.map((n) => Math.round(n)).join(', ')} ms`);
    return [
      {
        scenario,
        measurement: 'upstream calls per tick, counted at the upstream (most of any tick)',
        value: Math.max(...perTick),
        unit: 'count',
        target: { on: 'value', op: '<=', bound: QUERIES, label: `exactly ${QUERIES}` },
        notes: `per tick: ${perTick.join(', ')} (fewest ${Math.min(...perTick)})${instances === 1 ? '' : `, from every instance together`}`,
      },
      {
        scenario,
        measurement: 'slowest subscriber, from the upstream\'s answer to its event (worst tick)',
        value: Math.max(...slowest),
        unit: 'ms',
        target: { on: 'value', op: '<', bound: DELIVERY_LIMIT_MS, label: '< 250 ms' },
        notes: `per tick: ${slowest.map((n) => Math.round(n)).join(', ')} ms`,
      },
      {
        scenario,
        measurement: `server memory per subscription (extra RSS after a last-resort collection / subscriptions${instances === 1 ? '' : ', every instance\'s together'})`,
        value: perStream / 1024,
        unit: 'KiB',
        target: { on: 'value', op: '<=', bound: MEMORY_LIMIT / 1024, label: '≤ 40 KiB' },
        notes: `RSS before and with the streams open after ${TICKS} ticks: ${fmt.mib(reducedBefore)} and ${fmt.mib(reducedOpen)} after a last-resort collection; `
          + `${fmt.mib(retainedBefore)} and ${fmt.mib(retainedOpen)} after a regular one (${fmt.bytes((retainedOpen - retainedBefore) / STREAMS)} each, counting the freed pages V8 keeps pooled); `
          + `${fmt.mib(rssBefore)} and ${fmt.mib(rssOpen)} without one`,
      },
      {
        scenario,
        measurement: 'server CPU per tick',
        value: (cpuAfter - cpuBefore) / TICKS / 1000,
        unit: 'ms',
        notes: `over ${TICKS} ticks: ${QUERIES} runs, ${STREAMS} events each tick${instances === 1 ? '' : `, every instance's CPU together (one runs each query, the others read its answer)`}; `
          + `the viewers' reading and the upstream, in the bench's process: ${Math.round((viewersCpu.user + viewersCpu.system) / 1000 / TICKS)} ms per tick`,
      },
    ];
  } finally {
    for (const stream of streams) stream.close();
    for (const target of targets.reverse()) await target.close();
    await upstream.close();
  }
}
