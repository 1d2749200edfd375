import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeResults } from '../../../../src/query/frames/encode.ts';
import type { Frame } from '../../../../src/query/frames/frame.ts';
import { goQuote } from '../../../../src/query/go-text.ts';
import { influxFrameName, influxFrames, influxFramesSteps } from '../../../../src/query/kinds/influxdb/frames.ts';
import { drain } from '../../../../src/query/slices.ts';
import { parseInfluxQuery } from '../../../../src/query/kinds/influxdb/influxql.ts';
import { jsonText, labels, members, raw, sometimes, spacingOf } from '../../../support/hostile-json.ts';

// Random and hostile InfluxDB answers through the kind (byte reader, else its general reading)
// and through a plain reference: JSON.parse keeping each row's first literal, decoded as the
// original's models.Response types it, framed as buffered/response_parser.go frames time series.

class Refused extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, what: string) => {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') throw new Refused(`${what} is not a string`);
  return v;
};

interface RefFrame { name: string; labels: Array<[string, string]>; times: unknown[]; values: unknown[] }

const q = parseInfluxQuery('A', { query: 'SELECT mean(v) FROM m', rawQuery: true, resultFormat: 'time_series' }, 1000);

function reference(text: string): { error: string } | { frames: RefFrame[] } {
  const firsts = new WeakMap<object, string>();
  let doc: unknown;
  try {
    doc = JSON.parse(text, function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
      if (key === '0' && typeof value === 'number' && Array.isArray(this)) firsts.set(this, context!.source!);
      return value;
    } as (key: string, value: unknown) => unknown);
  } catch {
    return { error: 'failed to parse the InfluxDB response: invalid JSON' };
  }
  try {
    if (!isObject(doc)) throw new Refused('not an object');
    // Decoded member by member in document order; the first refusal met is the answer's.
    let error = '';
    let first: Record<string, unknown> | null | undefined;
    let resultError = '';
    const decoded: Decoded[] = [];
    for (const [key, value] of Object.entries(doc)) {
      if (key === 'error') error = str(value, 'error');
      else if (key === 'results' && value !== null) {
        if (!Array.isArray(value)) throw new Refused('results are not a list');
        if (value.length === 0) continue;
        first = value[0] as Record<string, unknown> | null;
        if (first !== null && !isObject(first)) throw new Refused('a result is not an object');
        for (const [k, v] of Object.entries(first ?? {})) {
          if (k === 'error') resultError = str(v, 'error');
          else if (k === 'series' && v !== null) {
            if (!Array.isArray(v)) throw new Refused('series are not a list');
            for (const s of v) decoded.push(decodeSeries(s, firsts));
          }
        }
      }
    }
    if (error) return { error };
    if (first === undefined) return { error: 'failed to parse the InfluxDB response: no results' };
    if (resultError) return { error: resultError };
    return { frames: decoded.flatMap(frame) };
  } catch (error) {
    if (error instanceof Refused) return { error: `failed to parse the InfluxDB response: ${error.message}` };
    throw error;
  }
}

interface Decoded { name: string; tags: Record<string, string>; columns: string[]; rows: unknown[][]; times: Array<number | null> }

function decodeSeries(s: unknown, firsts: WeakMap<object, string>): Decoded {
  const out: Decoded = { name: '', tags: Object.create(null) as Record<string, string>, columns: [], rows: [], times: [] };
  if (s === null) return out;
  if (!isObject(s)) throw new Refused('a series is not an object');
  let values: unknown[] = [];
  for (const [key, v] of Object.entries(s)) {
    if (key === 'name') out.name = str(v, 'a series name');
    else if (key === 'tags' && v !== null) {
      if (!isObject(v)) throw new Refused('series tags are not an object');
      for (const [k, value] of Object.entries(v)) {
        if (value !== null && typeof value !== 'string') throw new Refused(`series tags: the value of ${goQuote(k)} is not a string`);
        out.tags[k] = value ?? '';
      }
    } else if (key === 'columns' && v !== null) {
      if (!Array.isArray(v)) throw new Refused('series columns are not a list');
      out.columns = v.map((c) => str(c, 'a series column'));
    } else if (key === 'values' && v !== null) {
      if (!Array.isArray(v) || v.some((row) => !Array.isArray(row))) throw new Refused('series values are not rows');
      values = v;
    }
  }
  const timed = out.columns.some((c) => c.toLowerCase() === 'time');
  for (const row of values as unknown[][]) {
    if (timed && row.length < out.columns.length) throw new Refused('a series row has fewer values than columns');
    out.rows.push(row);
    const literal = firsts.get(row);
    const int64 = literal !== undefined && /^-?[0-9]+$/.test(literal) && BigInt(literal) >= -(2n ** 63n) && BigInt(literal) < 2n ** 63n;
    out.times.push(int64 ? Number(literal) : null);
  }
  return out;
}

