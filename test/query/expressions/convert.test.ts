import { describe, expect, it } from '@jest/globals';
import { framesToValues, framesToValuesSteps, SERIES_MUST_BE_WIDE } from '../../../src/query/expressions/convert.ts';
import type { Field, Frame, FrameMeta } from '../../../src/query/frames/frame.ts';
import type { NumberValue, Series, Value } from '../../../src/query/expressions/values.ts';

// A data source's frames read as expression values: typed (dataplane) frames by their type,
// untyped ones by their shape.

const time = (values: unknown[]): Field => ({ name: 'time', type: 'time.Time', values });
const num = (name: string, values: unknown[], extra: Partial<Field> = {}): Field => ({ name, type: 'float64', values, ...extra });
const str = (name: string, values: unknown[]): Field => ({ name, type: 'string', values });
const frame = (fields: Field[], meta?: FrameMeta, name?: string): Frame => ({ fields, meta, name });
const typed = (type: string, fields: Field[], version: [number, number] = [0, 1]) => frame(fields, { type, typeVersion: version });

/** A value as plain data: series points as [time, value|null] pairs. */
function plain(value: Value): unknown {
  if (value.kind !== 'series') return value;
  const s = value as Series;
  return { name: s.name, labels: s.labels, points: Array.from(s.times, (t, i) => [t, s.nulls?.[i] ? null : s.values[i]]) };
}
const convert = (kind: string, frames: Frame[]) => framesToValues(kind, frames).map(plain);

describe('untyped frames, read by shape', () => {
  it.each<[string, string, Frame[], unknown]>([
    ['no frames', 'prometheus', [], [{ kind: 'nodata' }]],
    ['a frame with no fields', 'prometheus', [frame([])], [{ kind: 'nodata' }]],
    ['a wide frame: one series per numeric field, nulls kept', 'prometheus',
      [frame([time([1000, 2000]), num('a', [1, null], { labels: { host: 'x' } }), num('b', [3, 4])])],
      [{ name: 'a', labels: { host: 'x' }, points: [[1000, 1], [2000, null]] }, { name: 'b', labels: undefined, points: [[1000, 3], [2000, 4]] }]],
    ['a named frame names its series', 'prometheus',
      [frame([time([1000]), num('a', [1])], undefined, 'frame-name')],
      [{ name: 'frame-name', labels: undefined, points: [[1000, 1]] }]],
    ['a lone table with one numeric column: numbers labelled by its string columns', 'mysql',
      [frame([str('host', ['a', null]), num('v', [1, null])])],
      [{ kind: 'number', name: 'v', labels: { host: 'a' }, value: 1 }, { kind: 'number', name: 'v', labels: { host: '' }, value: null }]],
    ['a lone numeric column without strings: numbers without labels', 'mysql',
      [frame([num('v', [7])])],
      [{ kind: 'number', name: 'v', labels: undefined, value: 7 }]],
    ['influxdb frames without a time field are skipped', 'influxdb',
      [frame([str('s', ['x']), num('a', [1]), num('b', [2])]), frame([time([5]), num('v', [9])])],
      [{ name: 'v', labels: { __name__: 'v' }, points: [[5, 9]] }]],
    ['influxdb frames that are all skipped: no data', 'influxdb', [frame([num('a', [1]), num('b', [2])])], [{ kind: 'nodata' }]],
  ])('%s', (_, kind, frames, expected) => {
    expect(convert(kind, frames)).toEqual(expected);
  });

  it.each<[string, Frame[], string]>([
    ['two numeric columns without time', [frame([num('a', [1]), num('b', [2])])], 'not'],
    ['a long frame (time and a string column)', [frame([time([1]), str('host', ['a']), num('v', [1])])], 'long'],
    ['two frames, one of them not a time series', [frame([time([1]), num('v', [1])]), frame([num('w', [1])])], 'not'],
  ])('%s is refused', (_, frames, type) => {
    expect(() => framesToValues('prometheus', frames)).toThrow(`${SERIES_MUST_BE_WIDE} but got type ${type} (input refid)`);
  });

  it('refuses a null time stamp', () => {
    expect(() => framesToValues('prometheus', [frame([time([1, null]), num('v', [1, 2])])])).toThrow('time series with null time stamps are not supported');
  });

  it('copies labels and keeps the field config', () => {
    const labels = { host: 'x' };
    const config = { unit: 's' };
    const [series] = framesToValues('prometheus', [frame([time([1]), num('v', [1], { labels, config })])]) as Series[];
    expect(series.labels).toEqual(labels);
    expect(series.labels).not.toBe(labels);
    expect(series.config).toBe(config);
  });
});

