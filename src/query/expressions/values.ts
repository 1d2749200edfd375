/**
 * The values server-side expressions compute on (the original's `mathexp` types): a series is a
 * time column and a nullable float column kept as typed arrays, so the math never allocates per
 * point; a number is one labelled value; a scalar one unlabelled constant; "no data" an empty answer.
 */
import { ColumnWriter } from '../frames/column-writer.ts';
import { goFloat } from '../frames/encode.ts';
import { writtenField, type ColumnEntities, type Frame, type Notice, type WrittenColumn } from '../frames/frame.ts';

export type Labels = Readonly<Record<string, string>>;

export interface Series {
  readonly kind: 'series';
  /** The value field's name (the refId for computed series). */
  name: string;
  labels?: Labels;
  config?: Frame['fields'][number]['config'];
  /** Epoch milliseconds. */
  times: Float64Array;
  values: Float64Array;
  /** 1 where the value is null; absent when none is. */
  nulls?: Uint8Array;
  notices?: Notice[];
}

export interface NumberValue {
  readonly kind: 'number';
  name: string;
  labels?: Labels;
  config?: Frame['fields'][number]['config'];
  value: number | null;
  notices?: Notice[];
  /** `meta.custom` of its frame (classic conditions' matches). */
  custom?: unknown;
}

export interface Scalar {
  readonly kind: 'scalar';
  value: number | null;
  notices?: Notice[];
}

export interface NoData {
  readonly kind: 'nodata';
  notices?: Notice[];
}

export type Value = Series | NumberValue | Scalar | NoData;

/** The result of a node: its values, or the error that replaced them. */
export interface Results {
  values: Value[];
  error?: string;
  /** Where an error came from, for the refId's answer. */
  errorSource?: 'plugin' | 'downstream';
  status?: number;
}

/** The type names the original's errors print (`parse.ReturnType`). */
export function typeName(value: Value): string {
  return { series: 'seriesSet', number: 'numberSet', scalar: 'scalar', nodata: 'noData' }[value.kind];
}

/**
 * What the expression running may still build: every series it makes (its intermediate ones
 * included) is spent here before its arrays are allocated, and a whole command's output may be
 * checked before it starts. Both throw the refId's error when it does not fit.
 */
export interface SeriesGuard {
  spend(rows: number, series: number): void;
  check(rows: number, series: number): void;
}

/** A series of `length` rows, spent from `guard` first. */
export function newSeries(name: string, labels: Labels | undefined, length: number, guard?: SeriesGuard): Series {
  guard?.spend(length, 1);
  return { kind: 'series', name, labels, times: new Float64Array(length), values: new Float64Array(length) };
}

export const isNull = (series: Series, i: number): boolean => series.nulls !== undefined && series.nulls[i] === 1;

export function setNull(series: Series, i: number): void {
  series.nulls ??= new Uint8Array(series.times.length);
  series.nulls[i] = 1;
}

/** The value at `i`, null included. */
export const valueAt = (series: Series, i: number): number | null => (isNull(series, i) ? null : series.values[i]);

export function labelsEqual(a: Labels | undefined, b: Labels | undefined): boolean {
  const aKeys = a ? Object.keys(a) : [];
  const bKeys = b ? Object.keys(b) : [];
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((k) => b![k] === a![k]);
}

/** Every pair of `inner` is in `outer` (`data.Labels.Contains`). */
export function labelsContain(outer: Labels | undefined, inner: Labels | undefined): boolean {
  if (!inner) return true;
  return Object.keys(inner).every((k) => outer !== undefined && Object.hasOwn(outer, k) && outer[k] === inner[k]);
}

export const labelCount = (labels: Labels | undefined): number => (labels ? Object.keys(labels).length : 0);

