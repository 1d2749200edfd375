import { describe, expect, it } from '@jest/globals';
import { parsePeriod } from '../../src/config/duration.ts';

describe('parsePeriod', () => {
  it.each<[string, number | null]>([
    ['500ms', 500],
    ['5s', 5000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['2w', 1_209_600_000],
    ['1.5s', 1500],
    [' 10s ', 10_000],
    ['1h1m1s1ms', 3_661_001],
    ['0.4ms', null], // rounds to nothing
    ['0s', null],
    ['', null],
    ['5', null],
    ['s', null],
    ['5 s', null],
    ['-5s', null],
    ['5y', null],
    ['1e3s', null],
    ['5S', null],
    [`${'9'.repeat(20)}w`, null], // past safe integers
  ])('%j is %p', (text, ms) => {
    expect(parsePeriod(text)).toBe(ms);
  });
});
