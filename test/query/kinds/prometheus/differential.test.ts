import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeResults } from '../../../../src/query/frames/encode.ts';
import type { DataResponse } from '../../../../src/query/frames/frame.ts';
import { goQuote } from '../../../../src/query/go-text.ts';
import { parseGoFloat } from '../../../../src/query/go-numbers.ts';
import { prometheusResponse } from '../../../../src/query/kinds/prometheus/frames.ts';
import type { PrometheusQuery } from '../../../../src/query/kinds/prometheus/model.ts';
import { jsonText, labels, members, raw, sampleTime, sampleValue, sometimes, spacingOf } from '../../../support/hostile-json.ts';

// Random and hostile Prometheus answers through the kind (byte reader, else its general reading)
// and through a plain reference: JSON.parse, then the answer read member by member with the
// original's rules (jsoniter's types, strconv.ParseFloat, time.UnixMilli(int64(f*1000))). Both
// must give the same series or the same error, and every answer must encode as valid JSON.

type Outcome = { error: string } | { series: Array<{ labels: Array<[string, string]>; times: number[]; values: unknown[] }> };

class Refused extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function reference(text: string): Outcome {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { error: 'failed to parse the Prometheus response: invalid JSON' };
  }
  try {
    return read(doc);
  } catch (error) {
    if (error instanceof Refused || (error as Error).message.startsWith('strconv.')) return { error: `failed to parse the Prometheus response: ${(error as Error).message}` };
    throw error;
  }
}

function read(doc: unknown): Outcome {
  if (!isObject(doc)) throw new Refused('not an object');
  const top: Record<string, string> = {};
  let series: Array<{ labels: Array<[string, string]>; times: number[]; values: unknown[] }> = [];
  for (const [key, v] of Object.entries(doc)) {
    if (key === 'status' || key === 'errorType' || key === 'error') {
      if (v !== null && typeof v !== 'string') throw new Refused(`${key} is not a string`);
      top[key] = v ?? '';
    } else if (key === 'warnings' || key === 'infos') {
      if (Array.isArray(v) && v.some((w) => typeof w !== 'string')) throw new Refused(`${key} are not strings`);
    } else if (key === 'data') series = readData(v);
  }
  if (top.status === 'error') return { error: `${top.errorType ?? ''}: ${top.error ?? ''}` };
  return { series };
}

function readData(data: unknown) {
  const out: Array<{ labels: Array<[string, string]>; times: number[]; values: unknown[] }> = [];
  if (Array.isArray(data)) return out;
  if (!isObject(data)) throw new Refused('expected object type');
  if (data.resultType === undefined) throw new Refused('no resultType found');
  if (typeof data.resultType !== 'string') throw new Refused('resultType is not a string');
  if (!('result' in data)) return out;
  const result = data.result;
  switch (data.resultType) {
    case 'matrix':
    case 'vector':
      if (result === null) return out;
      if (!Array.isArray(result)) throw new Refused('result is not an array');
      for (const s of result) {
        const one = { labels: [] as Array<[string, string]>, times: [] as number[], values: [] as unknown[] };
        out.push(one);
        if (s === null) continue;
        if (!isObject(s)) throw new Refused('a series is not an object');
        const add = (pair: unknown) => {
          const [t, v] = sample(pair, true);
          one.times.push(t);
          one.values.push(v);
        };
        for (const [key, v] of Object.entries(s)) {
          if (key === 'metric') one.labels = labelsOf(v);
          else if (key === 'value') add(v);
          else if (key === 'values' && v !== null) {
            if (!Array.isArray(v)) throw new Refused('values is not an array');
            v.forEach(add);
          }
        }
      }
      return out;
    case 'scalar':
    case 'string': {
      const [t, v] = sample(result, data.resultType === 'scalar');
      return [{ labels: [], times: [t], values: [v] }];
    }
    case 'streams':
      return out;
    default:
      throw new Refused(`unknown result type: ${data.resultType}`);
  }
}

