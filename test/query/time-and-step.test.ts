import { describe, expect, it } from '@jest/globals';
import { formatInterval, goDurationString, parseGoDuration, parseIntervalString, parseSdkDuration, roundInterval } from '../../src/query/durations.ts';
import { alignToStep, calculateInterval, intervalFrom, safeInterval } from '../../src/query/step.ts';
import { evaluateDateMath, parseTimeRange } from '../../src/query/time-range.ts';

// The SDK's gtime rules and the original's Prometheus step algorithm, table-tested against the
// cases its sources document (gtime_test.go, intervalv2, promlib models).

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('Go and SDK durations', () => {
  it.each([
    ['5m', 5 * M], ['1h30m', 90 * M], ['1.5h', 90 * M], ['300ms', 300], ['2us', 0.002], ['0', 0], ['-1m', -M], ['+10s', 10 * S],
    ['', null], ['5', null], ['m', null], ['1d', null], ['now-1h', null], ['.s', null],
  ])('time.ParseDuration(%j) = %p ms', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each([['1d', D], ['2w', 14 * D], ['1y', 365.25 * D], ['1M', (365.25 * D) / 12], ['90s', 90 * S]])('gtime.ParseDuration(%j)', (text, ms) => {
    expect(parseSdkDuration(text)).toBe(ms);
  });

  it.each([['30', 30 * S], ['<10s>', 10 * S], ['1m', M], ['bad', null]])('interval strings: %j', (text, ms) => {
    expect(parseIntervalString(text)).toBe(ms);
  });

  it.each([
    [61 * S, '1m'], [D, '1d'], [500, '500ms'], [0.5, '1ms'], [366 * D, '1y'], [15 * S, '15s'], [2 * H + 5 * M, '2h'],
  ])('gtime.FormatInterval(%p) = %j', (ms, text) => {
    expect(formatInterval(ms)).toBe(text);
  });

  it.each([
    [15 * S, '15s'], [M, '1m0s'], [H, '1h0m0s'], [200, '200ms'], [1500, '1.5s'], [0, '0s'], [90 * M + 30 * S, '1h30m30s'], [0.001, '1µs'], [-M, '-1m0s'],
  ])('Duration.String() of %p ms = %j', (ms, text) => {
    expect(goDurationString(ms)).toBe(text);
  });

  it.each([
    [5, 1], [10, 1], [11, 10], [15, 10], [30, 20], [100, 100], [60, 50], [1500, 1000], [3 * S, 2 * S], [28.8 * S, 30 * S], [57.6 * S, M],
    [100 * S, 2 * M], [40 * M, 30 * M], [5.84 * H, 6 * H], [20 * H, 12 * H], [3 * D, D], [10 * D, 7 * D], [40 * D, 30 * D], [50 * D, 365 * D],
  ])('gtime.RoundInterval(%p) = %p', (ms, rounded) => {
    expect(roundInterval(ms)).toBe(rounded);
  });
});

describe('time ranges (gtime.TimeRange: epoch ms, bare durations, date math)', () => {
  const now = Date.UTC(2026, 10, 25, 16, 20, 30, 123); // a Wednesday

  it.each([
    ['1700000000000', 'now', 1700000000000, now],
    ['5m', 'now', now - 5 * M, now],
    ['now-1h', 'now', now - H, now],
    ['now/d', 'now/d', Date.UTC(2026, 10, 25), Date.UTC(2026, 10, 26) - 1],
    ['now-1d/d', 'now-1d/d', Date.UTC(2026, 10, 24), Date.UTC(2026, 10, 25) - 1],
    ['now/w', 'now/w', Date.UTC(2026, 10, 23), Date.UTC(2026, 10, 30) - 1],
    ['now-2M/M', 'now/y', Date.UTC(2026, 8, 1), Date.UTC(2027, 0, 1) - 1],
    ['now-6h/h', 'now+1h', Date.UTC(2026, 10, 25, 10), now + H],
    ['2026-01-02T03:04:05Z', '2026-01-02', Date.UTC(2026, 0, 2, 3, 4, 5), Date.UTC(2026, 0, 2)],
    ['2026-01-02||+1d', '2026-01-02T03:04:05Z||/h', Date.UTC(2026, 0, 3), Date.UTC(2026, 0, 2, 4) - 1],
    ['garbage', 'now-', 0, 0],
    [undefined, 17, 0, 0],
  ])('from %j to %j', (from, to, expectedFrom, expectedTo) => {
    expect(parseTimeRange(from, to, now)).toEqual({ from: expectedFrom, to: expectedTo });
  });

  it('date math without an anchor is refused', () => {
    expect(evaluateDateMath('-1h', now, false)).toBeNull();
    expect(evaluateDateMath('now/x', now, false)).toBeNull();
  });
});

describe('intervals and steps', () => {
  it.each([
    ['', '', 0, 15 * S], ['', '', 30_000, 30 * S], ['1m', '', 0, M], ['1m', '0s', 0, M], ['1m', '2m', 30_000, 2 * M], ['', '<10s>', 0, 10 * S], ['', 'bad', 0, null],
  ])('gtime.GetIntervalFrom(ds %j, query %j, intervalMs %p)', (ds, query, intervalMs, expected) => {
    expect(intervalFrom(ds, query, intervalMs, 15 * S)).toBe(expected);
  });

  it.each([
    // range, min interval, maxDataPoints -> interval
    [5 * M, 30 * S, 100, 30 * S],
    [12 * H, 15 * S, 0, 30 * S],
    [D, 15 * S, 1500, M],
    [365 * D, 15 * S, 1500, 6 * H],
    [2 * D, 1, 100_000, 2 * S],
  ])('intervalv2.Calculate over %p ms, min %p, %p points', (range, min, points, expected) => {
    expect(calculateInterval({ from: 0, to: range }, min, points)).toBe(expected);
  });

  it.each([[2 * D, 15 * S], [365 * D, H], [5 * M, 20]])('the 11,000-point safe interval over %p ms', (range, expected) => {
    expect(safeInterval({ from: 0, to: range })).toBe(expected);
  });

  it.each([
    [1_700_000_017_000, 15 * S, 0, 1_700_000_010_000], [1_700_000_010_000, 15 * S, 0, 1_700_000_010_000], [1_700_000_017_000, H, 3600, 1_699_999_200_000],
  ])('AlignTimeRange(%p, step %p, offset %p)', (t, step, offset, aligned) => {
    expect(alignToStep(t, step, offset)).toBe(aligned);
  });
});
