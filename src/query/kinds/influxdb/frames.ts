import type { Field, FieldType, Frame } from '../../frames/frame.ts';
import { formatInterval } from '../../durations.ts';
import { compareGoStrings } from '../../frames/encode.ts';
import { sortedLabels } from '../../go-text.ts';
import type { InfluxQuery } from './influxql.ts';
import { scanInflux, type SeriesColumns } from './scan.ts';

/**
 * InfluxDB 1.x `/query` answers as the original's frames (`influxql/buffered/response_parser.go`,
 * `influxql/util/util.go`): time series (one frame per series and column), table, and `SHOW ...`
 * results without a time column. Pure.
 */

interface Row {
  name?: string;
  tags?: Record<string, string>;
  columns: string[];
  values: unknown[][];
}

export class InfluxAnswerError extends Error {}

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
  if (type === 'number') return typeof v === 'number' ? v : null;
  if (type === 'bool') return typeof v === 'boolean' ? v : null;
  if (type === 'string') return typeof v === 'string' ? v : null;
  return null;
}

function validTime(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** util.go `ParseString`: strings as they are, anything else as Go's `%v` would print it. */
function anyString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  return JSON.stringify(v);
}

function seriesFrames(rows: readonly Row[], q: InfluxQuery, rawQuery: string): Frame[] {
  const frames: Frame[] = [];
  const lower = rawQuery.toLowerCase();
  for (const row of rows) {
    const tags = row.tags ?? {};
    if (!row.columns.some((c) => c.toLowerCase() === 'time')) {
      const values: string[] = [];
      for (const pair of row.values) {
        if (lower.includes('cardinality')) values.push(anyString(pair[0]));
        else if (lower.includes('show tag values')) {
          if (pair.length >= 2) values.push(anyString(pair[1]));
        } else if (lower.includes('show diagnostics')) for (const v of pair) values.push(anyString(v));
        else if (pair.length >= 1) values.push(anyString(pair[0]));
      }
      frames.push({ name: row.name ?? '', fields: [{ name: 'Value', type: 'string', nullable: true, values }] });
      continue;
    }
    frames.push(...timeSeriesFrames(toColumns(row), q));
  }
  return frames;
}

/** A row-shaped series as columns (the general parse's path to timeSeriesFrames). */
function toColumns(row: Row): SeriesColumns {
  return {
    name: row.name ?? '', tags: row.tags ?? {}, columns: row.columns, rows: row.values.length,
    cols: row.columns.map((_, col) => row.values.map((pair) => pair[col])),
  };
}

/** util.go `Typeof`: the Go type of the column's first non-null value. */
function typeOfColumn(values: readonly unknown[]): 'string' | 'number' | 'bool' | 'null' {
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'number') return 'number';
    if (typeof v === 'boolean') return 'bool';
    return 'string';
  }
  return 'null';
}

/** `cell` of every value; the array itself when every value already is what `cell` makes of it. */
function cells(values: unknown[], type: string): unknown[] {
  const fits = type === 'number' ? 'number' : type === 'bool' ? 'boolean' : type === 'string' ? 'string' : null;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== null && typeof v !== fits) return values.map((x) => cell(x, type));
  }
  return values;
}

/**
 * One frame per value column: `Time` (rows whose time is not an integer dropped) and `Value`
 * typed by the column's first non-null value, named as the original names them.
 */
