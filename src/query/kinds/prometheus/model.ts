import { formatInterval, goDurationString, parseIntervalString } from '../../durations.ts';
import { alignToStep, calculateInterval, intervalFrom, safeInterval } from '../../step.ts';
import type { DataQuery } from '../kind.ts';

/**
 * A Prometheus query as the original's backend reads it (`pkg/promlib/models/query.go`): the
 * step from the min interval, `intervalMs`, the scrape interval and `maxDataPoints`, the built-in
 * variables interpolated, range and instant flags. Pure.
 */
export interface PrometheusQuery {
  refId: string;
  expr: string;
  /** Milliseconds. */
  stepMs: number;
  legendFormat: string;
  /** The request's range, unaligned (instant queries evaluate at `end`). */
  start: number;
  end: number;
  range: boolean;
  instant: boolean;
  exemplar: boolean;
  utcOffsetSec: number;
}

const RATE_INTERVAL = new Set(['$__rate_interval', '${__rate_interval}']);
const VARIABLE_INTERVALS = new Set([
  '$__interval', '$__interval_ms', '$__rate_interval', '$__rate_interval_ms',
  '${__interval}', '${__interval_ms}', '${__rate_interval}', '${__rate_interval_ms}',
]);
const DEFAULT_SCRAPE_MS = 15_000;

const str = (v: unknown) => (typeof v === 'string' ? v : '');
/** Go's JSON into int64: numbers only, truncated (a fraction fails to decode there; truncated here). */
const int = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);

/** The model, or the error the original reports for the refId (a min interval that does not parse). */
export function parsePrometheusQuery(query: DataQuery, scrapeInterval: string): PrometheusQuery | { error: string } {
  const model = query.model;
  const interval = str(model.interval);
  const stepMs = prometheusStep(query, scrapeInterval, interval, int(model.intervalMs), int(model.intervalFactor));
  if (stepMs === null) return { error: `time: invalid duration ${JSON.stringify(interval.replace('<', '').replace('>', ''))}` };
  const expr = interpolate(str(model.expr), query.intervalMs, stepMs, interval, scrapeInterval, query.range.to - query.range.from);
  let range = model.range === true;
  const instant = model.instant === true;
  // Older dashboards set neither: a range query.
  if (!range && !instant) range = true;
  return {
    refId: query.refId, expr, stepMs, legendFormat: str(model.legendFormat),
    start: query.range.from, end: query.range.to, range, instant, exemplar: model.exemplar === true,
    utcOffsetSec: int(model.utcOffsetSec),
  };
}

/** `calculatePrometheusInterval`; null when the min interval does not parse. */
export function prometheusStep(query: Pick<DataQuery, 'range' | 'maxDataPoints'>, scrapeInterval: string, interval: string,
  intervalMs: number, intervalFactor: number): number | null {
  const minInterval = intervalFrom(scrapeInterval, VARIABLE_INTERVALS.has(interval) ? '' : interval, intervalMs, DEFAULT_SCRAPE_MS);
  if (minInterval === null) return null;
  const calculated = calculateInterval(query.range, minInterval, query.maxDataPoints);
  const safe = safeInterval(query.range);
  const adjusted = calculated > safe ? calculated : safe;
  if (RATE_INTERVAL.has(interval)) return rateInterval(adjusted, scrapeInterval);
  return adjusted * (intervalFactor || 1);
}

/** `calculateRateInterval`: max(interval + scrape, 4 * scrape); 0 when the scrape interval does not parse. */
export function rateInterval(intervalMs: number, scrapeInterval: string): number {
  const scrape = parseIntervalString(scrapeInterval || '15s');
  if (scrape === null) return 0;
  return Math.max(intervalMs + scrape, 4 * scrape);
}

/** `interpolateVariables`: `$__interval`, `$__interval_ms`, `$__range*`, `$__rate_interval*` and their `${}` forms. */
export function interpolate(expr: string, queryIntervalMs: number, stepMs: number, minStep: string, scrapeInterval: string, rangeMs: number): string {
  const rangeS = String(Math.round(rangeMs / 1000));
  let rate: number;
  if (RATE_INTERVAL.has(minStep)) rate = stepMs;
  else {
    let requested = minStep;
    if (requested === '$__interval' || requested === '${__interval}') requested = goDurationString(stepMs);
    if (requested === '') requested = scrapeInterval;
    rate = rateInterval(queryIntervalMs, requested);
  }
  const values: Array<[string, string]> = [
    ['__interval_ms', String(Math.trunc(stepMs))],
    ['__interval', formatInterval(stepMs)],
    ['__range_ms', String(Math.trunc(rangeMs))],
    ['__range_s', rangeS],
    ['__range', `${rangeS}s`],
    ['__rate_interval_ms', String(Math.trunc(rate))],
    ['__rate_interval', goDurationString(rate)],
  ];
  // In the original's order, `$` forms first: `$__interval` must not eat `$__interval_ms`.
  for (const [name, value] of values) expr = expr.replaceAll(`$${name}`, value);
  for (const [name, value] of values) expr = expr.replaceAll(`\${${name}}`, value);
  return expr;
}

/** The range sent upstream: both ends floored to the step. */
export function alignedRange(q: PrometheusQuery): { start: number; end: number } {
  return { start: alignToStep(q.start, q.stepMs, q.utcOffsetSec), end: alignToStep(q.end, q.stepMs, q.utcOffsetSec) };
}

/** Go's `strconv.FormatFloat(seconds, 'f', -1, 64)` of a time or duration in milliseconds. */
export function secondsParam(ms: number): string {
  const s = ms / 1000;
  const text = String(s);
  return text.includes('e') ? s.toFixed(20).replace(/\.?0+$/, '') : text;
}

/** `Expr: <expr>\nStep: <Go duration>`, on the first frame (grafana-client's health message). */
export function executedQueryString(q: PrometheusQuery): string {
  return `Expr: ${q.expr}\nStep: ${goDurationString(q.stepMs)}`;
}
