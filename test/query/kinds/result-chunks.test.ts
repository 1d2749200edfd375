import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeResponse } from '../../../src/query/frames/encode.ts';
import { responseSteps, TooManySeries } from '../../../src/query/kinds/prometheus/frames.ts';
import { parsePrometheusQuery, type PrometheusQuery } from '../../../src/query/kinds/prometheus/model.ts';
import { chunkDocuments, resultLayout, withoutResult } from '../../../src/query/kinds/result-chunks.ts';
import { drain } from '../../../src/query/slices.ts';

// A large Prometheus answer is read a chunk of series at a time: the same response as read in one
// pass, whatever the chunk size, for every document; documents whose layout is not simply found
// are read in one pass.

const q = parsePrometheusQuery({
  refId: 'A', queryType: '', intervalMs: 15_000, maxDataPoints: 100, range: { from: 1_700_000_000_000, to: 1_700_000_300_000 },
  model: { expr: 'up', legendFormat: '{{job}}' },
}, '') as PrometheusQuery;

const limits = { maxPoints: 1e9, maxSeries: 1e9 };
const whole = (body: string) => encodeResponse(drain(responseSteps(q, 200, Buffer.from(body), limits, { from: Infinity, series: 0, always: Infinity, bytes: 0 })));
const chunked = (body: string, bytes: number) => encodeResponse(drain(responseSteps(q, 200, Buffer.from(body), limits, { from: 0, series: 0, always: 0, bytes })));

const matrix = (n: number) => JSON.stringify({
  status: 'success',
  data: {
    resultType: 'matrix',
    result: Array.from({ length: n }, (_, i) => ({ metric: { __name__: 'up', job: `j${i}`, odd: 'a "quoted" ] } , [ {' }, values: [[1_700_000_000 + i, `${i}.5`], [1_700_000_015, 'NaN']] })),
  },
});

describe('resultLayout', () => {
  it('finds the result type and each element, whatever the whitespace and members around them', () => {
    const body = Buffer.from(' { "status" : "success" , "data" : { "resultType" : "vector" , "result" : [ {"a":1} , {"b":"]"} ] , "stats": {} }, "warnings": ["w"] } ');
    const layout = resultLayout(body)!;
    expect(body.toString('latin1', ...layout.resultType)).toBe('"vector"');
    expect(layout.elements.map(([s, e]) => body.toString('latin1', s, e))).toEqual(['{"a":1}', '{"b":"]"}']);
    expect(withoutResult(body, layout).toString()).toBe(' { "status" : "success" , "data" : { "resultType" : "vector" , "result" : [] , "stats": {} }, "warnings": ["w"] } ');
    const chunks = [...chunkDocuments(body, layout, 1)].map(String);
    expect(chunks).toEqual(['{"data":{"resultType":"vector","result":[{"a":1}]}}', '{"data":{"resultType":"vector","result":[{"b":"]"}]}}']);
  });

  it.each([
    ['a result before its type', '{"data":{"result":[],"resultType":"vector"}}'],
    ['two results', '{"data":{"resultType":"vector","result":[],"result":[]}}'],
    ['two data members', '{"data":{"resultType":"vector","result":[]},"data":{}}'],
    ['an escaped key', '{"d\\u0061ta":{"resultType":"vector","result":[]}}'],
    ['a result that is no array', '{"data":{"resultType":"vector","result":{}}}'],
    ['an unterminated string', '{"data":{"resultType":"vector","result":["]}}'],
    ['no data', '{"status":"success"}'],
    ['not an object', '[1,2]'],
  ])('answers null for %s', (_name, body) => {
    expect(resultLayout(Buffer.from(body))).toBeNull();
  });
});

describe('a response read in chunks', () => {
  it.each([
    ['a matrix of 40 series, chunks of one series', matrix(40), 1],
    ['a matrix of 40 series, chunks of about 1 KB', matrix(40), 1000],
    ['a vector with warnings and infos after the data', '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"a"},"value":[1700000000,"1"]},{"metric":{"job":"b"},"value":[1700000000,"+Inf"]}]},"warnings":["w1"],"infos":["i1"]}', 10],
    ['an empty result', '{"status":"success","data":{"resultType":"matrix","result":[]}}', 10],
    ['an error document', '{"status":"error","errorType":"bad_data","error":"parse error"}', 10],
    ['a scalar', '{"status":"success","data":{"resultType":"scalar","result":[1700000000,"2"]}}', 1],
    ['a result before its type (read at once, by JSON.parse)', '{"status":"success","data":{"result":[{"metric":{"job":"a"},"value":[1700000000,"1"]}],"resultType":"vector"}}', 1],
    ['trailing garbage', `${matrix(3)}x`, 1],
    ['a malformed series in the second chunk', matrix(2).replace('"j1"', 'j1'), 1],
    ['a sample value of another shape', matrix(3).replace('"2.5"', '2.5'), 1],
  ])('%s: the same response', (_name, body, bytes) => {
    expect(chunked(body, bytes)).toBe(whole(body));
  });

  it('stops reading past the series budget', () => {
    const read = () => drain(responseSteps(q, 200, Buffer.from(matrix(50)), { maxPoints: 1e9, maxSeries: 10 }, { from: 0, series: 0, always: 0, bytes: 300 }));
    expect(read).toThrow(TooManySeries);
  });

  it('reads any answer of plain series alike in chunks of any size (property)', () => {
    const label = fc.string({ unit: fc.constantFrom('a', '"', '\\', ']', '[', '{', '}', ',', ' ', 'é', '\u2028', '0') });
    const series = fc.record({
      metric: fc.dictionary(fc.constantFrom('__name__', 'job', 'le', 'x y'), label, { maxKeys: 3 }),
      values: fc.array(fc.tuple(fc.integer({ min: 1_600_000_000, max: 1_800_000_000 }), fc.constantFrom('1', '0.5', '-2e-7', 'NaN', '+Inf', '1e21', '007')), { maxLength: 4 }),
    });
    fc.assert(fc.property(fc.array(series, { maxLength: 12 }), fc.integer({ min: 1, max: 400 }), fc.boolean(), (result, bytes, spaced) => {
      const body = JSON.stringify({ status: 'success', data: { resultType: 'matrix', result } }, null, spaced ? 1 : undefined);
      expect(chunked(body, bytes)).toBe(whole(body));
    }), { numRuns: 200 });
  });
});
