import { describe, expect, it } from '@jest/globals';
import { buildCommand, resampleSeries } from '../../../src/query/expressions/commands.ts';
import type { NumberValue, Results, Series, Value } from '../../../src/query/expressions/values.ts';

// The reduce, resample and threshold commands and how each model is read or refused, with
// results worked out by hand from the original's definitions.

function series(times: number[], values: (number | null)[], labels?: Record<string, string>): Series {
  const s: Series = { kind: 'series', name: 'v', labels, times: Float64Array.from(times), values: Float64Array.from(values.map((v) => v ?? 0)) };
  if (values.includes(null)) s.nulls = Uint8Array.from(values.map((v) => (v === null ? 1 : 0)));
  return s;
}

const points = (value: Value) => {
  const s = value as Series;
  return Array.from(s.times, (t, i) => [t, s.nulls?.[i] ? null : s.values[i]]);
};

function exec(model: Record<string, unknown>, input: Value[], range = { from: 0, to: 5000 }): Value[] {
  return buildCommand('B', model).execute(new Map<string, Results>([['A', { values: input }]]), range);
}

const reduced = (reducer: string, values: (number | null)[], settings?: unknown) =>
  (exec({ type: 'reduce', expression: '$A', reducer, ...(settings === undefined ? {} : { settings }) }, [series(values.map((_, i) => i), values, { host: 'a' })])[0] as NumberValue).value;

describe('reduce', () => {
  const data = [1, 2, null, NaN, 4, Infinity];
  it.each([
    ['sum', undefined, NaN], ['mean', undefined, NaN], ['min', undefined, NaN], ['max', undefined, NaN], ['count', undefined, 6], ['last', undefined, Infinity], ['median', undefined, NaN],
    ['sum', { mode: 'dropNN' }, 7], ['mean', { mode: 'dropNN' }, 7 / 3], ['min', { mode: 'dropNN' }, 1], ['max', { mode: 'dropNN' }, 4], ['count', { mode: 'dropNN' }, 3], ['median', { mode: 'dropNN' }, 2],
    ['sum', { mode: 'replaceNN', replaceWithValue: -1 }, 4], ['count', { mode: 'replaceNN', replaceWithValue: -1 }, 6], ['last', { mode: 'replaceNN', replaceWithValue: -1 }, -1], ['max', { mode: 'replaceNN', replaceWithValue: 9 }, 9],
  ])('%s with %j', (reducer, settings, expected) => {
    expect(reduced(reducer, data, settings)).toBe(expected);
  });

  it('edge cases: empty series, a null last point, an even median, NaN out of dropNN becomes null', () => {
    expect(reduced('sum', [])).toBe(0);
    expect(reduced('mean', [])).toBeNaN();
    expect(reduced('max', [])).toBeNaN();
    expect(reduced('last', [])).toBeNaN();
    expect(reduced('count', [])).toBe(0);
    expect(reduced('last', [1, null])).toBeNull();
    expect(reduced('median', [4, 1, 3, 2])).toBe(2.5);
    expect(reduced('mean', [null, NaN], { mode: 'dropNN' })).toBeNull();
    expect(reduced('mean', [null, NaN], { mode: 'replaceNN', replaceWithValue: 3 })).toBe(3);
    expect(reduced('SUM', [1, 2])).toBe(3);
  });

  it('answers one number per series, named after the refId with the series labels', () => {
    const out = exec({ type: 'reduce', expression: 'A', reducer: 'max' }, [series([0, 1], [1, 5], { host: 'a' }), series([0], [7], { host: 'b' })]);
    expect(out).toEqual([
      { kind: 'number', name: 'B', labels: { host: 'a' }, value: 5 },
      { kind: 'number', name: 'B', labels: { host: 'b' }, value: 7 },
    ]);
  });

  it('a number passes through with a notice, or is dropped by dropNN when null; no data stays', () => {
    const number: NumberValue = { kind: 'number', name: 'A', labels: { x: '1' }, value: 3 };
    expect(exec({ type: 'reduce', expression: 'A', reducer: 'sum' }, [number])).toEqual([
      { kind: 'number', name: 'B', labels: { x: '1' }, value: 3, notices: [{ severity: 'warning', text: 'Reduce operation is not needed. Input query or expression A is already reduced data.' }] },
    ]);
    expect(exec({ type: 'reduce', expression: 'A', reducer: 'sum', settings: { mode: 'dropNN' } }, [{ ...number, value: null }])).toEqual([]);
    expect(exec({ type: 'reduce', expression: 'A', reducer: 'sum' }, [{ kind: 'nodata' }])).toEqual([{ kind: 'nodata' }]);
    expect(() => exec({ type: 'reduce', expression: 'A', reducer: 'sum' }, [{ kind: 'scalar', value: 1 }])).toThrow('can only reduce type series, got type scalar');
  });
});

