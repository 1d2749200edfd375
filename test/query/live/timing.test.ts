import { describe, expect, it } from '@jest/globals';
import { nextTick, parsePeriod, rangeAt, timeForm } from '../../../src/query/live/timing.ts';

describe('refresh periods', () => {
  it.each([
    ['5s', 5_000], ['1m', 60_000], ['1m30s', 90_000], ['500ms', 500], ['1h', 3_600_000], ['1.5s', 1_500], [' 2s ', 2_000], ['1d', 86_400_000],
    ['', null], ['5', null], ['s', null], ['-5s', null], ['0s', null], ['5x', null], ['5 s', null], ['1M', null], ['0.1ms', null],
  ])('%j -> %j', (text, ms) => {
    expect(parsePeriod(text)).toBe(ms);
  });
});

describe('ticks aligned on the epoch', () => {
  it.each([
    [0, 5_000, 5_000], [1, 5_000, 5_000], [4_999, 5_000, 5_000], [5_000, 5_000, 10_000], [1_700_000_001_234, 5_000, 1_700_000_005_000],
    [1_700_000_001_234, 60_000, 1_700_000_040_000],
  ])('after %d every %d ms: %d', (now, period, tick) => {
    expect(nextTick(now, period)).toBe(tick);
  });

  it('two subscribers arriving apart meet on the same ticks', () => {
    const a = nextTick(1_700_000_000_100, 5_000);
    const b = nextTick(1_700_000_003_900, 5_000);
    expect(a).toBe(b);
    expect(nextTick(a, 5_000)).toBe(a + 5_000);
  });
});

describe('ranges at a tick, by the envelope\'s own rules', () => {
  const now = Date.UTC(2026, 10, 25, 16, 37, 12, 345); // a Wednesday
  it.each([
    ['now-1h', 'now', now - 3_600_000, now],
    ['5m', 'now', now - 300_000, now],
    ['now/d', 'now/d', Date.UTC(2026, 10, 25), Date.UTC(2026, 10, 26) - 1],
    ['now-1d/d', 'now-1d/d', Date.UTC(2026, 10, 24), Date.UTC(2026, 10, 25) - 1],
    ['now/w', 'now', Date.UTC(2026, 10, 23), now],
    ['1700000000000', 'now', 1_700_000_000_000, now],
  ])('%s to %s', (from, to, start, end) => {
    expect(rangeAt(from, to, now)).toEqual({ from: String(start), to: String(end) });
  });

  it.each([
    ['now', 'relative'], ['now-1h', 'relative'], ['now-1d/d', 'relative'], ['5m', 'relative'], ['1h30m', 'relative'],
    ['1700000000000', 'absolute'], ['2026-01-02T03:04:05Z||+1h', 'absolute'],
    ['yesterday', null], ['now-', null], ['now-1x', null], ['', null], ['now - 1h', null],
  ])('%j is %s', (text, form) => {
    expect(timeForm(text)).toBe(form);
  });

  it('the same range text gives a window one refresh later at the next tick', () => {
    const first = rangeAt('now-1h', 'now', 1_700_000_000_000);
    const second = rangeAt('now-1h', 'now', 1_700_000_005_000);
    expect(first).toEqual({ from: '1699996400000', to: '1700000000000' });
    expect(Number(second.from) - Number(first.from)).toBe(5_000);
    expect(Number(second.to) - Number(first.to)).toBe(5_000);
  });
});