describe('__name__ for kinds whose series carry no labels', () => {
  const fields = (a: Partial<Field>, b: Partial<Field>) => [frame([time([1]), num('v', [1], a), num('v', [2], b)])];
  const names = (kind: string, frames: Frame[]) => framesToValues(kind, frames).map((v) => (v as Series).labels);
  it.each<[string, string, Frame[], unknown]>([
    ['display name from the data source first', 'graphite', fields({ config: { displayNameFromDS: 'x', displayName: 'dx' } }, { config: { displayNameFromDS: 'y', displayName: 'dy' } }), [{ __name__: 'x' }, { __name__: 'y' }]],
    ['then display name, when the first does not tell them apart', 'testdata', fields({ config: { displayNameFromDS: 'same', displayName: 'dx' } }, { config: { displayNameFromDS: 'same', displayName: 'dy' } }), [{ __name__: 'dx' }, { __name__: 'dy' }]],
    ['then the field name', 'influxdb', [frame([time([1]), num('a', [1]), num('b', [2])])], [{ __name__: 'a' }, { __name__: 'b' }]],
    ['none when no selector tells them apart', 'graphite', fields({}, {}), [undefined, undefined]],
    ['none when a field has labels', 'graphite', [frame([time([1]), num('a', [1], { labels: { k: 'v' } }), num('b', [2])])], [{ k: 'v' }, undefined]],
    ['none for other kinds', 'prometheus', [frame([time([1]), num('a', [1]), num('b', [2])])], [undefined, undefined]],
  ])('%s (%s)', (_, kind, frames, expected) => {
    expect(names(kind, frames)).toEqual(expected);
  });
});

describe('typed (dataplane) frames', () => {
  it.each<[string, Frame[], unknown]>([
    ['timeseries-multi: one series per numeric field, frame names ignored',
      [{ ...typed('timeseries-multi', [time([1]), num('a', [2], { labels: { k: 'v' } })]), name: 'ignored' }, typed('timeseries-multi', [time([1]), num('b', [3])])],
      [{ name: 'a', labels: { k: 'v' }, points: [[1, 2]] }, { name: 'b', labels: undefined, points: [[1, 3]] }]],
    ['timeseries-wide: frames without time are skipped', [typed('timeseries-wide', [num('a', [2])])], [{ kind: 'nodata' }]],
    ['numeric-multi: the first row of each numeric field',
      [typed('numeric-multi', [num('a', [5, 6], { labels: { k: 'v' } }), str('s', ['x']), num('empty', [])])],
      [{ kind: 'number', name: 'a', labels: { k: 'v' }, value: 5 }]],
    ['numeric-wide without numbers: no data', [typed('numeric-wide', [str('s', ['x'])])], [{ kind: 'nodata' }]],
    ['numeric-long: one number per row labelled by the string columns',
      [typed('numeric-long', [str('host', ['a', 'b']), num('v', [1, 2])])],
      [{ kind: 'number', name: 'v', labels: { host: 'a' }, value: 1 }, { kind: 'number', name: 'v', labels: { host: 'b' }, value: 2 }]],
    ['numeric-long over two frames: no data', [typed('numeric-long', [num('v', [1])]), typed('numeric-long', [num('v', [1])])], [{ kind: 'nodata' }]],
    ['version 0.0 is read by shape, not by type', [typed('numeric-multi', [num('a', [5, 6]), num('b', [7])], [0, 0])], 'not'],
    ['an unknown type is read by shape', [typed('table', [time([1]), num('a', [2])])], [{ name: 'a', labels: undefined, points: [[1, 2]] }]],
  ])('%s', (_, frames, expected) => {
    if (typeof expected === 'string') expect(() => framesToValues('prometheus', frames)).toThrow(`but got type ${expected}`);
    else expect(framesToValues('prometheus', frames).map(plain)).toEqual(expected);
  });

  it('timeseries-long is refused', () => {
    expect(() => framesToValues('prometheus', [typed('timeseries-long', [time([1]), str('s', ['a']), num('v', [1])])])).toThrow(`${SERIES_MUST_BE_WIDE} but got type long (input refid)`);
  });
});

describe('as steps', () => {
  it('stops once after each series of a wide frame and returns what framesToValues returns', () => {
    const frames = [frame([time([1, 2]), num('a', [1, 2]), num('b', [3, 4]), num('c', [5, 6])])];
    const steps = framesToValuesSteps('prometheus', frames);
    let stops = 0;
    let next = steps.next();
    while (!next.done) {
      stops++;
      next = steps.next();
    }
    expect(stops).toBe(3);
    expect(next.value.map(plain)).toEqual(framesToValues('prometheus', frames).map(plain));
  });

  it('numbers come back without stopping', () => {
    const next = framesToValuesSteps('mysql', [frame([num('v', [1, 2])])]).next();
    expect(next.done).toBe(true);
    expect((next.value as NumberValue[]).map((n) => n.value)).toEqual([1, 2]);
  });
});