describe('resample', () => {
  const sparse = series([0, 1500, 4000], [1, 2, 3]);
  it.each([
    ['pad', [[0, 1], [1000, 1], [2000, 2], [3000, 2], [4000, 3], [5000, 3]]],
    ['backfilling', [[0, 1], [1000, 2], [2000, 2], [3000, 3], [4000, 3], [5000, null]]],
    ['fillna', [[0, 1], [1000, null], [2000, 2], [3000, null], [4000, 3], [5000, null]]],
  ])('upsampling with %s', (upsampler, expected) => {
    expect(points(resampleSeries('B', sparse, 1000, 'mean', upsampler, 0, 5000))).toEqual(expected);
  });

  it.each([['sum', 9], ['mean', 3], ['min', 2], ['max', 4], ['last', 4]])('downsampling with %s', (downsampler, second) => {
    const dense = series([0, 200, 400, 1000], [1, 2, 3, 4]);
    expect(points(resampleSeries('B', dense, 1000, downsampler, 'fillna', 0, 2000))).toEqual([[0, 1], [1000, second], [2000, null]]);
  });

  it('through the command: window in Go or calendar units, labels kept, refusals in the original words', () => {
    const [out] = exec({ type: 'resample', expression: '$A', window: '1s', downsampler: 'mean', upsampler: 'pad' }, [series([0], [5], { host: 'a' })], { from: 0, to: 2000 });
    expect(out).toMatchObject({ kind: 'series', name: 'B', labels: { host: 'a' } });
    expect(points(out)).toEqual([[0, 5], [1000, 5], [2000, 5]]);
    expect(() => exec({ type: 'resample', expression: 'A', window: '1d', downsampler: 'mean', upsampler: 'pad' }, [series([0], [5])], { from: 0, to: 1000 }))
      .toThrow('the series cannot be sampled further; the time range is shorter than the interval');
    expect(() => exec({ type: 'resample', expression: 'A', window: '1s', downsampler: 'mean', upsampler: 'nope' }, [series([5000], [5])], { from: 0, to: 2000 })).toThrow('upsampling nope not implemented');
    expect(() => exec({ type: 'resample', expression: 'A', window: '1ms', downsampler: 'mean', upsampler: 'pad' }, [series([0], [5])], { from: 0, to: 1e9 })).toThrow('more than 1000000 points');
    expect(() => buildCommand('B', { type: 'resample', expression: 'A', window: 'soon', downsampler: 'mean', upsampler: 'pad' }))
      .toThrow(`failed to parse expression 'B': failed to parse resample "window" duration field "0s": time: invalid duration "soon"`);
  });
});