function frame(s: Decoded): RefFrame[] {
  if (!s.columns.some((c) => c.toLowerCase() === 'time')) {
    return [{ name: s.name, labels: [], times: [], values: s.rows.filter((r) => r.length >= 1).map((r) => (typeof r[0] === 'string' ? r[0] : r[0] === null || r[0] === undefined ? '<nil>' : typeof r[0] === 'object' ? JSON.stringify(r[0]) : String(r[0]))) }];
  }
  const kept = s.rows.flatMap((row, i) => (s.times[i] === null ? [] : [{ row, time: s.times[i] }]));
  return s.columns.flatMap((column, col) => {
    if (column === 'time') return [];
    const first = s.rows.map((r) => r[col]).find((v) => v !== null && v !== undefined);
    if (first !== undefined && typeof first === 'object') throw new Refused(`column ${JSON.stringify(column)} holds a value that is not a number, string or boolean`);
    const type = typeof first;
    const values = kept.map(({ row }) => {
      const v = row[col];
      if (type === 'number') return typeof v === 'number' && Number.isFinite(v) ? v : null;
      return typeof v === type ? v : null;
    });
    return [{ name: influxFrameName(s.name, column, s.tags, q), labels: Object.entries(s.tags).sort(), times: kept.map(({ time }) => time), values }];
  });
}

/** The kind's frames, read as they are, or (`piece`) parsed in pieces of that many bytes as a large answer is. */
function actual(text: string, piece?: number): { outcome: { error: string } | { frames: RefFrame[] }; json: string } {
  const result = piece === undefined
    ? influxFrames(200, text, q, 'SELECT mean(v) FROM m')
    : drain(influxFramesSteps(200, Buffer.from(text), q, 'SELECT mean(v) FROM m', { from: 0, pieceBytes: piece }));
  if ('error' in result) return { outcome: result, json: encodeResults(new Map([['A', { error: result.error, errorSource: 'downstream' as const, status: 400 }]])) };
  const frames = result.frames.map((f: Frame): RefFrame => f.fields.length === 1
    ? { name: f.name ?? '', labels: [], times: [], values: f.fields[0]!.values }
    : { name: f.name ?? '', labels: Object.entries(f.fields[1]!.labels ?? {}).sort(), times: f.fields[0]!.values, values: f.fields[1]!.values });
  return { outcome: { frames }, json: encodeResults(new Map([['A', { frames: result.frames }]])) };
}

const cellArb = fc.oneof(
  { weight: 4, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => raw(String(v))) },
  { weight: 2, arbitrary: fc.string({ maxLength: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(true, false, null, raw('1e400'), raw('-1e400'), raw('1.0'), raw('1e3'), raw('-0')) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(members(['a', 1]), [1, [2]]) },
);

const timeArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 2_000_000_000_000 }).map((t) => raw(String(t))) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(raw('1.5'), raw('1e3'), raw('1000.0'), raw('9223372036854775807'), raw('9223372036854775808'), raw('-9223372036854775808'), raw('1e400'), raw('-0'), '2024-01-01T00:00:00Z', null, true) },
);

const seriesArb = fc.record({
  columns: fc.constantFrom(['time', 'v'], ['time', 'v', 'w'], ['v', 'time'], ['name'], ['Time', 'v']),
  rows: fc.array(fc.tuple(timeArb, cellArb, cellArb, fc.boolean(), fc.boolean()), { maxLength: 5 }),
  tags: sometimes(labels, [null, [1], 'x']),
  name: sometimes(fc.constantFrom('cpu', 'mem.used', ''), [null, 5]),
  valuesFirst: fc.boolean(),
}).map(({ columns, rows, tags, name, valuesFirst }) => {
  const values = rows.map(([t, a, b, short, long]) => {
    const row = columns.map((_, i) => (i === 0 ? t : i === 1 ? a : b));
    if (short) row.pop();
    if (long) row.push(raw('7'));
    return row;
  });
  const entries: Array<readonly [string, unknown]> = [['name', name], ['tags', tags], ['columns', columns], ['values', values]];
  if (valuesFirst) entries.reverse();
  return members(...entries);
});

const documentArb = fc.record({
  series: sometimes(fc.array(sometimes(seriesArb, [null, 5]), { maxLength: 3 }), [null, 'x', members()]),
  error: fc.option(sometimes(fc.constantFrom('', 'database not found: x'), [5, null]), { nil: undefined }),
  spacing: fc.nat(),
}).map(({ series, error, spacing }) => {
  const result: Array<readonly [string, unknown]> = [['statement_id', raw('0')], ['series', series]];
  if (error !== undefined) result.push(['error', error]);
  return jsonText(members(['results', [members(...result)]]), spacingOf(spacing));
});

describe('InfluxDB answers: the kind against a JSON.parse reference', () => {
  it('gives the same frames or the same error, and always valid JSON', () => {
    fc.assert(fc.property(documentArb, (text) => {
      const { outcome, json } = actual(text);
      expect(outcome).toEqual(reference(text));
      expect(() => JSON.parse(json)).not.toThrow();
    }), { numRuns: 1500 });
  });

  it('gives the same when the answer is parsed in pieces, as a large one is', () => {
    fc.assert(fc.property(documentArb, fc.integer({ min: 1, max: 40 }), (text, piece) => {
      expect(actual(text, piece)).toEqual(actual(text));
    }), { numRuns: 1500 });
  });
});
