import type { Registry } from 'prom-client';

interface Series<L extends string> {
  labels: Record<L, string>;
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative: added up when scraped. */
  perBucket: number[];
}

interface MetricValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * A counter of events and a histogram of their durations over the same labels, as one record per
 * label set that the caller finds by a string key of its own. prom-client's Counter and Histogram
 * validate and hash their label object on every call, bound children included; on the request
 * path that is done once per label set here, and the exposition is built only when scraped, in
 * prom-client's registry and format.
 */
export class TimedSeries<L extends string> {
  readonly #series = new Map<string, Series<L>>();
  readonly #buckets: readonly number[];

  constructor(
    registry: Registry,
    options: { counter: { name: string; help: string }; histogram: { name: string; help: string }; buckets: readonly number[] },
  ) {
    this.#buckets = options.buckets;
    const view = (name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]) => {
      const metric = {
        name,
        help,
        type,
        aggregator: 'sum',
        get: () => ({ name, help, type, aggregator: 'sum', values: values() }),
        reset: () => this.#series.clear(),
      };
      registry.registerMetric(metric as never);
    };
    view(options.counter.name, options.counter.help, 'counter', () => [...this.#series.values()].map((s) => ({ labels: s.labels, value: s.count })));
    view(options.histogram.name, options.histogram.help, 'histogram', () => this.#histogramValues(options.histogram.name));
  }

  /** Counts one event of `seconds`; `labels` is called only the first time `key` is seen. */
  record(key: string, labels: () => Record<L, string>, seconds: number): void {
    let series = this.#series.get(key);
    if (!series) {
      series = { labels: labels(), count: 0, sum: 0, perBucket: new Array<number>(this.#buckets.length).fill(0) };
      this.#series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    const bucket = this.#buckets.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) series.perBucket[bucket]!++;
  }

  #histogramValues(name: string): MetricValue[] {
    const values: MetricValue[] = [];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      this.#buckets.forEach((bound, i) => {
        cumulative += series.perBucket[i]!;
        values.push({ metricName: `${name}_bucket`, labels: { le: bound, ...series.labels }, value: cumulative });
      });
      values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count });
      values.push({ metricName: `${name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${name}_count`, labels: series.labels, value: series.count });
    }
    return values;
  }
}
