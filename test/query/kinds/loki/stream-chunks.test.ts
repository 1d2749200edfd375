import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeFrame } from '../../../../src/query/frames/encode.ts';
import type { DataQuery } from '../../../../src/query/kinds/kind.ts';
import { lokiFramesSteps, parseLokiQuery } from '../../../../src/query/kinds/loki/frames.ts';
import { drain } from '../../../../src/query/slices.ts';

// A large Loki streams answer is read a chunk of lines at a time into one log frame: the same
// frame (ids, labels, nanoseconds, stats) as read in one pass, whatever the chunk size; answers
// whose streams are not simply laid out are read in one pass.

const FROM = 1_700_000_000_000;
const model: DataQuery = { refId: 'A', queryType: '', intervalMs: 1000, maxDataPoints: 100, range: { from: FROM, to: FROM + 3_600_000 }, model: { expr: '{job="app"}' } };
const q = parseLokiQuery(model);

/** The frames as JSON, or the error thrown. */
function read(body: string, chunking: { from: number; bytes: number }): string {
  try {
    return drain(lokiFramesSteps(Buffer.from(body), q, chunking)).map(encodeFrame).join('\n');
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}
const whole = (body: string) => read(body, { from: Infinity, bytes: 0 });
const chunked = (body: string, bytes: number) => read(body, { from: 0, bytes });

const entry = (row: number, line: string) => [`${FROM + row}000${String(row % 1000).padStart(3, '0')}`, line];
const streams = (result: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ status: 'success', data: { resultType: 'streams', result, ...extra } });
const big = streams([
  { stream: { job: 'app', level: 'info' }, values: Array.from({ length: 60 }, (_, i) => entry(i, `line ${i} <b>&amp;</b> "quoted" \u2028 é`)) },
  { stream: { job: 'app', level: 'error' }, values: Array.from({ length: 5 }, (_, i) => entry(i, 'same line')) },
  { stream: { job: 'empty' }, values: [] },
  { stream: { job: 'app', level: 'error' }, values: Array.from({ length: 5 }, (_, i) => entry(i, 'same line')) },
], { stats: { summary: { execTime: 0.5, totalLinesProcessed: 70 } } });

describe('a Loki streams answer read in chunks', () => {
  it.each([
    ['streams cut into chunks of one line (repeated lines numbered across chunks)', big, 1],
    ['streams cut into chunks of about 1 KB', big, 1000],
    ['the whole answer in one chunk', big, 1e9],
    ['the Loki fixture', readFileSync(new URL('../../../fixtures/loki/streams.json', import.meta.url), 'utf8'), 200],
    ['an empty result', streams([]), 10],
    ['a stream of no lines only', streams([{ stream: { a: 'b' }, values: [] }]), 10],
    ['stats before the result', JSON.stringify({ data: { stats: { summary: { execTime: 1 } }, resultType: 'streams', result: [{ stream: { a: 'b' }, values: [entry(1, 'x')] }] } }), 1],
    ['extra members of an entry', streams([{ stream: { a: 'b' }, values: [[...entry(1, 'x'), { structured: 'metadata' }], entry(2, 'y')] }]), 1],
    ['a stream with another member (read at once)', streams([{ stream: { a: 'b' }, values: [entry(1, 'x')], extra: 1 }]), 1],
    ['values before labels (read at once, by JSON.parse)', streams([{ values: [entry(1, 'x')], stream: { a: 'b' } }]), 1],
    ['a bad timestamp in a later chunk', streams([{ stream: { a: 'b' }, values: [entry(1, 'x'), ['12x', 'y']] }]), 1],
    ['a label that is no string', streams([{ stream: { a: 1 }, values: [entry(1, 'x')] }]), 1],
    ['escaped lines', streams([{ stream: { a: 'b' }, values: [entry(1, 'tab\there'), entry(2, 'nul\u0000x'), entry(3, 'slash\\/')] }]), 1],
  ])('%s: the same frame', (_name, body, bytes) => {
    expect(chunked(body, bytes)).toBe(whole(body));
  });

  it('reads any streams answer alike in chunks of any size (property)', () => {
    const line = fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '<', '&', 'é', '\n', '\u2028', 'x', '[', ']') });
    const stream = fc.record({
      stream: fc.dictionary(fc.constantFrom('job', 'level', 'a b', '__name__'), fc.string({ maxLength: 4 }), { maxKeys: 3 }),
      values: fc.array(fc.tuple(fc.integer({ min: 0, max: 999 }), fc.oneof(line, fc.constant('dup'))).map(([row, text]) => entry(row, text)), { maxLength: 6 }),
    });
    fc.assert(fc.property(fc.array(stream, { maxLength: 6 }), fc.integer({ min: 1, max: 300 }), (result, bytes) => {
      const body = streams(result);
      expect(chunked(body, bytes)).toBe(whole(body));
    }), { numRuns: 200 });
  });
});
