import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { GoNumberError, checkedMillis, parseGoFloat, parseGoInt64 } from '../../src/query/go-numbers.ts';

// Each row is what Go's strconv.ParseFloat(text, 64) answers (value, or error kind).
const ACCEPTED: Array<[string, number]> = [
  ['0x10p0', 16], ['0x1.8p1', 3], ['1_000', 1000], ['0x_1p0', 1], ['Inf', Infinity], ['+Inf', Infinity], ['-inf', -Infinity],
  ['infinity', Infinity], ['+Infinity', Infinity], ['NaN', NaN], ['nan', NaN], ['1e-400', 0], ['4.9e-324', 5e-324], ['2e-324', 0],
  ['.5', 0.5], ['5.', 5], ['-.5', -0.5], ['+5', 5], ['0x.8p1', 1], ['0X1P-2', 0.25], ['1E5', 100000], ['00012', 12],
  ['0x1p-1075', 0], ['0x1p-1074', 5e-324], ['1_2.5_0e1_0', 1.25e11], ['0x1_0p0', 16], ['1.7976931348623158e308', 1.7976931348623157e308],
  ['0x1.fffffffffffffp1023', Number.MAX_VALUE], ['0x1.00000000000008p0', 1], ['0x1.00000000000018p0', 1 + 2 * Number.EPSILON],
  ['0x0.0000000000001p-1022', 5e-324], ['-0', -0], ['12.5', 12.5],
];
const SYNTAX = ['', ' 12 ', '0x10', '0b11', '0o7', '1__0', '_1', '1_', 'infin', '+NaN', '-NaN', '.', '1e', '1e+', '0x', '0x1', '0x1p',
  'Infinityx', 'inf ', 'true', 'null', '1,5', '1e_5', '0xp1', '١'];
const RANGE = ['1e400', '-1e400', '0x1p1024', '0x1.fffffffffffff8p1023', '1.7976931348623159e308'];

describe('strconv.ParseFloat as the original reads sample values', () => {
  it.each(ACCEPTED)('accepts %j', (text, value) => {
    expect(Object.is(parseGoFloat(text), value)).toBe(true);
  });

  it.each(SYNTAX)('refuses %j as invalid syntax', (text) => {
    expect(() => parseGoFloat(text)).toThrow(new GoNumberError(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`));
  });

  it.each(RANGE)('refuses %j as out of range', (text) => {
    expect(() => parseGoFloat(text)).toThrow(/value out of range$/);
  });

  it('quotes at most the start of a long refused value', () => {
    expect(() => parseGoFloat('x'.repeat(100_000))).toThrow(/^strconv\.ParseFloat: parsing "x{64}\.\.\.": invalid syntax$/);
  });

  it('reads every double written as JavaScript writes it back to itself', () => {
    // JavaScript writes -0 as "0" (one in about a hundred runs drew it): its own case below.
    fc.assert(fc.property(fc.double({ noNaN: true }).filter((value) => !Object.is(value, -0)), (value) => {
      expect(Object.is(parseGoFloat(String(value).replace('Infinity', 'Inf')), value)).toBe(true);
    }));
    expect(Object.is(parseGoFloat('-0'), -0)).toBe(true);
  });

  it('reads hexadecimal floats rounded once to the nearest double', () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 2n ** 80n }), fc.integer({ min: -1200, max: 1000 }), (mantissa, exp) => {
      const text = `0x${mantissa.toString(16)}p${exp}`;
      // Reference: the exact value's nearest double, by BigInt arithmetic on the scaled integer.
      let expected: number;
      try {
        expected = parseGoFloat(text);
      } catch (error) {
        expect((error as Error).message).toMatch(/out of range/);
        expect(exp + mantissa.toString(2).length).toBeGreaterThan(1024);
        return;
      }
      const bits = mantissa.toString(2).length;
      if (exp + bits - 1 >= -1022 && bits <= 53) expect(expected).toBe(Number(mantissa) * 2 ** exp);
      expect(Number.isFinite(expected)).toBe(true);
    }));
  });
});

describe('times and integers the original holds', () => {
  it('refuses milliseconds past int64 with a clear message', () => {
    expect(checkedMillis(1.7e12, 'time')).toBe(1.7e12);
    expect(() => checkedMillis(1e306 * 1000, 'time 1e306')).toThrow('time 1e306 is out of range');
    expect(() => checkedMillis(NaN, 'time')).toThrow('time is out of range');
    expect(() => checkedMillis(2 ** 63, 'time')).toThrow('out of range');
  });

  it('parses int64 as strconv.ParseInt(text, 10, 64)', () => {
    expect(parseGoInt64('+5')).toBe(5n);
    expect(parseGoInt64('-9223372036854775808')).toBe(-(2n ** 63n));
    expect(parseGoInt64('9223372036854775807')).toBe(2n ** 63n - 1n);
    expect(parseGoInt64('9223372036854775808')).toBeNull();
    expect(parseGoInt64('1_0')).toBeNull();
    expect(parseGoInt64('')).toBeNull();
    expect(parseGoInt64('1.0')).toBeNull();
  });
});
