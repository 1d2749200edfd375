import type { Field, FieldType, Frame } from '../../frames/frame.ts';
import { formatInterval } from '../../durations.ts';
import { compareGoStrings } from '../../frames/encode.ts';
import { sortedLabels } from '../../go-text.ts';
import type { InfluxQuery } from './influxql.ts';
import { int64Literal, readColumns, scanInflux, stringMember, type ScannedInflux, type SeriesColumns } from './scan.ts';
import { AnswerError, checkDepth } from '../../answer-error.ts';
import { readLabels } from '../../labels.ts';
import { PIECE_BYTES, parseJsonSteps } from '../../json-sliced.ts';
import { drain, type Steps } from '../../slices.ts';

/**
 * InfluxDB 1.x `/query` answers as the original's frames (`influxql/buffered/response_parser.go`,
 * `influxql/util/util.go`): time series (one frame per series and column), table, and `SHOW ...`
 * results without a time column. Numbers are JSON numbers as `json.Number` holds them: one that
 * overflows a double is null, as the original's `ParseNumber` makes it; a row's time is its first
 * value when that is an integer literal within int64, else the row is left out. A series the
 * original cannot turn into frames (it panics: rows shorter than the columns, a column of objects)
 * fails the refId with a clear error. Pure.
 */

/** Names the series' frames: the alias with its variables, else `measurement.column { tag: v, ... }`. */
export function influxFrameName(rowName: string, column: string, tags: Readonly<Record<string, string>>, q: Pick<InfluxQuery, 'alias' | 'resultFormat' | 'intervalMs'>): string {
  if (q.alias === '') {
    let name = q.resultFormat !== 'table' ? `${rowName}.${column}` : column;
    // Go walks the tag map in random order; sorted keys make the name stable.
    const keys = Object.keys(tags).sort(compareGoStrings);
    if (keys.length > 0) name += ` { ${keys.map((k) => `${k}: ${tags[k]}`).join(', ')} }`;
    return name;
  }
  const segments = rowName.split('.');
  return q.alias.replace(/\$(\w+)|\[\[([\s\S]+?)\]\]/g, (whole: string) => {
    const format = whole.replace('[[', '').replace(']]', '').replace('$', '');
    if (format === 'm' || format === 'measurement') return rowName;
    if (format === 'col') return column;
    if (format === '__interval') return formatInterval(q.intervalMs);
    if (format === '__interval_ms') return String(Math.trunc(q.intervalMs));
    if (/^[+-]?\d+$/.test(format)) {
      const pos = Number(format);
      if (pos >= 0 && segments.length > pos) return segments[pos];
    }
    if (!format.startsWith('tag_')) return whole;
    const key = format.replace('tag_', '');
    return Object.hasOwn(tags, key) ? tags[key] : whole;
  });
}


const FIELD_TYPES: Record<string, FieldType> = { string: 'string', number: 'float64', bool: 'bool', null: 'float64' };

function cell(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'number') return typeof v === 'number' && v - v === 0 ? v : null;
  if (type === 'bool') return typeof v === 'boolean' ? v : null;
  if (type === 'string') return typeof v === 'string' ? v : null;
  return null;
}

/** util.go `ParseString`: strings as they are, anything else as Go's `%v` would print it. */
function anyString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  checkDepth(v, 'a value');
  return JSON.stringify(v);
}

/** Row `i` of a series as the answer held it (a row may be longer than the columns). */
function rowOf(series: SeriesColumns, i: number): unknown[] {
  return series.rowsAsRead?.[i] ?? series.cols.map((col) => col[i]);
}

function seriesFrames(list: readonly SeriesColumns[], q: InfluxQuery, rawQuery: string): Frame[] {
  const frames: Frame[] = [];
  const lower = rawQuery.toLowerCase();
  for (const series of list) {
    if (!series.columns.some((c) => c.toLowerCase() === 'time')) {
      const values: string[] = [];
      for (let i = 0; i < series.rows; i++) {
        const pair = rowOf(series, i);
        if (lower.includes('cardinality')) values.push(anyString(pair[0]));
        else if (lower.includes('show tag values')) {
          if (pair.length >= 2) values.push(anyString(pair[1]));
        } else if (lower.includes('show diagnostics')) for (const v of pair) values.push(anyString(v));
        else if (pair.length >= 1) values.push(anyString(pair[0]));
      }
      frames.push({ name: series.name, fields: [{ name: 'Value', type: 'string', nullable: true, values }] });
      continue;
    }
    frames.push(...timeSeriesFrames(series, q));
  }
  return frames;
}

/** util.go `Typeof`: the Go type of the column's first non-null value; objects and lists have no field type. */
function typeOfColumn(values: readonly unknown[], column: string): 'string' | 'number' | 'bool' | 'null' {
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'number') return 'number';
    if (typeof v === 'boolean') return 'bool';
    if (typeof v === 'string') return 'string';
    throw new AnswerError(`column ${JSON.stringify(column)} holds a value that is not a number, string or boolean`);
  }
  return 'null';
}

