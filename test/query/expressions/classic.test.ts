import { describe, expect, it } from '@jest/globals';
import { classicConditionsCommand } from '../../../src/query/expressions/classic.ts';
import type { NumberValue, Results, Series, Value } from '../../../src/query/expressions/values.ts';

// classic_conditions: each condition reduces its query's series, tests the result, and the
// conditions combine left to right; the answer is 1 firing, 0 normal, null no data.

function series(values: (number | null)[], labels?: Record<string, string>, name = 'cpu'): Series {
  const s: Series = { kind: 'series', name, labels, times: Float64Array.from(values.map((_, i) => i * 1000)), values: Float64Array.from(values.map((v) => v ?? 0)) };
  if (values.includes(null)) s.nulls = Uint8Array.from(values.map((v) => (v === null ? 1 : 0)));
  return s;
}

interface Cond { input?: string; reducer?: string; type?: string; params?: number[]; operator?: string }

const condition = ({ input = 'A', reducer = 'last', type = 'gt', params = [5], operator = 'and' }: Cond) => ({
  query: { params: [input] }, reducer: { type: reducer }, evaluator: { type, params }, operator: { type: operator },
});

function run(conditions: Cond[], vars: Record<string, Value[]>): NumberValue {
  const command = classicConditionsCommand('C', { conditions: conditions.map(condition) });
  const map = new Map<string, Results>(Object.entries(vars).map(([k, values]) => [k, { values }]));
  const out = command.execute(map, { from: 0, to: 10_000 });
  expect(out).toHaveLength(1);
  return out[0] as NumberValue;
}

/** The value one reducer gives one series, read through an evaluator that passes any number. */
function reduce(reducer: string, values: (number | null)[]): number | null {
  const result = run([{ reducer, type: 'gt', params: [-Infinity] }], { A: [series(values)] });
  if (result.value === null) return null;
  const match = (result.custom as { value: string }[])[0];
  return match.value === '' ? null : Number(match.value);
}

describe('classic reducers (nulls and NaN skipped)', () => {
  const data = [3, null, NaN, 1, 8, 4];
  it.each([
    ['avg', data, 4], ['sum', data, 16], ['min', data, 1], ['max', data, 8], ['count', data, 6], ['last', data, 4],
    ['median', data, 3.5], ['median', [5, 1, 9], 5], ['count_non_null', data, 4],
    ['diff', data, 1], ['diff', [10, 4], -6], ['diff_abs', [10, 4], 6],
    ['percent_diff', [-4, 2], 150], ['percent_diff', [10, 4], -60], ['percent_diff_abs', [10, 4], 60],
    ['diff', [7], 0], ['percent_diff', [null, 7], 0],
  ])('%s of %j is %p', (reducer, values, expected) => {
    expect(reduce(reducer, values)).toBe(expected);
  });

  it.each(['avg', 'sum', 'min', 'max', 'last', 'median', 'diff', 'diff_abs', 'percent_diff', 'percent_diff_abs', 'count_non_null'])(
    '%s of a series with no valid point is no data', (reducer) => {
      const result = run([{ reducer, type: 'gt', params: [-Infinity] }], { A: [series([null, NaN])] });
      expect(result.value).toBeNull();
      expect(result.custom).toEqual([{ value: '', metric: 'NoData', labels: null }]);
    },
  );

  it('count counts every point, nulls included, and an empty series is no data', () => {
    expect(reduce('count', [null, null])).toBe(2);
    expect(run([{ reducer: 'count', type: 'gt', params: [-1] }], { A: [series([])] }).value).toBeNull();
  });
});

describe('evaluators', () => {
  it.each([
    ['gt', [5], 6, 1], ['gt', [5], 5, 0], ['lt', [5], 4, 1], ['lt', [5], 5, 0],
    ['gte', [5], 5, 1], ['lte', [5], 5, 1], ['lte', [5], 6, 0], ['eq', [5], 5, 1], ['eq', [5], 4, 0], ['ne', [5], 4, 1], ['ne', [5], 5, 0],
    ['within_range', [1, 10], 5, 1], ['within_range', [10, 1], 5, 1], ['within_range', [1, 10], 10, 0],
    ['within_range_included', [1, 10], 10, 1], ['within_range_included', [1, 10], 11, 0],
    ['outside_range', [1, 10], 11, 1], ['outside_range', [10, 1], 0, 1], ['outside_range', [1, 10], 1, 0],
    ['outside_range_included', [1, 10], 1, 1], ['outside_range_included', [1, 10], 5, 0],
  ])('%s %j with last value %p answers %p', (type, params, value, expected) => {
    expect(run([{ type, params }], { A: [series([value])] }).value).toBe(expected);
  });

  it('no_value fires on an absent input with one empty match, and on a series with no valid point', () => {
    const absent = run([{ type: 'no_value', params: [] }], {});
    expect(absent).toMatchObject({ value: 1, custom: [{ value: '', metric: '', labels: null }] });
    const empty = run([{ type: 'no_value', params: [] }], { A: [series([null])] });
    expect(empty.value).toBe(1);
    expect(empty.custom).toEqual([{ value: '', metric: 'cpu', labels: null }]);
    expect(run([{ type: 'no_value', params: [] }], { A: [series([3])] }).value).toBe(0);
  });
});

