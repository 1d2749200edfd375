import { describe, expect, it } from '@jest/globals';
import { Counter, Histogram, Registry } from 'prom-client';
import { TimedSeries } from '../../src/metrics/timed-series.ts';

const BOUNDS = [0.005, 0.01, 0.1, 1, 10];
const COUNTER = { name: 'demo_requests_total', help: 'Requests, by method, route and status.' };
const HISTOGRAM = { name: 'demo_request_duration_seconds', help: 'Time per request, by method, route and status.' };

/** The same events into TimedSeries and into prom-client's own counter and histogram. */
function bothWays(events: [string, string, number, number][]) {
  const ours = new Registry();
  const series = new TimedSeries(ours, COUNTER, HISTOGRAM, ['method', 'route', 'status'], BOUNDS);
  const theirs = new Registry();
  const labelNames = ['method', 'route', 'status'];
  const counter = new Counter({ ...COUNTER, labelNames, registers: [theirs] });
  const histogram = new Histogram({ ...HISTOGRAM, labelNames, buckets: BOUNDS, registers: [theirs] });
  for (const [method, route, status, seconds] of events) {
    series.observe([method, route, status], seconds);
    const labels = { method, route, status: String(status) };
    counter.inc(labels);
    histogram.observe(labels, seconds);
  }
  return { ours, theirs };
}

describe('TimedSeries', () => {
  it('renders exactly what prom-client renders for the same events, bounds and label order included', async () => {
    const { ours, theirs } = bothWays([
      ['GET', '/api/datasources/:id', 200, 0.0004],
      ['GET', '/api/datasources/:id', 200, 0.005], // on a bound: counted in that bucket
      ['GET', '/api/datasources/:id', 404, 0.02],
      ['POST', '/graphql', 200, 3],
      ['GET', '/api/datasources/:id', 200, 11], // above every bound: +Inf only
      ['GET', 'route with "quotes" and \\', 500, 0.07],
    ]);
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('demo_requests_total{method="GET",route="/api/datasources/:id",status="200"} 3');
    expect(text).toContain('demo_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/datasources/:id",status="200"} 2');
    expect(text).toContain('demo_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/datasources/:id",status="200"} 3');
  });

  it('renders only the headers before any event, like prom-client', async () => {
    const { ours, theirs } = bothWays([]);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('starts over on reset', async () => {
    const registry = new Registry();
    const series = new TimedSeries(registry, COUNTER, HISTOGRAM, ['status'], BOUNDS);
    series.observe([200], 0.001);
    registry.resetMetrics();
    series.observe([500], 0.001);
    const text = await registry.metrics();
    expect(text).not.toContain('status="200"');
    expect(text).toContain('demo_requests_total{status="500"} 1');
  });

  it('refuses a name already registered, and label values that do not match the label names', () => {
    const registry = new Registry();
    new Counter({ name: COUNTER.name, help: 'x', registers: [registry] });
    expect(() => new TimedSeries(registry, COUNTER, HISTOGRAM, ['status'], BOUNDS)).toThrow(/already been registered/);
    const series = new TimedSeries(new Registry(), COUNTER, HISTOGRAM, ['method', 'status'], BOUNDS);
    expect(() => series.observe(['GET'], 0.1)).toThrow(/expected 2 label values, got 1/);
  });
});
