import { parseIntervalString, roundInterval } from './durations.ts';
import type { TimeRange } from './time-range.ts';

/** Points per range when a query gives no `maxDataPoints` (`intervalv2.DefaultRes`). */
export const DEFAULT_RESOLUTION = 1500;
/** Most points a range may be cut into, whatever the query asks (`safeResolution`). */
export const SAFE_RESOLUTION = 11_000;

/**
 * `gtime.GetIntervalFrom`: the query's own interval string (not empty, not `0s`), else its
 * `intervalMs`, else the data source's `timeInterval`, else the default. Null when the chosen
 * string does not parse (the original fails the query with Go's parse error).
 */
export function intervalFrom(dsInterval: string, queryInterval: string, queryIntervalMs: number, defaultMs: number): number | null {
  let interval = queryInterval === '0s' ? '' : queryInterval;
  if (interval === '' && queryIntervalMs !== 0) return queryIntervalMs;
  if (interval === '') interval = dsInterval;
  if (interval === '') return defaultMs;
  return parseIntervalString(interval);
}

/** `intervalv2.Calculate`: range / points (1500 when 0), rounded, but never below `minInterval`. */
export function calculateInterval(range: TimeRange, minIntervalMs: number, maxDataPoints: number): number {
  const resolution = maxDataPoints || DEFAULT_RESOLUTION;
  const calculated = goDivision(range.to - range.from, resolution);
  return calculated < minIntervalMs ? minIntervalMs : roundInterval(calculated);
}

/** `intervalv2.CalculateSafeInterval`: the range cut into at most `resolution` points, rounded. */
export function safeInterval(range: TimeRange, resolution = SAFE_RESOLUTION): number {
  return roundInterval(goDivision(range.to - range.from, resolution));
}

/** Go's integer division of nanoseconds, expressed back in milliseconds. */
function goDivision(ms: number, by: number): number {
  return Math.trunc((ms * 1e6) / by) / 1e6;
}

/**
 * `AlignTimeRange`: a time floored to a multiple of the step (shifted by a UTC offset in seconds),
 * so that Prometheus caches aligned ranges.
 */
export function alignToStep(ms: number, stepMs: number, offsetSeconds = 0): number {
  const offset = offsetSeconds * 1000;
  return Math.floor((ms + offset) / stepMs) * stepMs - offset;
}
