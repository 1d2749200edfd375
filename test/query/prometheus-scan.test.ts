import { describe, expect, it } from '@jest/globals';
import { parseSampleValue, scanPrometheus, type ScannedDocument } from '../../src/query/kinds/prometheus-scan.ts';

// The byte reader against the general path it stands in for: JSON.parse, then each sample's time
// as time.UnixMilli(int64(f*1000)) and its value as strconv.ParseFloat.

type Sample = [number, string];

function reference(text: string): ScannedDocument {
  const doc = JSON.parse(text) as { status?: string; errorType?: string; error?: string; warnings?: unknown[]; infos?: unknown[]; data?: { resultType?: string; result?: Array<{ metric?: Record<string, string>; values?: Sample[]; value?: Sample }> } };
  const matrix = doc.data?.resultType === 'matrix';
  const out: ScannedDocument = { series: [] };
  for (const key of ['status', 'errorType', 'error', 'warnings', 'infos'] as const) if (doc[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = doc[key];
  if (doc.data?.resultType !== undefined) out.resultType = doc.data.resultType;
  for (const series of doc.data?.result ?? []) {
    const samples = matrix ? (series.values ?? []) : series.value ? [series.value] : [];
    out.series.push({ metric: series.metric ?? {}, times: samples.map(([t]) => Math.trunc(t * 1000)), values: samples.map(([, v]) => parseSampleValue(v)) });
  }
  return out;
}

/** Equal as `Object.is` per sample (NaN equals NaN, -0 differs from 0). */
function expectSame(actual: ScannedDocument | null, expected: ScannedDocument): void {
  expect(actual).not.toBeNull();
  expect({ ...actual!, series: actual!.series.map((s) => s.metric) }).toEqual({ ...expected, series: expected.series.map((s) => s.metric) });
  actual!.series.forEach((series, i) => {
    const want = expected.series[i]!;
    expect(series.times).toEqual(want.times);
    expect(series.values.length).toBe(want.values.length);
    series.values.forEach((v, j) => {
      if (!Object.is(v, want.values[j])) throw new Error(`series ${i} sample ${j}: ${v} read, ${want.values[j]} expected`);
    });
  });
}

const matrix = (values: string, extra = '') => `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","job":"a\\"b"},"values":[${values}]}]}${extra}}`;

describe('scanPrometheus', () => {
  it.each([
    ['a matrix', matrix('[1700000000,"1"],[1700000015,"2.5"]')],
    ['fractional seconds', matrix('[1700000000.123,"1"],[1700000000.5,"2"],[1e9,"3"],[0.001,"4"]')],
    ['every value form', matrix(['"0"', '"-0"', '"0.1"', '"-12.75"', '"NaN"', '"+Inf"', '"-Inf"', '"1e-07"', '"1.5e+21"', '"123456789012345"',
      '"1234567890123456"', '"0.30000000000000004"', '"00012"', '".5"', '"5."', '"0.0000000000000000000001"', '"-"', '""', '"1.2.3"', '"9007199254740993"']
      .map((v, i) => `[${1700000000 + i},${v}]`).join(','))],
    ['a vector', '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000.25,"7"]},{"metric":{"a":"b"}}]}}'],
    ['whitespace and unknown members anywhere', ' {\n "status" : "success" , "extra": {"x":[1,{"y":"]"}]}, "data" : { "x": null, "resultType":"matrix", "result" : [ { "histograms": [[1, {"count": "2"}]], "metric" : { "a" : "\\u00e9" } , "values" : [ [ 1700000000 , "1" ] ] } ] } , "warnings" : ["w1"], "infos": ["i1"] } '],
    ['an empty result', '{"status":"success","data":{"resultType":"matrix","result":[]}}'],
    ['an error document', '{"status":"error","errorType":"bad_data","error":"parse error at char 3"}'],
    ['warnings before data', '{"status":"success","warnings":["too many samples"],"data":{"resultType":"vector","result":[]}}'],
  ])('reads %s as the general path does', (_name, text) => {
    expectSame(scanPrometheus(Buffer.from(text)), reference(text));
  });

  it.each([
    ['a scalar', '{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}'],
    ['the result before its type', '{"status":"success","data":{"result":[],"resultType":"matrix"}}'],
    ['a trailing comma', matrix('[1700000000,"1"],')],
    ['a value that is not a string', matrix('[1700000000,1]')],
    ['a time that is not a JSON number', matrix('[01,"1"]')],
    ['a member without a value', '{"status":,"data":{}}'],
    ['a truncated document', matrix('[1700000000,"1"]').slice(0, -3)],
    ['text after the document', `${matrix('')} x`],
    ['not an object', '[]'],
  ])('leaves %s to the general path', (_name, text) => {
    expect(scanPrometheus(Buffer.from(text))).toBeNull();
  });

  it('reads 20,000 random decimals to the double Number() finds', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const texts = Array.from({ length: 20_000 }, () => {
      const digits = String(Math.floor(random() * 1e15)).slice(0, 1 + Math.floor(random() * 17));
      const point = Math.floor(random() * (digits.length + 8)) - 4;
      const text = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits : `${digits.slice(0, point)}.${digits.slice(point)}`;
      return random() < 0.3 ? `-${text}` : text;
    });
    const text = matrix(texts.map((v, i) => `[${1700000000 + i},"${v}"]`).join(','));
    expectSame(scanPrometheus(Buffer.from(text)), reference(text));
  });
});