function timeSeriesFrames(series: SeriesColumns, q: InfluxQuery): Frame[] {
  const timeColumn = series.cols[0] ?? [];
  let keep: number[] | null = null;
  for (let i = 0; i < series.rows; i++) {
    if (!validTime(timeColumn[i])) {
      keep = [];
      for (let j = 0; j < series.rows; j++) if (validTime(timeColumn[j])) keep.push(j);
      break;
    }
  }
  const pick = (values: unknown[]) => (keep ? keep.map((i) => values[i]) : values);
  const times = pick(timeColumn);
  const frames: Frame[] = [];
  series.columns.forEach((column, col) => {
    if (column === 'time') return;
    const type = typeOfColumn(series.cols[col]!);
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

function tableFrame(rows: readonly Row[]): Frame[] {
  if (rows.length === 0) return [];
  const first = rows[0];
  const fields: Field[] = [];
  const valueField = (col: number): Field => {
    // The original settles the type per row and keeps the last row's field; one type per column here.
    const type = typeOfColumn(rows.flatMap((r) => r.values.map((pair) => pair[col])));
    const values: unknown[] = [];
    for (const row of rows) for (const pair of row.values) values.push(cell(pair[col], type));
    return { name: first.columns[col], type: FIELD_TYPES[type], nullable: true, config: { displayNameFromDS: first.columns[col] }, values };
  };
  if (first.columns[0] === 'time') {
    fields.push({ name: 'Time', type: 'time.Time', values: rows.flatMap((r) => r.values.filter((p) => validTime(p[0])).map((p) => p[0])) });
  } else {
    fields.push(valueField(0));
  }
  for (const key of Object.keys(first.tags ?? {}).sort(compareGoStrings)) {
    const values: string[] = [];
    for (const row of rows) for (let i = 0; i < row.values.length; i++) values.push(row.tags?.[key] ?? '');
    fields.push({ name: key, type: 'string', nullable: true, config: { displayNameFromDS: key }, values });
  }
  for (let col = 1; col < first.columns.length; col++) fields.push(valueField(col));
  return [{ name: first.name ?? '', fields }];
}

function visType(resultFormat: string): string {
  return resultFormat === 'table' ? 'table' : resultFormat === 'logs' ? 'logs' : 'graph';
}

function asRows(series: unknown): Row[] {
  if (series === undefined || series === null) return [];
  if (!Array.isArray(series)) throw new InfluxAnswerError('series is not an array');
  return series.map((s) => {
    const r = s as Partial<Row>;
    if (!r || !Array.isArray(r.columns) || !r.columns.every((c) => typeof c === 'string')) throw new InfluxAnswerError('series without columns');
    const values = r.values ?? [];
    if (!Array.isArray(values) || !values.every((v) => Array.isArray(v))) throw new InfluxAnswerError('series values are not rows');
    if (r.tags !== undefined && (typeof r.tags !== 'object' || r.tags === null)) throw new InfluxAnswerError('series tags are not an object');
    return { name: typeof r.name === 'string' ? r.name : '', tags: r.tags, columns: r.columns, values };
  });
}

/**
 * An answer as frames, or an error message worded as the original's: non-2xx as
 * `InfluxDB returned error: <error>`, a top-level or `results[0]` error as InfluxDB says it.
 */
export function influxFrames(status: number, body: Buffer | string, q: InfluxQuery, rawQuery: string): { frames: Frame[] } | { error: string } {
  const scanned = status >= 200 && status <= 299 && q.resultFormat !== 'table' ? scanInflux(typeof body === 'string' ? Buffer.from(body) : body) : null;
  const result = scanned ? scannedFrames(scanned, q) : parsedFrames(status, body, q, rawQuery);
  if ('frames' in result && result.frames.length > 0) result.frames[0].meta = { executedQueryString: rawQuery, preferredVisualisationType: visType(q.resultFormat) };
  return result;
}

/** The byte reader's answer (2xx, time series): errors in the same order as parsedFrames. */
function scannedFrames(doc: NonNullable<ReturnType<typeof scanInflux>>, q: InfluxQuery): { frames: Frame[] } | { error: string } {
  if (typeof doc.error === 'string' && doc.error !== '') return { error: doc.error };
  if (!doc.hasResult) return { error: 'failed to parse the InfluxDB response: no results' };
  if (typeof doc.resultError === 'string' && doc.resultError !== '') return { error: doc.resultError };
  return { frames: doc.series.flatMap((series) => timeSeriesFrames(series, q)) };
}

function parsedFrames(status: number, body: Buffer | string, q: InfluxQuery, rawQuery: string): { frames: Frame[] } | { error: string } {
  let parsed: { error?: unknown; results?: { error?: unknown; series?: unknown }[] } | undefined;
  let jsonError: string | undefined;
  try {
    parsed = JSON.parse(body.toString());
  } catch (error) {
    jsonError = (error as Error).message;
  }
  if (status < 200 || status > 299) return { error: `InfluxDB returned error: ${typeof parsed?.error === 'string' ? parsed.error : ''}` };
  if (jsonError !== undefined || !parsed || typeof parsed !== 'object') return { error: `failed to parse the InfluxDB response: ${jsonError ?? 'not an object'}` };
  if (typeof parsed.error === 'string' && parsed.error !== '') return { error: parsed.error };
  const result = Array.isArray(parsed.results) ? parsed.results[0] : undefined;
  if (!result) return { error: 'failed to parse the InfluxDB response: no results' };
  if (typeof result.error === 'string' && result.error !== '') return { error: result.error };
  try {
    const rows = asRows(result.series);
    return { frames: q.resultFormat === 'table' ? tableFrame(rows) : seriesFrames(rows, q, rawQuery) };
  } catch (error) {
    return { error: `failed to parse the InfluxDB response: ${(error as Error).message}` };
  }
}
