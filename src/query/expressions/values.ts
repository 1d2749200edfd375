/**
 * The values server-side expressions compute on (the original's `mathexp` types): a series is a
 * time column and a nullable float column kept as typed arrays, so the math never allocates per
 * point; a number is one labelled value; a scalar one unlabelled constant; "no data" an empty answer.
 */
import type { Frame, Notice } from '../frames/frame.ts';

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
 * What the expression running now may still build: every series it makes (its intermediate ones
 * included) is spent here before its arrays are allocated, and a whole command's output may be
 * checked before it starts. Set around one command's synchronous run (`guarded`), so concurrent
 * requests never see each other's; both throw the refId's error when it does not fit.
 */
export interface SeriesGuard {
  spend(rows: number, series: number): void;
  check(rows: number, series: number): void;
}

let guard: SeriesGuard | undefined;

/** Runs `run` (synchronous) with `active` as the guard of what it builds. */
export function guarded<T>(active: SeriesGuard, run: () => T): T {
  const before = guard;
  guard = active;
  try {
    return run();
  } finally {
    guard = before;
  }
}

/** `rows` more rows for a series already spent (one whose arrays are allocated apart). */
export function spendRows(rows: number): void {
  guard?.spend(rows, 0);
}

/** Throws when `series` series of `rows` rows in all would not fit; spends nothing. */
export function checkFits(rows: number, series: number): void {
  guard?.check(rows, series);
}

export function newSeries(name: string, labels: Labels | undefined, length: number): Series {
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

/** One value as the original's frame for it (`AsDataFrame`), refId set. */
export function toFrame(refId: string, value: Value): Frame {
  switch (value.kind) {
    case 'series': {
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