/** `cell` of every value; the array itself when every value already is what `cell` makes of it. */
function cells(values: unknown[], type: string): unknown[] {
  const fits = type === 'number' ? 'number' : type === 'bool' ? 'boolean' : type === 'string' ? 'string' : null;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    // A number that overflowed reads as ±Infinity: null, as the original's ParseNumber makes it.
    if (v !== null && (typeof v !== fits || (fits === 'number' && (v as number) - (v as number) !== 0))) return values.map((x) => cell(x, type));
  }
  return values;
}

/** Rows whose time the original reads (the others it leaves out), or null when every row's is. */
function keptRows(series: SeriesColumns): number[] | null {
  const times = series.times;
  for (let i = 0; i < series.rows; i++) {
    if (times[i] === null) {
      const keep: number[] = [];
      for (let j = 0; j < series.rows; j++) if (times[j] !== null) keep.push(j);
      return keep;
    }
  }
  return null;
}

/**
 * One frame per value column: `Time` (rows whose time is not an int64 literal dropped) and
 * `Value` typed by the column's first non-null value, named as the original names them.
 */
function timeSeriesFrames(series: SeriesColumns, q: InfluxQuery): Frame[] {
  const keep = keptRows(series);
  const pick = (values: unknown[]) => (keep ? keep.map((i) => values[i]) : values);
  const times = pick(series.times);
  const frames: Frame[] = [];
  series.columns.forEach((column, col) => {
    if (column === 'time') return;
    const type = typeOfColumn(series.cols[col]!, column);
    const name = influxFrameName(series.name, column, series.tags, q);
    frames.push({
      name,
      fields: [
        { name: 'Time', type: 'time.Time', values: times },
        {
          name: 'Value', type: FIELD_TYPES[type], nullable: true, labels: sortedLabels(series.tags),
          config: { displayNameFromDS: name }, values: cells(pick(series.cols[col]!), type),
        },
      ],
    });
  });
  return frames;
}

function tableFrame(list: readonly SeriesColumns[]): Frame[] {
  if (list.length === 0) return [];
  const first = list[0]!;
  if (first.columns.length === 0) throw new AnswerError('a series has no columns');
  const fields: Field[] = [];
  const valueField = (col: number): Field => {
    const name = first.columns[col]!;
    const columns = list.map((series) => {
      if (col >= series.columns.length) throw new AnswerError('a series has fewer columns than the first');
      return series.cols[col]!;
    });
    // The original settles the type per series and keeps the last one's field; one type per column here.
    const type = typeOfColumn(columns.flat(), name);
    const values: unknown[] = [];
    for (const column of columns) for (const v of column) values.push(cell(v, type));
    return { name, type: FIELD_TYPES[type], nullable: true, config: { displayNameFromDS: name }, values };
  };
  if (first.columns[0] === 'time') {
    fields.push({ name: 'Time', type: 'time.Time', values: list.flatMap((series) => series.times.filter((t) => t !== null)) });
  } else {
    fields.push(valueField(0));
  }
  for (const key of Object.keys(first.tags).sort(compareGoStrings)) {
    const values: string[] = [];
    for (const series of list) {
      const value = Object.hasOwn(series.tags, key) ? series.tags[key]! : '';
      for (let i = 0; i < series.rows; i++) values.push(value);
    }
    fields.push({ name: key, type: 'string', nullable: true, config: { displayNameFromDS: key }, values });
  }
  for (let col = 1; col < first.columns.length; col++) fields.push(valueField(col));
  return [{ name: first.name, fields }];
}

function visType(resultFormat: string): string {
  return resultFormat === 'table' ? 'table' : resultFormat === 'logs' ? 'logs' : 'graph';
}

/**
 * An answer as frames, or an error message worded as the original's: non-2xx as
 * `InfluxDB returned error: <error>`, a top-level or `results[0]` error as InfluxDB says it.
 */
export function influxFrames(status: number, body: Buffer | string, q: InfluxQuery, rawQuery: string): { frames: Frame[] } | { error: string } {
  return drain(influxFramesSteps(status, typeof body === 'string' ? Buffer.from(body) : body, q, rawQuery));
}

/** Answers from this many bytes up are parsed in pieces; below it, the byte reader takes tens of milliseconds at most. */
export const SLICED_FROM = 4 << 20;

/**
 * `influxFrames` as steps: a large answer parsed in pieces (the general reading) and converted a
 * series at a time; `slicing` for tests (every answer in pieces of a few bytes).
 */
