import { describe, expect, it } from '@jest/globals';
import { Counter, Histogram, Registry } from 'prom-client';
import { TimedSeries } from '../src/metrics/timed-series.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

describe('TimedSeries', () => {
  it('exposes exactly what a prom-client Counter and Histogram would for the same observations', async () => {
    const reference = new Registry();
    const counter = new Counter({ name: 'calls_total', help: 'Calls.', labelNames: ['method', 'status'], registers: [reference] });
    const histogram = new Histogram({ name: 'call_seconds', help: 'Call time.', labelNames: ['method', 'status'], buckets: BUCKETS, registers: [reference] });
    const ours = new Registry();
    const series = new TimedSeries<'method' | 'status'>(ours, {
      counter: { name: 'calls_total', help: 'Calls.' },
      histogram: { name: 'call_seconds', help: 'Call time.' },
      buckets: BUCKETS,
    });
    // Values on bucket bounds, between them, under the first and past the last.
    const observations: Array<[string, string, number]> = [
      ['GET', '200', 0.001], ['GET', '200', 0.005], ['GET', '200', 0.07], ['GET', '200', 5],
      ['POST', '404', 100], ['POST', '404', 0.25], ['DELETE', '200', 0],
    ];
    for (const [method, status, seconds] of observations) {
      counter.inc({ method, status });
      histogram.observe({ method, status }, seconds);
      series.record(`${method} ${status}`, () => ({ method, status }), seconds);
    }
    const expected = await reference.metrics();
    expect(expected).toContain('call_seconds_bucket{le="+Inf",method="POST",status="404"} 2');
    expect(await ours.metrics()).toBe(expected);

    reference.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await reference.metrics());
  });

  it('builds the labels of a key once', () => {
    const series = new TimedSeries<'route'>(new Registry(), {
      counter: { name: 'a_total', help: 'a' },
      histogram: { name: 'a_seconds', help: 'a' },
      buckets: BUCKETS,
    });
    let built = 0;
    for (let i = 0; i < 5; i++) series.record('/x', () => (built++, { route: '/x' }), 0.01);
    expect(built).toBe(1);
  });
});