describe('threshold', () => {
  const input = [series([0, 1, 2, 3], [1, 5, 10, null], { host: 'a' })];
  it.each([
    ['gt', [5], [0, 0, 1, null]], ['lt', [5], [1, 0, 0, null]], ['eq', [5], [0, 1, 0, null]], ['ne', [5], [1, 0, 1, null]],
    ['gte', [5], [0, 1, 1, null]], ['lte', [5], [1, 1, 0, null]],
    ['within_range', [1, 10], [0, 1, 0, null]], ['outside_range', [1, 10], [0, 0, 0, null]],
    ['within_range_included', [1, 10], [1, 1, 1, null]], ['outside_range_included', [1, 10], [1, 0, 1, null]],
  ])('%s %j', (type, params, expected) => {
    const [out] = exec({ type: 'threshold', expression: 'A', conditions: [{ evaluator: { type, params } }] }, input);
    expect(out).toMatchObject({ kind: 'series', name: 'B', labels: { host: 'a' } });
    expect(points(out).map(([, v]) => v)).toEqual(expected);
  });

  it('numbers too; and the model refusals', () => {
    expect(exec({ type: 'threshold', expression: 'A', conditions: [{ evaluator: { type: 'gt', params: [2] } }] }, [{ kind: 'number', name: 'A', value: 3 }]))
      .toEqual([{ kind: 'number', name: 'B', labels: undefined, value: 1 }]);
    const refuse = (model: Record<string, unknown>) => () => buildCommand('C', { type: 'threshold', ...model });
    expect(refuse({ conditions: [] })).toThrow("failed to parse expression 'C': no variable specified to reference for refId C");
    expect(refuse({ expression: 'A', conditions: [] })).toThrow('threshold expression requires exactly one condition');
    expect(refuse({ expression: 'A', conditions: [{ evaluator: { type: 'gt', params: [] } }] })).toThrow("invalid condition: incorrect number of arguments for threshold function 'gt': got 0 but need 1");
    expect(refuse({ expression: 'A', conditions: [{ evaluator: { type: 'near', params: [1] } }] }))
      .toThrow('invalid condition: expected threshold function to be one of [gt, lt, eq, ne, gte, lte, within_range, outside_range, within_range_included, outside_range_included], got near');
  });
});

describe('reading a command', () => {
  it.each([
    [{}, "invalid command type in expression 'B': no expression command type in query"],
    [{ type: 3 }, "invalid command type in expression 'B': expected expression command type to be a string, got type float64"],
    [{ type: 'magic' }, "invalid command type in expression 'B': 'magic' is not a recognized expression type"],
    [{ type: 'sql', expression: 'SELECT 1' }, 'sql expressions are disabled'],
    [{ type: 'math' }, "failed to parse expression 'B': command is missing an expression"],
    [{ type: 'math', expression: ['$A'] }, "failed to parse expression 'B': math expression is expected to be a string, got []interface {}"],
    [{ type: 'math', expression: '$A +' }, "failed to parse expression 'B': invalid math command type: expr: unexpected EOF in input: F()"],
    [{ type: 'reduce', expression: 'A' }, "failed to parse expression 'B': no reducer specified"],
    [{ type: 'reduce', expression: 'A', reducer: 'p99' }, "failed to parse expression 'B': reduction p99 not implemented"],
    [{ type: 'reduce', expression: 'A', reducer: 'sum', settings: { mode: 'zero' } }, "reducer mode 'zero' is not supported. Supported only: [dropNN,replaceNN]"],
    [{ type: 'reduce', expression: 'A', reducer: 'sum', settings: { mode: 'replaceNN' } }, "setting replaceWithValue must be specified when mode is 'replaceNN'"],
    [{ type: 'reduce', expression: 'A', reducer: 'sum', settings: 'x' }, 'field settings must be an object, got string for refId B'],
    [{ type: 'resample', expression: 'A' }, 'no time duration specified for the window in resample command'],
  ])('%j is refused', (model, message) => {
    expect(() => buildCommand('B', model)).toThrow(message);
  });

  it('names what it needs, `$` or not', () => {
    expect(buildCommand('B', { type: 'math', expression: '$A + ${C} * $A' }).needs).toEqual(['A', 'C', 'A']);
    expect(buildCommand('B', { type: 'reduce', expression: '$A', reducer: 'sum' }).needs).toEqual(['A']);
    expect(buildCommand('B', { type: 'threshold', expression: 'A', conditions: [{ evaluator: { type: 'gt', params: [1] } }] }).needs).toEqual(['A']);
  });
});