export function* influxFramesSteps(
  status: number, bytes: Buffer, q: InfluxQuery, rawQuery: string, slicing = { from: SLICED_FROM, pieceBytes: PIECE_BYTES },
): Steps<{ frames: Frame[] } | { error: string }> {
  if (status < 200 || status > 299) {
    let parsed: { error?: unknown } | undefined;
    try {
      parsed = JSON.parse(bytes.toString()) as { error?: unknown };
    } catch {
      // The status says it: the body only adds InfluxDB's message when it has one.
    }
    return { error: `InfluxDB returned error: ${typeof parsed?.error === 'string' ? parsed.error : ''}` };
  }
  try {
    // The byte reader takes the plain shape of an answer below `slicing.from`; the rest (a large
    // answer, or a shape it leaves) is parsed in pieces, each row's first literal kept, since only
    // its text says whether the original reads it as a time.
    let doc = bytes.length < slicing.from ? scanInflux(bytes) : null;
    if (doc === null) {
      const notTimes = new WeakSet<object>();
      const odd = (literal: string, value: number) => !Number.isFinite(value) || int64Literal(literal, value) === null;
      const parsed = yield* parseJsonSteps(bytes, { pieceBytes: slicing.pieceBytes, oddFirstNumbers: { odd, arrays: notTimes } });
      doc = yield* readParsedValue(parsed, (row) => (typeof row[0] === 'number' && !notTimes.has(row) ? row[0] : null));
    }
    if (doc.error) return { error: doc.error };
    if (!doc.hasResult) return { error: 'failed to parse the InfluxDB response: no results' };
    if (doc.resultError) return { error: doc.resultError };
    let frames: Frame[];
    if (q.resultFormat === 'table') frames = tableFrame(doc.series);
    else {
      frames = [];
      for (const series of doc.series) {
        yield;
        frames.push(...seriesFrames([series], q, rawQuery));
      }
    }
    if (frames.length > 0) frames[0]!.meta = { executedQueryString: rawQuery, preferredVisualisationType: visType(q.resultFormat) };
    return { frames };
  } catch (error) {
    if (!(error instanceof AnswerError)) throw error;
    return { error: `failed to parse the InfluxDB response: ${error.message}` };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A parsed answer read as the original's decoder reads it; `firstTime` reads a row's first value as a time (or null). */
function* readParsedValue(parsed: unknown, firstTime: FirstTime): Steps<ScannedInflux> {
  if (!isObject(parsed)) throw new AnswerError('not an object');
  // Members in their order, as the original's decoder meets (and refuses) them.
  const doc: ScannedInflux = { hasResult: false, series: [] };
  for (const [key, value] of Object.entries(parsed)) {
    if (key === 'error') doc.error = stringMember(value, 'error');
    else if (key === 'results' && value !== null) {
      if (!Array.isArray(value)) throw new AnswerError('results are not a list');
      if (value.length > 0) {
        doc.hasResult = true;
        yield* parsedResult(value[0], doc, firstTime);
      }
    }
  }
  return doc;
}

type FirstTime = (row: unknown[]) => number | null;

function* parsedResult(result: unknown, doc: ScannedInflux, firstTime: FirstTime): Steps {
  if (result === null) return;
  if (!isObject(result)) throw new AnswerError('a result is not an object');
  for (const [key, value] of Object.entries(result)) {
    if (key === 'error') doc.resultError = stringMember(value, 'error');
    else if (key === 'series' && value !== null) {
      if (!Array.isArray(value)) throw new AnswerError('series are not a list');
      for (const raw of value) doc.series.push(yield* parsedSeries(raw, firstTime));
    }
  }
}

/** Rows read between two stops. */
const ROWS_PER_STEP = 32_768;

function* parsedSeries(raw: unknown, firstTime: FirstTime): Steps<SeriesColumns> {
  const series: SeriesColumns = { name: '', tags: readLabels(undefined, 'series tags'), columns: [], cols: [], times: [], rows: 0, rowsAsRead: [] };
  if (raw === null) return series;
  if (!isObject(raw)) throw new AnswerError('a series is not an object');
  let values: unknown[][] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'name') series.name = stringMember(value, 'a series name');
    else if (key === 'tags') series.tags = readLabels(value, 'series tags');
    else if (key === 'columns') series.columns = readColumns(value);
    else if (key === 'values' && value !== null) {
      if (!Array.isArray(value) || !value.every((row) => Array.isArray(row))) throw new AnswerError('series values are not rows');
      values = value as unknown[][];
    }
  }
  // Where every column is read (a time column's series), a short row is one the original cannot read.
  const width = series.columns.some((c) => c.toLowerCase() === 'time') ? series.columns.length : 0;
  const cols: unknown[][] = series.columns.map(() => []);
  for (let from = 0; from < values.length; from += ROWS_PER_STEP) {
    yield;
    const to = Math.min(values.length, from + ROWS_PER_STEP);
    for (let i = from; i < to; i++) {
      const row = values[i]!;
      if (row.length < width) throw new AnswerError('a series row has fewer values than columns');
      series.times.push(firstTime(row));
      for (let k = 0; k < cols.length; k++) cols[k]!.push(row[k]);
    }
  }
  series.rowsAsRead = values;
  series.rows = values.length;
  series.cols = cols;
  return series;
}
