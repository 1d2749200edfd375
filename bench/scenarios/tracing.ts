import { compareRounds, figures, seed } from '../lib/harness.ts';
import { startSpanReceiver } from '../lib/span-receiver.ts';
import type { BenchContext, BenchRow } from '../lib/types.ts';

/**
 * What tracing costs the REST read of the `reads` scenario: the same route on two app processes,
 * one with tracing off (the default) and one tracing every request (const sampler, 1), exporting
 * OTLP/HTTP to a receiver in the runner. The traced server's CPU per request includes building,
 * batching, serialising and sending its spans.
 */
export default async function tracing(ctx: BenchContext): Promise<BenchRow[]> {
  const receiver = await startSpanReceiver();
  const connection = await ctx.createDatabase('bench_tracing');
  const off = await ctx.startTarget({ kind: 'app', connection });
  const on = await ctx.startTarget({
    kind: 'app',
    connection,
    overrides: { 'tracing.opentelemetry.otlp': { address: receiver.address }, 'tracing.opentelemetry': { sampler_type: 'const', sampler_param: '1' } },
  });
  try {
    const { token, dataSourceId } = await seed(off);
    const path = `/api/datasources/${dataSourceId}`;
    const headers = { authorization: token };
    // The traced server must really export: one request's spans arrive within the batch delay (5 s).
    const first = await fetch(`${on.url}${path}`, { headers });
    if (first.status !== 200) throw new Error(`traced server answered ${first.status}`);
    const deadline = Date.now() + 10_000;
    while (receiver.counts().serverSpans === 0) {
      if (Date.now() > deadline) throw new Error('the traced server exported no span within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    ctx.log(`tracing: GET ${path}, tracing off and on (100% sampling, OTLP/HTTP to ${receiver.address})`);
    const before = receiver.counts();
    const [untraced, traced] = await ctx.compare([
      { name: 'REST, tracing off', target: off, load: { path, headers } },
      { name: 'REST, tracing on', target: on, load: { path, headers } },
    ]);
    // Spans still in the traced server's batch when the last round ended arrive within its delay.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    const after = receiver.counts();
    const requests = traced!.rounds.reduce((sum, round) => sum + round.requests, 0);
    const serverSpans = after.serverSpans - before.serverSpans;
    const spans = after.spans - before.spans;
    const scenario = 'Tracing: data source read with a token';
    const row = (measurement: string, m: typeof traced) => ({ scenario, measurement, value: figures(m!).requestsPerSecond, unit: 'req/s' as const, load: figures(m!) });
    return [
      { ...row('GET /api/datasources/:id (REST), tracing off', untraced) },
      {
        ...row('GET /api/datasources/:id (REST), tracing on, every request sampled', traced),
        comparisons: compareRounds(traced!, untraced!, 'tracing off'),
        // The rounds' requests plus the warm-up's: every request's trace should have arrived.
        notes: `${(spans / Math.max(serverSpans, 1)).toFixed(1)} spans per trace; ${serverSpans} traces received for ${requests} requests in the measured rounds (warm-up requests are traced too; fewer traces than requests would mean spans dropped); ${after.exports - before.exports} export calls`,
      },
    ];
  } finally {
    await Promise.all([off.close(), on.close()]);
    await receiver.close();
  }
}