function labelsOf(v: unknown): Array<[string, string]> {
  if (v === null || v === undefined) return [];
  if (!isObject(v)) throw new Refused('series labels are not an object');
  return Object.entries(v).map(([k, value]) => {
    if (value !== null && typeof value !== 'string') throw new Refused(`series labels: the value of ${goQuote(k)} is not a string`);
    return [k, value ?? ''];
  });
}

// jsoniter's order: the time (a number that fits), the text, the closing bracket, then ParseFloat.
function sample(pair: unknown, numeric: boolean): [number, unknown] {
  if (!Array.isArray(pair) || typeof pair[0] !== 'number') throw new Refused('a sample is not [<time>, "<value>"]');
  const ms = Math.trunc(pair[0] * 1000);
  if (!Number.isFinite(pair[0]) || !(Math.abs(ms) < 2 ** 63)) throw new Refused('a sample time is out of range');
  if (typeof pair[1] !== 'string' || pair.length !== 2) throw new Refused('a sample is not [<time>, "<value>"]');
  return [ms, numeric ? parseGoFloat(pair[1]) : pair[1]];
}

const q: PrometheusQuery = {
  refId: 'A', expr: 'up', legendFormat: '{{constructor}}{{job}}', range: true, instant: false, start: 0, end: 1, stepMs: 15000, intervalMs: 15000,
} as unknown as PrometheusQuery;

const zero = (v: unknown) => (Object.is(v, -0) ? 0 : v);

function actual(text: string): { outcome: Outcome; response: DataResponse } {
  const response = prometheusResponse(q, 200, Buffer.from(text), 1e9);
  if (response.error !== undefined) return { outcome: { error: response.error }, response };
  const series = (response.frames ?? []).filter((f) => f.fields.length >= 2).map((f) => ({
    labels: Object.entries(f.fields[1]!.labels ?? {}),
    times: f.fields[0]!.values as number[],
    values: f.fields[1]!.values,
  }));
  return { outcome: { series }, response };
}

function normalized(outcome: Outcome): unknown {
  if ('error' in outcome) return outcome;
  return outcome.series.map((s) => ({
    labels: [...s.labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    times: s.times.map(zero),
    values: s.values.map((v) => (typeof v === 'number' && Number.isNaN(v) ? 'NaN' : zero(v))),
  }));
}

const sampleArb = sometimes(fc.tuple(sampleTime, sampleValue), [null, 'abcdefghij', [raw('1')], [raw('1'), '1', 3], members(), [raw('1'), raw('1')]]);

const seriesArb = (matrix: boolean) => fc.record({
  metric: sometimes(labels, [null, 'x', [1], raw('1')]),
  samples: matrix ? sometimes(fc.array(sampleArb, { maxLength: 6 }), ['abcdefghij', null, members()]) : sampleArb,
  extra: fc.boolean(),
  samplesFirst: fc.boolean(),
}).map(({ metric, samples, extra, samplesFirst }) => {
  const entries: Array<readonly [string, unknown]> = [['metric', metric], [matrix ? 'values' : 'value', samples]];
  if (samplesFirst) entries.reverse();
  if (extra) entries.push(['histograms', [[raw('1'), members(['count', '2'])]]]);
  return members(...entries);
});

const resultArb = fc.constantFrom('matrix', 'vector', 'scalar', 'string', 'weird', undefined).chain((type) => {
  const result = type === 'matrix' || type === 'vector'
    ? sometimes(fc.array(sometimes(seriesArb(type === 'matrix'), [null, 'x', 5]), { maxLength: 4 }), [null, 'abcdefghij', members()])
    : type === 'scalar' || type === 'string' ? sampleArb : fc.constant([]);
  return fc.tuple(fc.constant(type), result, fc.boolean());
});

const documentArb = fc.record({
  result: resultArb,
  status: fc.constantFrom<unknown>('success', 'success', 'success', 'error', null, 5),
  warnings: fc.option(sometimes(fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 }), [[1], 'w', [null]]), { nil: undefined }),
  spacing: fc.nat(),
}).map(({ result: [type, result, typeFirst], status, warnings, spacing }) => {
  const data: Array<readonly [string, unknown]> = [];
  if (type !== undefined) data.push(['resultType', type]);
  data.push(['result', result]);
  if (!typeFirst) data.reverse();
  const top: Array<readonly [string, unknown]> = [['status', status], ['data', members(...data)]];
  if (status === 'error') top.push(['errorType', 'bad_data'], ['error', 'parse error']);
  if (warnings !== undefined) top.push(['warnings', warnings]);
  return jsonText(members(...top), spacingOf(spacing));
});

