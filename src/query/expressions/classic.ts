/**
 * `classic_conditions` (`pkg/expr/classic`): the legacy alert rule. Each condition reduces the
 * series of one data source query (nulls and NaN skipped), checks every result with its evaluator,
 * and the conditions combine left to right with `and`/`or`, no precedence. The answer is one
 * number: 1 firing, 0 normal, null no data; the matches go in `meta.custom`.
 */
import { command, type Command } from './command-type.ts';
import { isNull, type Labels, type NumberValue, type Series, type Value } from './values.ts';

type ClassicReducer = (series: Series) => number | null;

/** The series' values that are neither null nor NaN. */
function valid(series: Series): number[] {
  const out: number[] = [];
  for (let i = 0; i < series.values.length; i++) if (!isNull(series, i) && !Number.isNaN(series.values[i])) out.push(series.values[i]);
  return out;
}

const diffOf = (fn: (newest: number, oldest: number) => number): ClassicReducer => (series) => {
  const values = valid(series);
  if (values.length === 0) return null;
  // With one point the original answers 0: there is nothing to compare with.
  if (values.length === 1) return 0;
  return fn(values[values.length - 1], values[0]);
};

/** `classicReducer.Reduce`: an empty series, or one with no valid point, is no data (null). */
const REDUCE_FNS: Readonly<Record<string, ClassicReducer>> = {
  avg: (s) => { const v = valid(s); return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length; },
  sum: (s) => { const v = valid(s); return v.length === 0 ? null : v.reduce((a, b) => a + b, 0); },
  min: (s) => { const v = valid(s); return v.length === 0 ? null : Math.min(...v); },
  max: (s) => { const v = valid(s); return v.length === 0 ? null : Math.max(...v); },
  count: (s) => s.values.length,
  last: (s) => { const v = valid(s); return v.length === 0 ? null : v[v.length - 1]; },
  median: (s) => {
    const v = valid(s).sort((a, b) => a - b);
    if (v.length === 0) return null;
    return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  },
  diff: diffOf((n, o) => n - o),
  diff_abs: diffOf((n, o) => Math.abs(n - o)),
  percent_diff: diffOf((n, o) => ((n - o) / Math.abs(o)) * 100),
  percent_diff_abs: diffOf((n, o) => Math.abs(((n - o) / o) * 100)),
  count_non_null: (s) => { const n = valid(s).length; return n > 0 ? n : null; },
};

const REDUCERS: Readonly<Record<string, ClassicReducer>> = Object.fromEntries(
  Object.entries(REDUCE_FNS).map(([name, fn]) => [name, (series: Series) => (series.values.length === 0 ? null : fn(series))]),
);

type Evaluator = { noValue: boolean; test: (value: number | null) => boolean };

function evaluatorOf(model: Record<string, unknown>): Evaluator {
  const type = typeof model.type === 'string' ? model.type : '';
  const params = Array.isArray(model.params) ? (model.params as number[]) : [];
  const threshold: Record<string, (v: number, t: number) => boolean> = {
    gt: (v, t) => v > t, lt: (v, t) => v < t, eq: (v, t) => v === t, ne: (v, t) => v !== t, gte: (v, t) => v >= t, lte: (v, t) => v <= t,
  };
  if (threshold[type]) {
    if (params.length === 0) throw new Error(`evaluator '${type}' is missing the threshold parameter`);
    return { noValue: false, test: (v) => v !== null && threshold[type](v, params[0]) };
  }
  const ranged: Record<string, (v: number, lo: number, up: number) => boolean> = {
    within_range: (v, lo, up) => (lo < v && up > v) || (up < v && lo > v),
    outside_range: (v, lo, up) => (up < v && lo < v) || (up > v && lo > v),
    within_range_included: (v, lo, up) => (lo <= v && up >= v) || (up <= v && lo >= v),
    outside_range_included: (v, lo, up) => (up <= v && lo <= v) || (up >= v && lo >= v),
  };
  if (ranged[type]) {
    if (params.length !== 2) throw new Error('ranged evaluator requires 2 parameters');
    return { noValue: false, test: (v) => v !== null && ranged[type](v, params[0], params[1]) };
  }
  if (type === 'no_value') return { noValue: true, test: (v) => v === null };
  throw new Error(`evaluator invalid evaluator type: ${type}`);
}

interface Condition {
  input: string;
  reducer: ClassicReducer;
  evaluator: Evaluator;
  operator: string;
}

/** An `EvalMatch` as the original writes it: the value as Go formats it, or "". */
interface Match {
  value: string;
  metric: string;
  labels: Labels | null;
}

const object = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

export function classicConditionsCommand(refId: string, model: Readonly<Record<string, unknown>>): Command {
  if (!Array.isArray(model.conditions)) throw new Error('failed to unmarshal remarshaled classic condition body: json: cannot unmarshal into Go value of type []classic.ConditionJSON');
  const conditions: Condition[] = model.conditions.map((raw, i): Condition => {
    const condition = object(raw);
    const operator = String(object(condition.operator).type ?? '');
    if (i > 0 && operator !== 'and' && operator !== 'or') throw new Error(`condition ${i + 1} operator must be \`and\` or \`or\``);
    const params = object(condition.query).params;
    const input = Array.isArray(params) && typeof params[0] === 'string' ? params[0] : '';
    if (input === '') throw new Error(`condition ${i + 1} is missing the query RefID argument`);
    const reducerName = String(object(condition.reducer).type ?? '');
    const reducer = REDUCERS[reducerName];
    if (!reducer) throw new Error(`invalid reducer '${reducerName}' in condition ${i + 1}`);
    return { input, reducer, evaluator: evaluatorOf(object(condition.evaluator)), operator };
  });
  // Each series is reduced to one number, nothing of its size is built: it runs at once.
  return command('classic_conditions', conditions.map((c) => c.input), function* (vars) {
    let firing = false;
    let noData = false;
    const matches: Match[] = [];
    conditions.forEach((condition, i) => {
      const values: Value[] = vars.get(condition.input)?.values ?? [];
      let condFiring = false;
      let noDataCount = 0;
      if (values.length === 0 && condition.evaluator.noValue) {
        condFiring = true;
        matches.push({ value: '', metric: '', labels: null });
      } else {
        for (const value of values) {
          let name = '';
          let number: { value: number | null; labels?: Labels };
          if (value.kind === 'nodata') number = { value: null };
          else if (value.kind === 'number') {
            name = value.name;
            number = value;
          } else if (value.kind === 'series') {
            name = value.name;
            number = { value: condition.reducer(value), labels: value.labels };
          } else throw new Error('can only reduce type series, got type scalar');
          if (condition.evaluator.test(number.value)) {
            condFiring = true;
            matches.push({ value: number.value === null ? '' : String(number.value), metric: name, labels: number.labels ? { ...number.labels } : null });
          } else if (number.value === null) noDataCount++;
        }
      }
      const condNoData = !(values.length === 0 && condition.evaluator.noValue) && noDataCount === values.length;
      if (condNoData) matches.push({ value: '', metric: 'NoData', labels: null });
      const combine = (a: boolean, b: boolean) => (condition.operator === 'or' ? a || b : a && b);
      firing = i === 0 ? condFiring : combine(firing, condFiring);
      noData = i === 0 ? condNoData : combine(noData, condNoData);
    });
    const result: NumberValue = { kind: 'number', name: '', value: noData ? null : firing ? 1 : 0, custom: matches };
    return [result];
  });
}
