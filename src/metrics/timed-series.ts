import type { Metric, Registry } from 'prom-client';

/** One label set's counts: the histogram's buckets (not cumulative), sum and count. */
interface SeriesRecord {
  labels: Record<string, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

type LabelValue = string | number;

/**
 * A counter of events and a histogram of their durations over the same labels, recorded together
 * once per request. prom-client would cost over a microsecond per pair on the request path: it
 * builds a hash string from the label object and bumps buckets keyed by their bounds as property
 * names. Here label values find their record through one Map per label (a status stays a number
 * until scraped), and the bucket is an index. Both metrics are served from the same records, in
 * prom-client's exposition (its registry formats them), so the counter always equals `_count`.
 */
export class TimedSeries {
  readonly #labelNames: readonly string[];
  readonly #bounds: readonly number[];
  readonly #root = new Map<LabelValue, unknown>();
  #records: SeriesRecord[] = [];

  constructor(
    registry: Registry,
    counter: { name: string; help: string },
    histogram: { name: string; help: string },
    labelNames: readonly string[],
    bounds: readonly number[],
  ) {
    if (labelNames.length === 0) throw new Error('a timed series needs at least one label');
    this.#labelNames = labelNames;
    this.#bounds = bounds;
    registry.registerMetric(this.#metric(counter, 'counter', () => this.#counterValues()));
    registry.registerMetric(this.#metric(histogram, 'histogram', () => this.#histogramValues(histogram.name)));
  }

  /** One event with these label values (in the order of the label names) that took `seconds`. */
  observe(values: readonly LabelValue[], seconds: number): void {
    if (values.length !== this.#labelNames.length) throw new Error(`expected ${this.#labelNames.length} label values, got ${values.length}`);
    const last = values.length - 1;
    let level = this.#root;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]!) as Map<LabelValue, unknown> | undefined;
      if (!next) level.set(values[i]!, (next = new Map()));
      level = next;
    }
    let record = level.get(values[last]!) as SeriesRecord | undefined;
    if (!record) level.set(values[last]!, (record = this.#newRecord(values)));
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        record.buckets[i]!++;
        break;
      }
    }
    record.sum += seconds;
    record.count++;
  }

  #newRecord(values: readonly LabelValue[]): SeriesRecord {
    const labels: Record<string, string> = {};
    this.#labelNames.forEach((name, i) => (labels[name] = String(values[i])));
    const record = { labels, buckets: new Float64Array(this.#bounds.length), sum: 0, count: 0 };
    this.#records.push(record);
    return record;
  }

  #counterValues() {
    return this.#records.map((record) => ({ labels: record.labels, value: record.count }));
  }

  /** As prom-client's histogram: cumulative buckets with `le` first, then +Inf, `_sum` and `_count`. */
  #histogramValues(name: string) {
    const values: { labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string }[] = [];
    for (const record of this.#records) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += record.buckets[i]!;
        values.push({ labels: { le: bound }, sharedLabels: record.labels, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: record.labels, value: record.count, metricName: `${name}_bucket` },
        { labels: {}, sharedLabels: record.labels, value: record.sum, metricName: `${name}_sum` },
        { labels: {}, sharedLabels: record.labels, value: record.count, metricName: `${name}_count` },
      );
    }
    return values;
  }

  /** The shape prom-client's registry reads from a metric: what `get()` gives, and `reset()`. */
  #metric(about: { name: string; help: string }, type: 'counter' | 'histogram', values: () => unknown[]): Metric {
    return {
      name: about.name,
      help: about.help,
      type,
      get: async () => ({ name: about.name, help: about.help, type, values: values(), aggregator: 'sum' }),
      reset: () => {
        this.#root.clear();
        this.#records = [];
      },
    } as unknown as Metric;
  }
}