describe('classic_conditions', () => {
  const condition = (input: string, reducer: string, type: string, params: number[], operator = 'and') => ({ evaluator: { type, params }, operator: { type: operator }, query: { params: [input] }, reducer: { type: reducer } });
  const runClassic = (conditions: unknown[], vars: Record<string, Value[]>) =>
    buildCommand('C', { type: 'classic_conditions', conditions }).execute(new Map(Object.entries(vars).map(([k, values]) => [k, { values }])), { from: 0, to: 1 })[0] as NumberValue;
  const a = series([0, 1, 2, 3], [1, null, NaN, 9], { host: 'a' });
  const b = series([0, 1], [2, 4], { host: 'b' });

  it.each([
    ['avg', 5], ['sum', 10], ['min', 1], ['max', 9], ['count', 4], ['last', 9], ['median', 5], ['diff', 8], ['diff_abs', 8], ['percent_diff', 800], ['percent_diff_abs', 800], ['count_non_null', 2],
  ])('reducer %s skips null and NaN', (reducer, expected) => {
    // Firing exactly when the reduced value equals the expected one.
    expect(runClassic([condition('A', reducer, 'eq', [expected])], { A: [a] }).value).toBe(1);
    expect(runClassic([condition('A', reducer, 'ne', [expected])], { A: [a] }).value).toBe(0);
  });

  it('one number, 1 when any series matches, the matches in meta.custom', () => {
    const out = runClassic([condition('A', 'max', 'gt', [3])], { A: [a, b] });
    expect(out).toEqual({ kind: 'number', name: '', value: 1, custom: [{ value: '9', metric: 'v', labels: { host: 'a' } }, { value: '4', metric: 'v', labels: { host: 'b' } }] });
    expect(runClassic([condition('A', 'max', 'gt', [30])], { A: [a, b] })).toMatchObject({ value: 0, custom: [] });
  });

  it('conditions combine left to right with and/or, without precedence', () => {
    const yes = condition('A', 'max', 'gt', [3]);
    const no = condition('A', 'max', 'gt', [30]);
    // false OR true AND true = (false OR true) AND true = true
    expect(runClassic([no, { ...yes, operator: { type: 'or' } }, yes], { A: [a] }).value).toBe(1);
    expect(runClassic([yes, no], { A: [a] }).value).toBe(0);
    expect(runClassic([no, { ...yes, operator: { type: 'or' } }], { A: [a] }).value).toBe(1);
  });

  it('no data gives null, unless the evaluator looks for no value', () => {
    const empty = series([], []);
    expect(runClassic([condition('A', 'avg', 'gt', [1])], { A: [empty] })).toEqual({ kind: 'number', name: '', value: null, custom: [{ value: '', metric: 'NoData', labels: null }] });
    expect(runClassic([condition('A', 'avg', 'gt', [1])], { A: [] }).value).toBeNull();
    expect(runClassic([condition('A', 'avg', 'no_value', [])], { A: [] })).toMatchObject({ value: 1, custom: [{ value: '', metric: '', labels: null }] });
    // A no data value matches no_value: firing, not no data.
    expect(runClassic([condition('A', 'avg', 'no_value', [])], { A: [{ kind: 'nodata' }] })).toMatchObject({ value: 1, custom: [{ value: '', metric: '', labels: null }] });
  });

  it.each([
    [[{ ...condition('A', 'avg', 'gt', [1]) }, condition('A', 'avg', 'gt', [1], 'xor')], 'condition 2 operator must be `and` or `or`'],
    [[condition('', 'avg', 'gt', [1])], 'condition 1 is missing the query RefID argument'],
    [[condition('A', 'p95', 'gt', [1])], "invalid reducer 'p95' in condition 1"],
    [[condition('A', 'avg', 'gt', [])], "evaluator 'gt' is missing the threshold parameter"],
    [[condition('A', 'avg', 'within_range', [1])], 'ranged evaluator requires 2 parameters'],
    [[condition('A', 'avg', 'around', [1])], 'evaluator invalid evaluator type: around'],
  ])('refuses %#', (conditions, message) => {
    expect(() => buildCommand('C', { type: 'classic_conditions', conditions })).toThrow(`failed to parse expression 'C': ${message}`);
  });
});