/** `data.Labels.String()`: `a=b, c=d`, keys sorted. */
export function labelsString(labels: Labels | undefined): string {
  return labels ? Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`).join(', ') : '';
}

const withNotices = (frame: Frame, notices: Notice[] | undefined): Frame => {
  if (notices && notices.length > 0) frame.meta = { ...frame.meta, notices };
  return frame;
};

/**
 * Series from this many rows up are framed as written columns (their JSON, outside the JS heap):
 * a million points as JS arrays are young objects that survive, and the collector copying them
 * holds the event loop for a tenth of a second at a time; their JSON is needed anyway.
 */
export const WRITTEN_SERIES_ROWS = 4096;

/** A time column of a series, as the encoder writes one (integer milliseconds). */
function writtenTimes(times: Float64Array): WrittenColumn {
  const out = new ColumnWriter(times.length * 14);
  for (let i = 0; i < times.length; i++) out.text(String(Math.trunc(times[i])));
  return out.done();
}

/** A series' values as the encoder writes a nullable float column: NaN and ±Inf as null, listed in `entities`. */
function writtenValues(series: Series): WrittenColumn {
  const values = series.values;
  const out = new ColumnWriter(values.length * 20);
  let entities: ColumnEntities | undefined;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (isNull(series, i)) out.text('null');
    else if (v - v === 0) out.text(v < 1e21 && v > -1e21 && (v >= 1e-6 || v <= -1e-6 || v === 0) ? String(v) : goFloat(v));
    else {
      out.text('null');
      (((entities ??= {})[v !== v ? 'NaN' : v > 0 ? 'Inf' : 'NegInf']) ??= []).push(i);
    }
  }
  const column = out.done();
  if (entities) column.entities = entities;
  return column;
}

/**
 * Framing of one answer's values: consecutive series on the same times (a math result's, nearly
 * always) share one written time column.
 */
export class Framer {
  #times: Float64Array | undefined;
  #column: WrittenColumn | undefined;

  timeField(times: Float64Array): Frame['fields'][number] {
    const previous = this.#times;
    let same = previous !== undefined && previous.length === times.length;
    for (let i = 0; same && i < times.length; i++) same = previous![i] === times[i];
    if (!same || !this.#column) {
      this.#column = writtenTimes(times);
      this.#times = times;
    }
    return writtenField('Time', 'time.Time', this.#column);
  }
}

/** One value as the original's frame for it (`AsDataFrame`), refId set; long series through `framer`. */
export function toFrame(refId: string, value: Value, framer?: Framer): Frame {
  switch (value.kind) {
    case 'series': {
      if (framer && value.times.length >= WRITTEN_SERIES_ROWS) {
        const field = writtenField(value.name, 'float64', writtenValues(value), value.labels);
        field.nullable = true;
        if (value.config) field.config = value.config;
        return withNotices({ refId, meta: { type: 'timeseries-multi', typeVersion: [0, 1] }, fields: [framer.timeField(value.times), field] }, value.notices);
      }
      const times: number[] = new Array(value.times.length);
      const values: (number | null)[] = new Array(value.times.length);
      for (let i = 0; i < times.length; i++) {
        times[i] = value.times[i];
        values[i] = isNull(value, i) ? null : value.values[i];
      }
      const field: Frame['fields'][number] = { name: value.name, type: 'float64', nullable: true, values };
      if (value.labels) field.labels = value.labels;
      if (value.config) field.config = value.config;
      return withNotices({ refId, meta: { type: 'timeseries-multi', typeVersion: [0, 1] }, fields: [{ name: 'Time', type: 'time.Time', values: times }, field] }, value.notices);
    }
    case 'number': {
      const field: Frame['fields'][number] = { name: value.name, type: 'float64', nullable: true, values: [value.value] };
      if (value.labels) field.labels = value.labels;
      if (value.config) field.config = value.config;
      const meta: Frame['meta'] = { type: 'numeric-multi', typeVersion: [0, 1] };
      if (value.custom !== undefined) meta.custom = value.custom;
      return withNotices({ refId, meta, fields: [field] }, value.notices);
    }
    case 'scalar':
      return withNotices({ refId, meta: { type: 'numeric-multi', typeVersion: [0, 1] }, fields: [{ name: refId, type: 'float64', nullable: true, values: [value.value] }] }, value.notices);
    case 'nodata':
      return withNotices({ name: 'no data', refId, fields: [] }, value.notices);
  }
}
