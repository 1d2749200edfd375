/**
 * A data source's frames as expression values (`pkg/expr/converter.go`, `dataplane.go`): typed
 * time series frames become one series per numeric field, numeric frames numbers, a lone table
 * with one numeric column a set of numbers labelled by its string columns, other wide frames series.
 */
import type { Field, FieldType, Frame } from '../frames/frame.ts';
import { drain, type Steps } from '../slices.ts';
import type { Labels, NumberValue, Series, Value } from './values.ts';

const NUMERIC: ReadonlySet<FieldType> = new Set(['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'float64']);
const isNumeric = (field: Field) => NUMERIC.has(field.type);

/** Kinds whose series have no labels get `__name__` from their names (`checkIfSeriesNeedToBeFixed`). */
const NAME_FIXED_TYPES = new Set(['graphite', 'grafana-testdata-datasource', 'testdata', 'grafana-dynatrace-datasource', 'influxdb']);

export const SERIES_MUST_BE_WIDE = 'input data must be a wide series';

function seriesOf(frame: Frame, timeField: Field, valueField: Field): Series {
  const length = timeField.values.length;
  const times = new Float64Array(length);
  const values = new Float64Array(length);
  let nulls: Uint8Array | undefined;
  for (let i = 0; i < length; i++) {
    const time = timeField.values[i];
    if (time === null || time === undefined) throw new Error('time series with null time stamps are not supported');
    times[i] = time as number;
    const value = valueField.values[i];
    if (value === null || value === undefined) {
      nulls ??= new Uint8Array(length);
      nulls[i] = 1;
    } else values[i] = Number(value);
  }
  // The original names a series after its frame when the frame has a name.
  const series: Series = { kind: 'series', name: frame.name || valueField.name, times, values };
  if (valueField.labels) series.labels = { ...valueField.labels };
  if (valueField.config) series.config = valueField.config;
  if (nulls) series.nulls = nulls;
  return series;
}

function numberOf(name: string, labels: Labels | undefined, field: Field, row: number): NumberValue {
  const raw = field.values[row];
  const number: NumberValue = { kind: 'number', name, labels, value: raw === null || raw === undefined ? null : Number(raw) };
  if (field.config) number.config = field.config;
  return number;
}

/** `TimeSeriesSchema().Type`: no time field is "not", a string field makes it "long". */
function schemaType(frame: Frame): 'not' | 'long' | 'wide' {
  if (!frame.fields.some((f) => f.type === 'time.Time')) return 'not';
  if (frame.fields.some((f) => f.type === 'string')) return 'long';
  return 'wide';
}

/** `extractNumberSet`: one number per row, labelled by the row's string columns. */
function numberSet(frame: Frame): NumberValue[] {
  const numeric = frame.fields.find(isNumeric)!;
  const strings = frame.fields.filter((f) => f.type === 'string');
  return numeric.values.map((_, row) => {
    let labels: Record<string, string> | undefined;
    for (const field of strings) (labels ??= {})[field.name] = String(field.values[row] ?? '');
    return numberOf(numeric.name, labels, numeric, row);
  });
}

function* dataplane(frames: readonly Frame[]): Steps<Value[] | undefined> {
  const meta = frames[0].meta;
  const version = meta?.typeVersion;
  if (!meta?.type || !version || (version[0] === 0 && version[1] === 0)) return undefined;
  const type = meta.type;
  if (type === 'timeseries-multi' || type === 'timeseries-wide') {
    const values: Value[] = [];
    for (const frame of frames) {
      const time = frame.fields.find((f) => f.type === 'time.Time');
      if (!time) continue;
      for (const field of frame.fields) if (isNumeric(field)) values.push(seriesOf({ ...frame, name: '' }, time, field));
      yield;
    }
    return values.length > 0 ? values : [{ kind: 'nodata' }];
  }
  if (type === 'numeric-multi' || type === 'numeric-wide') {
    const values: Value[] = [];
    for (const frame of frames) for (const field of frame.fields) if (isNumeric(field) && field.values.length > 0) values.push(numberOf(field.name, field.labels, field, 0));
    return values.length > 0 ? values : [{ kind: 'nodata' }];
  }
  if (type === 'numeric-long') return frames.length === 1 && frames[0].fields.some(isNumeric) ? numberSet(frames[0]) : [{ kind: 'nodata' }];
  if (type === 'timeseries-long') throw new Error(`${SERIES_MUST_BE_WIDE} but got type long (input refid)`);
  return undefined;
}

/** `ResultConverter.Convert`: throws the conversion error the refId then reports. */
export function framesToValues(dataSourceType: string, frames: readonly Frame[]): Value[] {
  return drain(framesToValuesSteps(dataSourceType, frames));
}

/** The same as steps, stopping after each series read from a wide frame. */
export function* framesToValuesSteps(dataSourceType: string, frames: readonly Frame[]): Steps<Value[]> {
  if (frames.length === 0) return [{ kind: 'nodata' }];
  const typed = yield* dataplane(frames);
  if (typed) return typed;
  if (frames.length === 1) {
    const frame = frames[0];
    if (frame.fields.length === 0) return [{ kind: 'nodata' }];
    const numericCount = frame.fields.filter(isNumeric).length;
    const otherCount = frame.fields.filter((f) => !isNumeric(f) && f.type !== 'string').length;
    if (schemaType(frame) === 'not' && numericCount === 1 && otherCount === 0) return numberSet(frame);
  }
  const wide: Frame[] = [];
  for (const frame of frames) {
    const type = schemaType(frame);
    // InfluxDB frames without numbers are skipped rather than failing the query.
    if (type === 'not' && dataSourceType === 'influxdb') continue;
    if (type !== 'wide') throw new Error(`${SERIES_MUST_BE_WIDE} but got type ${type} (input refid)`);
    wide.push(frame);
  }
  if (wide.length === 0) return [{ kind: 'nodata' }];
  const valueFields = wide.flatMap((frame) => frame.fields.filter(isNumeric));
  const fixName = NAME_FIXED_TYPES.has(dataSourceType) ? nameFixer(valueFields) : undefined;
  const values: Value[] = [];
  for (const frame of wide) {
    const time = frame.fields.find((f) => f.type === 'time.Time')!;
    for (const field of frame.fields) {
      if (!isNumeric(field)) continue;
      const series = seriesOf(frame, time, field);
      if (fixName) series.labels = { __name__: fixName(field) };
      values.push(series);
      yield;
    }
  }
  return values;
}

/** The first of display name from the data source, display name, field name that tells every series apart. */
function nameFixer(fields: readonly Field[]): ((field: Field) => string) | undefined {
  if (fields.some((f) => f.labels && Object.keys(f.labels).length > 0)) return undefined;
  const selectors: ((field: Field) => string)[] = [(f) => f.config?.displayNameFromDS ?? '', (f) => f.config?.displayName ?? '', (f) => f.name];
  for (const select of selectors) {
    const names = new Set<string>();
    if (fields.every((f) => {
      const name = select(f);
      if (name === '' || names.has(name)) return false;
      names.add(name);
      return true;
    })) return select;
  }
  return undefined;
}