describe('Prometheus answers: the kind against a JSON.parse reference', () => {
  it('gives the same series or the same error, and always valid JSON', () => {
    fc.assert(fc.property(documentArb, (text) => {
      const { outcome, response } = actual(text);
      expect(normalized(outcome)).toEqual(normalized(reference(text)));
      expect(() => JSON.parse(encodeResults(new Map([['A', response]])))).not.toThrow();
    }), { numRuns: 1500 });
  });

  it('holds for answers cut short: an error, never an exception or invalid JSON', () => {
    fc.assert(fc.property(documentArb, fc.double({ min: 0, max: 1, noNaN: true }), (text, at) => {
      const cut = text.slice(0, Math.floor(text.length * at));
      const { outcome, response } = actual(cut);
      if (reference(cut).hasOwnProperty('error')) expect(outcome).toHaveProperty('error');
      expect(() => JSON.parse(encodeResults(new Map([['A', response]])))).not.toThrow();
    }), { numRuns: 500 });
  });

  it.each([
    ['a time of 1e400', '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1e400,"1"]]}]}}', 'failed to parse the Prometheus response: a sample time is out of range'],
    ['a scalar [1e400, "abc"]', '{"status":"success","data":{"resultType":"scalar","result":[1e400,"abc"]}}', 'failed to parse the Prometheus response: a sample time is out of range'],
    ['"values":"abcdefghij"', '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":"abcdefghij"}]}}', 'failed to parse the Prometheus response: values is not an array'],
    ['a sample ""', '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,""]}]}}', 'failed to parse the Prometheus response: strconv.ParseFloat: parsing "": invalid syntax'],
    ['a sample " 12 "', '{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1," 12 "]]}]}}', 'failed to parse the Prometheus response: strconv.ParseFloat: parsing " 12 ": invalid syntax'],
    ['a sample "0x10"', '{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,"0x10"]]}]}}', 'failed to parse the Prometheus response: strconv.ParseFloat: parsing "0x10": invalid syntax'],
    ['a sample "0b11"', '{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,"0b11"]]}]}}', 'failed to parse the Prometheus response: strconv.ParseFloat: parsing "0b11": invalid syntax'],
    ['a sample null', '{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,null]]}]}}', 'failed to parse the Prometheus response: a sample is not [<time>, "<value>"]'],
    ['a sample true', '{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,true]]}]}}', 'failed to parse the Prometheus response: a sample is not [<time>, "<value>"]'],
    ['a numeric label', '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":5},"values":[[1,"1"]]}]}}', 'failed to parse the Prometheus response: series labels: the value of "job" is not a string'],
    ['an object label', '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":{"a":1}},"value":[1,"1"]}]}}', 'failed to parse the Prometheus response: series labels: the value of "job" is not a string'],
  ])('refuses %s with a clear error', (_name, text, message) => {
    expect(actual(text).outcome).toEqual({ error: message });
  });

  it('reads own labels only into legends, and keeps __proto__ labels', () => {
    const { response } = actual('{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__proto__":"p","job":"j"},"value":[1,"1"]}]}}');
    const field = response.frames![0]!.fields[1]!;
    expect(field.config?.displayNameFromDS).toBe('j');
    expect(JSON.parse(encodeResults(new Map([['A', response]]))).results.A.frames[0].schema.fields[1].labels).toEqual(JSON.parse('{"__proto__":"p","job":"j"}'));
  });
});
