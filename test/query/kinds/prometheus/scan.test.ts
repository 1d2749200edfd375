import { describe, expect, it } from '@jest/globals';
import { encodeFrame, goFloat } from '../../../../src/query/frames/encode.ts';
import { writtenField, type Field } from '../../../../src/query/frames/frame.ts';
import { parseSampleValue, scanPrometheus, writtenAsIs, type ScannedDocument, type ScannedSeries } from '../../../../src/query/kinds/prometheus/scan.ts';

// The byte reader against the general path it stands in for: JSON.parse, then each sample's time
// as time.UnixMilli(int64(f*1000)) and its value as strconv.ParseFloat, written by the frame
// encoder. A matrix's columns are written as the reader goes; they must be the encoder's bytes.

type Sample = [number, string];

function reference(text: string): ScannedDocument {
  const doc = JSON.parse(text) as { status?: string; errorType?: string; error?: string; warnings?: unknown[]; infos?: unknown[]; data?: { resultType?: string; result?: Array<{ metric?: Record<string, string>; values?: Sample[]; value?: Sample }> } };
  const matrix = doc.data?.resultType === 'matrix';
  const out: ScannedDocument = { series: [] };
  for (const key of ['status', 'errorType', 'error', 'warnings', 'infos'] as const) if (doc[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = doc[key];
  if (doc.data?.resultType !== undefined) out.resultType = doc.data.resultType;
  for (const series of doc.data?.result ?? []) {
    const samples = matrix ? (series.values ?? []) : series.value ? [series.value] : [];
    out.series.push({ metric: series.metric ?? {}, time: samples.map(([t]) => Math.trunc(t * 1000)), value: samples.map(([, v]) => parseSampleValue(v)) });
  }
  return out;
}

/** A series as the frame's two fields, whichever way its samples were read. */
function fieldsOf(series: ScannedSeries): Field[] {
  return [
    Array.isArray(series.time) ? { name: 'Time', type: 'time.Time', values: series.time } : writtenField('Time', 'time.Time', series.time),
    Array.isArray(series.value) ? { name: 'Value', type: 'float64', values: series.value } : writtenField('Value', 'float64', series.value),
  ];
}

/**
 * The same frames as the encoder writes from the reference's numbers, and the same numbers read
 * back from them (`Object.is`, so NaN equals NaN; -0 is written as 0, as the encoder writes it).
 */
function expectSame(actual: ScannedDocument | null, expected: ScannedDocument): void {
  expect(actual).not.toBeNull();
  expect({ ...actual!, series: actual!.series.map((s) => s.metric) }).toEqual({ ...expected, series: expected.series.map((s) => s.metric) });
  actual!.series.forEach((series, i) => {
    const want = expected.series[i]!;
    expect(encodeFrame({ fields: fieldsOf(series) })).toBe(encodeFrame({ fields: fieldsOf(want) }));
    const [time, value] = fieldsOf(series);
    expect(time!.values).toEqual(want.time);
    expect(value!.values.length).toBe((want.value as number[]).length);
    value!.values.forEach((v, j) => {
      const w = (want.value as number[])[j]!;
      if (!Object.is(v, Object.is(w, -0) ? 0 : w)) throw new Error(`series ${i} sample ${j}: ${String(v)} read, ${w} expected`);
    });
  });
}

const matrix = (values: string, extra = '') => `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","job":"a\\"b"},"values":[${values}]}]}${extra}}`;

describe('scanPrometheus', () => {
  it.each([
    ['a matrix', matrix('[1700000000,"1"],[1700000015,"2.5"]')],
    ['fractional seconds', matrix('[1700000000.123,"1"],[1700000000.5,"2"],[1e9,"3"],[0.001,"4"]')],
    ['times of every form', matrix(['0', '7', '-3', '1700000000', '999999999999', '1000000000000', '12345678901234', '1.7e9', '-0.5', '1700000000.0']
      .map((t) => `[${t},"1"]`).join(','))],
    ['series that share their times and series that do not', `{"status":"success","data":{"resultType":"matrix","result":[${
      ['[1,"1"],[2,"2"]', '[1,"3"],[2,"NaN"]', '[1,"5"]', '[1,"+Inf"],[3,"-Inf"]', '', '[1,"1"],[3,"2"]']
        .map((values, i) => `{"metric":{"i":"${i}"},"values":[${values}]}`).join(',')}]}}`],
    ['a series without samples', '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"}}]}}'],
    ['every value form', matrix(['"0"', '"-0"', '"0.1"', '"-12.75"', '"NaN"', '"+Inf"', '"-Inf"', '"1e-07"', '"1.5e+21"', '"123456789012345"',
      '"1234567890123456"', '"0.30000000000000004"', '"00012"', '".5"', '"5."', '"0.0000000000000000000001"', '"9007199254740993"', '"0x1p-2"', '"1_000"', '"inf"']
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

  it.each(['"-"', '""', '" 12 "', '"0x10"', '"0b11"', '"1.2.3"', '"1e400"'])('refuses the value %s as strconv.ParseFloat does', (value) => {
    expect(() => scanPrometheus(Buffer.from(matrix(`[1700000000,${value}]`)))).toThrow(/^strconv\.ParseFloat: parsing .*: (invalid syntax|value out of range)$/);
  });

  it('shares one time column between series whose times are the same', () => {
    const doc = scanPrometheus(Buffer.from('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"],[2,"2"]]},{"metric":{},"values":[[1,"3"],[2,"4"]]},{"metric":{},"values":[[1,"3"],[3,"4"]]}]}}'))!;
    expect(doc.series[1]!.time).toBe(doc.series[0]!.time);
    expect(doc.series[2]!.time).not.toBe(doc.series[0]!.time);
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

describe('writtenAsIs', () => {
  // The oracle: the text is what the encoder writes for the double it reads as.
  const oracle = (text: string) => {
    const value = Number(text);
    return text !== '' && Number.isFinite(value) && goFloat(value) === text;
  };

  it.each([
    ['0', true], ['-0', false], ['7', true], ['-12.75', true], ['0.1', true], ['0.000001', true], ['0.0000001', false],
    ['1.50', false], ['01', false], ['.5', false], ['5.', false], ['1e3', false], ['123456789012345', true],
    ['1234567890123456', false], ['0.30000000000000004', false], ['NaN', false], ['+1', false], ['', false], ['-', false],
  ])('%s: %s', (text, expected) => {
    expect(writtenAsIs(Buffer.from(text), 0, text.length)).toBe(expected);
    // Never a text the encoder would write otherwise.
    if (expected) expect(oracle(text)).toBe(true);
  });

  it('copies only texts the encoder writes the same, over 50,000 random decimals', () => {
    let seed = 11;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let copied = 0;
    for (let n = 0; n < 50_000; n++) {
      const value = random() < 0.5 ? Math.round(random() * 10 ** Math.floor(random() * 12)) / 10 ** Math.floor(random() * 9) : random() * 10 ** (Math.floor(random() * 30) - 10);
      // Shortest forms, and the longer ones other servers write (`%.17g`) that read as a shorter double.
      const digits = random() < 0.4 ? value.toPrecision(16 + Math.floor(random() * 2)).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '') : String(value);
      const text = random() < 0.2 ? `-${digits}` : digits;
      const asIs = writtenAsIs(Buffer.from(text), 0, text.length);
      if (asIs && !oracle(text)) throw new Error(`${text} copied, but written as ${goFloat(Number(text))}`);
      if (asIs) copied++;
    }
    // Most plain decimals take the copy.
    expect(copied).toBeGreaterThan(20_000);
  });
});