describe('inputs and matches', () => {
  it('every matching series is a match carrying its value as a string, its name and a copy of its labels', () => {
    const labels = { host: 'a' };
    const result = run([{ type: 'gt', params: [5] }], { A: [series([9.5], labels, 'x'), series([1], { host: 'b' }, 'y')] });
    expect(result.value).toBe(1);
    expect(result.custom).toEqual([{ value: '9.5', metric: 'x', labels: { host: 'a' } }]);
    expect((result.custom as { labels: unknown }[])[0].labels).not.toBe(labels);
  });

  it('a number input is tested as is, without labels in its match; a nodata input counts as no data', () => {
    const number: NumberValue = { kind: 'number', name: 'n', labels: { k: 'v' }, value: 7 };
    expect(run([{ type: 'gt', params: [5] }], { A: [number] }).custom).toEqual([{ value: '7', metric: 'n', labels: { k: 'v' } }]);
    expect(run([{ type: 'gt', params: [5] }], { A: [{ kind: 'nodata' }] }).value).toBeNull();
  });

  it('a scalar input is refused', () => {
    expect(() => run([{}], { A: [{ kind: 'scalar', value: 1 } as Value] })).toThrow('can only reduce type series, got type scalar');
  });

  it('an absent input with a threshold evaluator is no data (every one of its zero values was null)', () => {
    expect(run([{ type: 'gt', params: [5] }], {})).toMatchObject({ value: null, custom: [{ value: '', metric: 'NoData', labels: null }] });
  });

  it('no data only when every series is null: one real value keeps the answer a number', () => {
    expect(run([{ type: 'gt', params: [5] }], { A: [series([null]), series([1])] }).value).toBe(0);
  });
});

describe('combining conditions left to right, no precedence', () => {
  const T = { input: 'A', type: 'gt', params: [0] }; // A holds 1: true
  const F = { input: 'A', type: 'lt', params: [0] }; // false
  it.each([
    [[T, { ...T, operator: 'and' }], 1], [[T, { ...F, operator: 'and' }], 0], [[F, { ...T, operator: 'or' }], 1], [[F, { ...F, operator: 'or' }], 0],
    // (T or F) and F = 0, where precedence would give T or (F and F) = 1
    [[T, { ...F, operator: 'or' }, { ...F, operator: 'and' }], 0],
    // (F and T) or T = 1
    [[F, { ...T, operator: 'and' }, { ...T, operator: 'or' }], 1],
    // The first condition's operator is not read.
    [[{ ...T, operator: 'xor' }], 1],
  ])('%j answers %p', (conditions, expected) => {
    expect(run(conditions as Cond[], { A: [series([1])] }).value).toBe(expected);
  });

  it('no data combines like firing: with and, every condition must lack data; with or, any', () => {
    const noData = { input: 'B', type: 'gt', params: [0] };
    // T and (no data): not firing, and not no data since the first condition had data.
    expect(run([T, { ...noData, operator: 'and' }], { A: [series([1])] }).value).toBe(0);
    expect(run([T, { ...noData, operator: 'or' }], { A: [series([1])] }).value).toBeNull();
  });

  it('needs lists each condition input in order', () => {
    expect(classicConditionsCommand('C', { conditions: [condition({ input: 'B' }), condition({ input: 'A' })] }).needs).toEqual(['B', 'A']);
  });
});

describe('models refused', () => {
  it.each([
    [{}, 'failed to unmarshal remarshaled classic condition body'],
    [{ conditions: [condition({}), condition({ operator: 'xor' })] }, 'condition 2 operator must be `and` or `or`'],
    [{ conditions: [{ ...condition({}), query: { params: [] } }] }, 'condition 1 is missing the query RefID argument'],
    [{ conditions: [condition({ reducer: 'mode' })] }, "invalid reducer 'mode' in condition 1"],
    [{ conditions: [condition({ type: 'gt', params: [] })] }, "evaluator 'gt' is missing the threshold parameter"],
    [{ conditions: [condition({ type: 'within_range', params: [1] })] }, 'ranged evaluator requires 2 parameters'],
    [{ conditions: [condition({ type: 'between' })] }, 'evaluator invalid evaluator type: between'],
  ])('%j', (model, message) => {
    expect(() => classicConditionsCommand('C', model)).toThrow(message);
  });
});
