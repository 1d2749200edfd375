import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decodeOutcome, encodeOutcome } from '../../../src/query/live/answer-codec.ts';
import { deepEqual } from '../../../src/query/live/delta.ts';
import { encodeResults } from '../../../src/query/frames/encode.ts';
import { writtenField, type DataResponse, type Field, type Frame } from '../../../src/query/frames/frame.ts';

// A shared answer read back on another instance must be the answer its leader handed out: the
// same values (NaN and ±Infinity included), the same wire encoding.

const float = fc.oneof(fc.double(), fc.constantFrom(NaN, Infinity, -Infinity, 0, 1.5));
const label = fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 });

const field: fc.Arbitrary<Field> = fc.oneof(
  fc.record({ name: fc.string({ maxLength: 8 }), values: fc.array(fc.integer({ min: 0, max: 2 ** 45 }), { maxLength: 20 }) }).map(({ name, values }) => ({ name, type: 'time.Time' as const, values })),
  fc.record({ name: fc.string({ maxLength: 8 }), values: fc.array(float, { maxLength: 20 }), labels: fc.option(label, { nil: undefined }) }).map(({ name, values, labels }) => ({ name, type: 'float64' as const, values, ...(labels ? { labels } : {}) })),
  fc.record({ name: fc.string({ maxLength: 8 }), values: fc.array(fc.option(fc.string({ maxLength: 10 }), { nil: null }), { maxLength: 20 }) }).map(({ name, values }) => ({ name, type: 'string' as const, nullable: true, values, config: { displayNameFromDS: name } })),
  fc.record({ name: fc.string({ maxLength: 8 }), values: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }) }).map(({ name, values }) => ({ name, type: 'json.RawMessage' as const, values: values.map((v) => (Object.is(v, -0) ? 0 : v)) })),
  // A column the query kinds wrote as bytes, with rows JSON cannot hold listed apart.
  fc.array(float, { maxLength: 20 }).map((values) => {
    const nan: number[] = [];
    const inf: number[] = [];
    const json = JSON.stringify(values.map((v, row) => {
      if (Number.isNaN(v)) nan.push(row);
      else if (v === Infinity) inf.push(row);
      else return v;
      return null;
    }).map((v) => (v === -Infinity ? null : v)));
    const negInf = values.flatMap((v, row) => (v === -Infinity ? [row] : []));
    const entities = { ...(nan.length ? { NaN: nan } : {}), ...(inf.length ? { Inf: inf } : {}), ...(negInf.length ? { NegInf: negInf } : {}) };
    return writtenField('Value', 'float64', { json: Buffer.from(json), rows: values.length, ...(Object.keys(entities).length ? { entities } : {}) }, { job: 'w' });
  }),
);

const frame: fc.Arbitrary<Frame> = fc.record({
  name: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
  refId: fc.constant('A'),
  meta: fc.option(fc.record({ type: fc.constant('timeseries-multi'), typeVersion: fc.constant<[number, number]>([0, 1]), executedQueryString: fc.string({ maxLength: 20 }) }), { nil: undefined }),
  fields: fc.array(field, { maxLength: 4 }),
}).map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as unknown as Frame);

const response: fc.Arbitrary<DataResponse> = fc.oneof(
  fc.array(frame, { maxLength: 3 }).map((frames) => ({ frames, status: 200 })),
  fc.record({ error: fc.string({ maxLength: 30 }), errorSource: fc.constantFrom<'plugin' | 'downstream'>('plugin', 'downstream'), status: fc.constantFrom(400, 500, 504) }),
);

const results = fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 3 }), response), { selector: ([refId]) => refId, maxLength: 4 }).map((entries) => new Map(entries));

const plain = (r: ReadonlyMap<string, DataResponse>) => [...r].map(([refId, resp]) => [refId, { ...resp, frames: resp.frames?.map((f) => ({ ...f, fields: f.fields.map((x) => ({ written: x.written !== undefined, name: x.name, type: x.type, nullable: x.nullable, labels: x.labels, config: x.config, nanos: x.nanos, values: x.values })) })) }]);

describe('shared answer codec', () => {
  it('gives back the same answers: values (NaN, ±Infinity, null), schema, errors, columns written as bytes as such, and the same wire encoding', () => {
    fc.assert(
      fc.property(results, (original) => {
        const decoded = decodeOutcome(encodeOutcome({ kind: 'results', results: original }));
        expect(decoded.kind).toBe('results');
        if (decoded.kind !== 'results') return;
        expect([...decoded.results.keys()]).toEqual([...original.keys()]);
        expect(deepEqual(plain(decoded.results), plain(original))).toBe(true);
        expect(encodeResults(decoded.results)).toBe(encodeResults(original));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps sub-millisecond times and a frame without fields', () => {
    const original = new Map<string, DataResponse>([['A', { frames: [{ fields: [{ name: 'Time', type: 'time.Time', values: [1, 2], nanos: [0, 5] }] }, { name: 'empty', fields: [] }] }]]);
    const decoded = decodeOutcome(encodeOutcome({ kind: 'results', results: original }));
    expect(decoded.kind === 'results' && decoded.results.get('A')!.frames!.map((f) => f.fields.map((x) => [x.values, x.nanos]))).toEqual([[[[1, 2], [0, 5]]], []]);
  });

  it('carries the ends that are not answers', () => {
    expect(decodeOutcome(encodeOutcome({ kind: 'gone' }))).toEqual({ kind: 'gone' });
    expect(decodeOutcome(encodeOutcome({ kind: 'unshared' }))).toEqual({ kind: 'unshared' });
  });

  it('refuses bytes it did not write rather than hand out a wrong answer', () => {
    const bytes = encodeOutcome({ kind: 'results', results: new Map([['A', { frames: [{ fields: [{ name: 'v', type: 'float64', values: [1, 2, 3] }] }] }]]) });
    expect(() => decodeOutcome(bytes.subarray(0, bytes.length - 1))).toThrow('cut short');
    expect(() => decodeOutcome(Buffer.concat([bytes, Buffer.from('x')]))).toThrow('trailing');
    expect(() => decodeOutcome(Buffer.from([2, 0]))).toThrow('unknown shared answer format');
    expect(() => decodeOutcome(Buffer.from([1, 9]))).toThrow('unknown shared answer kind');
    expect(() => decodeOutcome(Buffer.from([1]))).toThrow('unknown shared answer format');
  });
});
