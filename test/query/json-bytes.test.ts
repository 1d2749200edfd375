import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { OPEN_BRACKET, readPlain, type JsonBytes } from '../../src/query/json-bytes.ts';
import { parseGoFloat } from '../../src/query/go-numbers.ts';

// The byte reader's pieces against JSON.parse: every value it reads is the one JSON.parse finds,
// every text it takes is JSON, and what it does not take it leaves (null) rather than misreads.

const read = <T>(text: string, fn: (r: JsonBytes) => T) => readPlain(Buffer.from(text), fn);

/** Number literals of every JSON form, and texts that only look like numbers. */
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.tuple(fc.boolean(), fc.nat(), fc.option(fc.nat()), fc.option(fc.integer({ min: -400, max: 400 })), fc.constantFrom('e', 'E'))
    .map(([neg, int, frac, exp, e]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `${e}${exp}`}`),
  fc.tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 17n }), fc.option(fc.stringMatching(/^\d{1,24}$/)))
    .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}`),
  fc.constantFrom('01', '.5', '5.', '-', '+1', '1e', '0x10', '1_0', '--1', '1e+', 'Infinity', 'NaN', '1e400', '-1e400', '123456789012345678901234567890',
    '-0', '0.0', '1.5.5', '1-2', '1.5e', '999999999999999', '9999999999999999', '0.000000000000000000000001', '1700000000000', '-1234.56'),
);

describe('JsonBytes against JSON.parse', () => {
  it('reads a number as JSON.parse does, ±Infinity where it overflows, and leaves what JSON refuses', () => {
    fc.assert(fc.property(numberText, (text) => {
      let expected: unknown;
      try {
        expected = JSON.parse(text);
      } catch {
        expected = null;
      }
      const got = read(text, (r) => [r.number(), r.integral] as const);
      if (expected === null || typeof expected !== 'number') expect(got).toBeNull();
      else {
        expect(Object.is(got![0], expected) || (expected === 0 && got![0] === 0)).toBe(true);
        // `integral` promises an integer literal int64 holds (InfluxDB's times rely on it).
        if (got![1]) expect(/^-?\d{1,15}$/.test(text) && Number.isSafeInteger(expected)).toBe(true);
      }
    }), { numRuns: 3000 });
  });

  it('reads strings with any escapes as JSON.parse does', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 20 }), (value) => {
      const text = JSON.stringify(value);
      expect(read(text, (r) => r.string())).toBe(value);
    }), { numRuns: 2000 });
  });

  it('reads quoted sample values as strconv.ParseFloat of the string, its fast path included', () => {
    fc.assert(fc.property(fc.oneof(numberText, fc.constantFrom('', ' 12 ', '0x10', 'NaN', '+Inf', 'é', '0x1p-2')), (value) => {
      const text = JSON.stringify(value);
      let expected: number | string;
      try {
        expected = parseGoFloat(value);
      } catch (error) {
        expected = (error as Error).message;
      }
      let got: number | string;
      try {
        got = read(text, (r) => r.quotedNumber(parseGoFloat)) as number;
      } catch (error) {
        got = (error as Error).message;
      }
      expect(Object.is(got, expected) || (got === 0 && expected === 0)).toBe(true);
    }), { numRuns: 3000 });
  });

  it('skips and parses any JSON value inside an array as JSON.parse does', () => {
    fc.assert(fc.property(fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 4 }), (values) => {
      const text = JSON.stringify(values, null, values.length % 2 ? 1 : undefined);
      const got = read(text, (r) => {
        const out: unknown[] = [];
        r.expect(OPEN_BRACKET);
        r.elements(() => out.push(r.json()));
        return out;
      });
      expect(got).toEqual(JSON.parse(text));
    }), { numRuns: 1000 });
  });

  it('answers null for a document cut short or followed by text, never an exception', () => {
    fc.assert(fc.property(fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 3 }), fc.nat(), (values, cut) => {
      const text = JSON.stringify(values);
      const short = text.slice(0, cut % text.length);
      const arrayOf = (r: JsonBytes) => {
        r.expect(OPEN_BRACKET);
        r.elements(() => r.json());
        return true;
      };
      expect(read(short, arrayOf)).toBeNull();
      expect(read(`${text} x`, arrayOf)).toBeNull();
    }), { numRuns: 1000 });
  });
});
