import { seed } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow } from '../lib/types.ts';

const STREAMS = 1000;
const CHANGES = 10;
const RSS_LIMIT = 100 * 1024 * 1024;
const DELIVERY_LIMIT_MS = 1000;
const SUBSCRIPTION = JSON.stringify({ query: 'subscription { dataSourceChanged { kind databaseId dataSource { id name url version } } }' });

interface Stream {
  /** When each marker (a URL) was first seen on this stream. */
  seen: Map<string, number>;
  close(): void;
}

/** One subscription read raw, as a browser's fetch would; only what arrives is kept (times by marker). */
async function open(url: string, authorization: string, markers: () => string | null): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { authorization, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: SUBSCRIPTION,
    signal: abort.signal,
  });
  if (response.status !== 200 || !response.body) throw new Error(`subscription refused: ${response.status} ${await response.text()}`);
  const seen = new Map<string, number>();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const marker = markers();
      if (marker && value.includes(marker) && !seen.has(marker)) seen.set(marker, performance.now());
    }
  })().catch(() => undefined);
  return { seen, close: () => abort.abort() };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const at = (values: number[], q: number) => sorted(values)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/**
 * 1,000 `dataSourceChanged` subscriptions open on one instance (one token, one org): the server's
 * extra RSS for holding them, and how long a change made through REST takes to reach every one.
 */
export default async function subscriptions(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_subscriptions');
  const target = await ctx.startTarget({
    kind: 'app',
    connection,
    overrides: { graphql: { max_subscriptions: String(STREAMS * 2), max_subscriptions_per_principal: String(STREAMS * 2) } },
  });
  const streams: Stream[] = [];
  try {
    const { token, dataSourceId } = await seed(target);
    const put = (url: string) => fetch(`${target.url}/api/datasources/${dataSourceId}`, {
      method: 'PUT',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-live', type: 'prometheus', access: 'proxy', url }),
    }).then(async (res) => {
      if (!res.ok) throw new Error(`PUT: ${res.status} ${await res.text()}`);
    });
    // Warm the paths a subscription takes (authentication, execution, one change) before measuring.
    let marker: string | null = null;
    const warm = await open(target.url, token, () => marker);
    marker = 'http://warm.example';
    await put(marker);
    while (!warm.seen.has(marker)) await new Promise((r) => setTimeout(r, 10));
    warm.close();
    await new Promise((r) => setTimeout(r, 2000));
    const rssBefore = await target.rss();

    const opening = performance.now();
    for (let i = 0; i < STREAMS; i += 100) {
      streams.push(...(await Promise.all(Array.from({ length: Math.min(100, STREAMS - i) }, () => open(target.url, token, () => marker)))));
    }
    const openedMs = performance.now() - opening;
    ctx.log(`subscriptions: ${STREAMS} open in ${Math.round(openedMs)} ms`);
    await new Promise((r) => setTimeout(r, 3000));
    const rssOpen = await target.rss();

    const slowest: number[] = [];
    const medians: number[] = [];
    let peak = rssOpen;
    for (let change = 0; change < CHANGES; change++) {
      marker = `http://change-${change}.example`;
      const sent = performance.now();
      await put(marker);
      const deadline = sent + 10_000;
      while (streams.some((s) => !s.seen.has(marker!)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const delays = streams.map((s) => (s.seen.get(marker!) ?? Infinity) - sent);
      slowest.push(Math.max(...delays));
      medians.push(at(delays, 0.5));
      peak = Math.max(peak, await target.rss());
      ctx.log(`subscriptions: change ${change + 1}/${CHANGES} reached all in ${Math.round(Math.max(...delays))} ms`);
      await new Promise((r) => setTimeout(r, 500));
    }

    const extra = rssOpen - rssBefore;
    const worst = Math.max(...slowest);
    const scenario = 'GraphQL subscriptions (Server-Sent Events), one instance';
    return [
      {
        scenario,
        measurement: `${STREAMS} \`dataSourceChanged\` subscriptions open: extra server RSS`,
        value: extra,
        unit: 'MiB',
        target: { on: 'value', op: '<', bound: RSS_LIMIT },
        notes: `${fmt.bytes(extra / STREAMS)} each; opened by the runner with one token, 100 at a time, in ${Math.round(openedMs)} ms; RSS ${fmt.mib(rssBefore)} before, ${fmt.mib(rssOpen)} with them open after 3 s, ${fmt.mib(peak)} at most while changes flowed`,
      },
      {
        scenario,
        measurement: `a change through REST reaching all ${STREAMS}: slowest stream, worst of ${CHANGES} changes`,
        value: worst,
        unit: 'ms',
        target: { on: 'value', op: '<', bound: DELIVERY_LIMIT_MS, label: '< 1 s' },
        notes: `from sending the PUT to the last stream's event, changes 0.5 s apart; slowest stream ${fmt.ms(at(slowest, 0.5))} for the median change, median stream ${fmt.ms(at(medians, 0.5))}; per change: ${slowest.map((n) => Math.round(n)).join(', ')} ms`,
      },
    ];
  } finally {
    for (const stream of streams) stream.close();
    await target.close();
  }
}
