import { describe, expect, it } from '@jest/globals';
import { scanInflux, type ScannedInflux } from '../../../../src/query/kinds/influxdb/scan.ts';

// The byte reader against JSON.parse of the same answer, its first result's series as columns,
// each row's first value read as the original reads a time: json.Number.Int64() of its literal.

const INT64 = /^-?[0-9]+$/;

function reference(text: string): ScannedInflux {
  const literals = new WeakMap<object, string>();
  const doc = JSON.parse(text, function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
    if (key === '0' && typeof value === 'number' && Array.isArray(this)) literals.set(this, context!.source!);
    return value;
  } as (key: string, value: unknown) => unknown) as { error?: string; results?: Array<{ error?: string; series?: Array<{ name?: string; tags?: Record<string, string>; columns: string[]; values?: unknown[][] }> }> };
  const first = doc.results?.[0];
  const out: ScannedInflux = { hasResult: first !== undefined, series: [] };
  if (doc.error !== undefined) out.error = doc.error;
  if (first?.error !== undefined) out.resultError = first.error;
  const time = (row: unknown[]) => {
    const literal = literals.get(row);
    if (literal === undefined || !INT64.test(literal)) return null;
    const exact = BigInt(literal);
    return exact >= -(2n ** 63n) && exact < 2n ** 63n ? Number(literal) : null;
  };
  for (const s of first?.series ?? []) {
    const values = s.values ?? [];
    out.series.push({
      name: s.name ?? '', tags: { ...(s.tags ?? {}) }, columns: s.columns, rows: values.length,
      cols: s.columns.map((_, k) => values.map((row) => row[k])), times: values.map(time),
    });
  }
  return out;
}

function expectSame(text: string): void {
  const scanned = scanInflux(Buffer.from(text));
  expect(scanned).not.toBeNull();
  const want = reference(text);
  const plain = (list: ScannedInflux['series']) => list.map(({ cols, tags, ...rest }) => ({ ...rest, tags: { ...tags } }));
  expect({ ...scanned!, series: plain(scanned!.series) }).toEqual({ ...want, series: plain(want.series) });
  scanned!.series.forEach((series, s) => series.cols.forEach((col, k) => col.forEach((v, i) => {
    const expected = want.series[s]!.cols[k]![i];
    if (!Object.is(v, expected)) throw new Error(`series ${s} column ${k} row ${i}: ${String(v)} read, ${String(expected)} expected`);
  })));
}

const series = (rows: string, extra = '') => `{"results":[{"statement_id":0,"series":[{"name":"cpu","tags":{"host":"a\\"b"},"columns":["time","mean","msg","ok"],"values":[${rows}]${extra}}]}]}`;

describe('scanInflux', () => {
  it.each([
    ['numbers, strings, booleans and nulls', series('[1700000000000,1.5,"hi",true],[1700000015000,null,"\\u00e9<",false],[1700000030000,-0,null,null]')],
    ['every number form', series(['0', '-0', '0.1', '-12.75', '1e-7', '1.5E+21', '123456789012345', '1234567890123456', '0.30000000000000004', '9007199254740993', '-1.0']
      .map((v, i) => `[${1700000000000 + i},${v},"x",true]`).join(','))],
    ['invalid times kept as read', series('[1.5,1,"a",true],["t",2,"b",false],[1e3,3,"c",true],[1.0,4,"d",true],[9223372036854775807,5,"e",true],[9223372036854775808,6,"f",true],[-0,7,"g",true]')],
    ['a series without a time column', '{"results":[{"series":[{"name":"measurements","columns":["name"],"values":[["cpu"]]}]}]}'],
    ['null tags', series('', ',"x":1').replace('{"host":"a\\"b"}', 'null')],
    ['whitespace, statement ids, partial flags and later results', ' { "results" : [ { "statement_id" : 0 , "series" : [ { "name" : "m" , "columns" : [ "time" , "v" ] , "values" : [ [ 1 , 2 ] ] , "partial" : true } ] , "messages": [{"level":"warning","text":"x"}] } , { "statement_id": 1, "series": [] } ] } '],
    ['no series', '{"results":[{"statement_id":0}]}'],
    ['null series and values', '{"results":[{"series":null}]}'],
    ['an error', '{"results":[{"statement_id":0,"error":"database not found: nope"}]}'],
    ['a top-level error', '{"error":"top level"}'],
    ['no results', '{"results":[]}'],
  ])('reads %s as JSON.parse does', (_name, text) => expectSame(text));

  it.each([
    ['a row shorter than the columns', series('[1700000000000,1.5,"hi"]')],
    ['a row longer than the columns', series('[1700000000000,1.5,"hi",true,1]')],
    ['values before columns', '{"results":[{"series":[{"values":[[1,2]],"columns":["time","v"]}]}]}'],
    ['a number JSON refuses', series('[01,1,"a",true]')],
    ['a truncated answer', series('[1,1,"a",true]').slice(0, -4)],
    ['results that are not an array', '{"results":{}}'],
  ])('leaves %s to the general parse', (_name, text) => {
    expect(scanInflux(Buffer.from(text))).toBeNull();
  });

  it('reads 20,000 random decimals to the double Number() finds', () => {
    let seed = 11;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const rows = Array.from({ length: 20_000 }, (_, i) => {
      const digits = String(Math.floor(random() * 1e15)).slice(0, 1 + Math.floor(random() * 17)).replace(/^0+(?=\d)/, '');
      const point = Math.floor(random() * (digits.length + 6)) - 3;
      const text = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits : `${digits.slice(0, point)}.${digits.slice(point)}`;
      return `[${1700000000000 + i},${random() < 0.3 ? '-' : ''}${text},"s",true]`;
    });
    expectSame(series(rows.join(',')));
  });
});
