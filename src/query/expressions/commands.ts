/**
 * The expression commands (`pkg/expr/commands.go`, `threshold.go`, `mathexp/reduce.go`,
 * `mathexp/resample.go`): each model is read into a command with the refIds it needs, or refused
 * with the original's words; running one turns its inputs' values into its own.
 */
import { ownMessage } from '../answer-error.ts';
import { parseSdkDuration } from '../durations.ts';
import { classicConditionsCommand } from './classic.ts';
import { command, type Command } from './command-type.ts';
import { mathSteps } from './math-eval.ts';
import { parseMath, type ParsedExpression } from './math-parse.ts';
import { isNull, newSeries, setNull, typeName, type NumberValue, type SeriesGuard, type Series, type Value } from './values.ts';

export type { Command };

/** Ours: the most points one resample may produce. */
export const MAX_RESAMPLE_POINTS = 1_000_000;

/** Go's `%T` of a decoded JSON value, as the original's messages print it. */
export function goType(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'float64';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return '[]interface {}';
  return 'map[string]interface {}';
}

type Reducer = (values: Float64Array, nulls: Uint8Array | undefined, length: number) => number | null;

const strictNaN = (values: Float64Array, nulls: Uint8Array | undefined, length: number) => {
  for (let i = 0; i < length; i++) if ((nulls && nulls[i]) || Number.isNaN(values[i])) return true;
  return false;
};

/** `GetReduceFunc`; any null or NaN makes sum, mean, min, max and median NaN. */
const REDUCERS: Readonly<Record<string, Reducer>> = {
  sum: (v, n, len) => {
    if (strictNaN(v, n, len)) return NaN;
    let sum = 0;
    for (let i = 0; i < len; i++) sum += v[i];
    return sum;
  },
  mean: (v, n, len) => (REDUCERS.sum(v, n, len) as number) / len,
  min: (v, n, len) => {
    if (len === 0 || strictNaN(v, n, len)) return NaN;
    let min = v[0];
    for (let i = 1; i < len; i++) if (v[i] < min) min = v[i];
    return min;
  },
  max: (v, n, len) => {
    if (len === 0 || strictNaN(v, n, len)) return NaN;
    let max = v[0];
    for (let i = 1; i < len; i++) if (v[i] > max) max = v[i];
    return max;
  },
  count: (_v, _n, len) => len,
  last: (v, n, len) => (len === 0 ? NaN : n && n[len - 1] ? null : v[len - 1]),
  median: (v, n, len) => {
    if (len === 0 || strictNaN(v, n, len)) return NaN;
    const sorted = v.slice(0, len).sort();
    const mid = len >> 1;
    return len % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  },
};

/** `ReduceMapper`: how non-numbers (null, NaN, ±Inf) are treated before and after reducing. */
interface Mapper {
  /** undefined drops the point. */
  input(value: number | null): number | null | undefined;
  output(value: number | null): number | null;
}

const nonNumber = (value: number | null) => value === null || !Number.isFinite(value);

const dropNN: Mapper = {
  input: (value) => (nonNumber(value) ? undefined : value),
  output: (value) => (value !== null && Number.isNaN(value) ? null : value),
};

const replaceNN = (replacement: number): Mapper => ({
  input: (value) => (nonNumber(value) ? replacement : value),
  output: (value) => (value !== null && Number.isNaN(value) ? replacement : value),
});

function reduceSeries(refId: string, reducer: Reducer, series: Series, mapper: Mapper | undefined): NumberValue {
  let values = series.values;
  let nulls = series.nulls;
  let length = values.length;
  if (mapper) {
    values = new Float64Array(length);
    nulls = undefined;
    let n = 0;
    for (let i = 0; i < length; i++) {
      const mapped = mapper.input(isNull(series, i) ? null : series.values[i]);
      if (mapped === undefined || mapped === null) continue;
      values[n++] = mapped;
    }
    length = n;
  }
  let value = reducer(values, nulls, length);
  if (value !== null && mapper) value = mapper.output(value);
  return { kind: 'number', name: refId, labels: series.labels ? { ...series.labels } : undefined, value };
}

const varName = (text: string) => text.replace(/^\$/, '');

function mathCommand(refId: string, model: Readonly<Record<string, unknown>>): Command {
  if (!('expression' in model)) throw new Error('command is missing an expression');
  const expression = model.expression;
  if (typeof expression !== 'string') throw new Error(`math expression is expected to be a string, got ${goType(expression)}`);
  let parsed: ParsedExpression;
  try {
    parsed = parseMath(expression);
  } catch (error) {
    throw new Error(`invalid math command type: ${ownMessage(error)}`);
  }
  return command('math', parsed.varNames, (vars, _range, guard) => mathSteps(refId, parsed, vars, guard));
}

function reduceCommand(refId: string, model: Readonly<Record<string, unknown>>): Command {
  if (!('expression' in model)) throw new Error('no expression ID is specified to reduce. Must be a reference to an existing query or expression');
  if (typeof model.expression !== 'string') throw new Error(`expression ID is expected to be a string, got ${goType(model.expression)}`);
  const input = varName(model.expression);
  if (!('reducer' in model)) throw new Error('no reducer specified');
  if (typeof model.reducer !== 'string') throw new Error(`expected reducer to be a string, got ${goType(model.reducer)}`);
  const reducerName = model.reducer;
  let mapper: Mapper | undefined;
  if ('settings' in model) {
    const settings = model.settings;
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) throw new Error(`field settings must be an object, got ${goType(settings)} for refId ${refId}`);
    const { mode, replaceWithValue } = settings as Record<string, unknown>;
    if (mode !== undefined && mode !== '') {
      if (mode === 'dropNN') mapper = dropNN;
      else if (mode === 'replaceNN') {
        if (!('replaceWithValue' in settings)) throw new Error("setting replaceWithValue must be specified when mode is 'replaceNN'");
        if (typeof replaceWithValue !== 'number') throw new Error(`setting replaceWithValue must be a number, got ${goType(replaceWithValue)}`);
        mapper = replaceNN(replaceWithValue);
      } else throw new Error(`reducer mode '${String(mode)}' is not supported. Supported only: [dropNN,replaceNN]`);
    }
  }
  const reducer = REDUCERS[reducerName.toLowerCase()];
  if (!reducer) throw new Error(`reduction ${reducerName} not implemented`);
  return command('reduce', [input], function* (vars) {
    const out: Value[] = [];
    const values = vars.get(input)?.values ?? [];
    for (let i = 0; i < values.length; i++) {
      const value = values[i]!;
      yield;
      switch (value.kind) {
        case 'series':
          out.push(reduceSeries(refId, reducer, value, mapper));
          break;
        case 'number': {
          // Already one number: nothing to reduce, only the mode applies.
          let result: number | null | undefined = value.value;
          if (mapper) {
            result = mapper.input(result);
            if (result === undefined || result === null) break;
          }
          const copy: NumberValue = { kind: 'number', name: refId, labels: value.labels, value: result };
          if (!mapper && i === 0) copy.notices = [{ severity: 'warning', text: `Reduce operation is not needed. Input query or expression ${input} is already reduced data.` }];
          out.push(copy);
          break;
        }
        case 'nodata':
          out.push({ kind: 'nodata' });
          break;
        default:
          throw new Error(`can only reduce type series, got type ${typeName(value)}`);
      }
    }
    return out;
  });
}

/** `Series.Resample`: one point every window from `from` to `to`, each from the points up to it. */
export function resampleSeries(refId: string, series: Series, interval: number, downsampler: string, upsampler: string, from: number, to: number, guard?: SeriesGuard): Series {
  const length = Math.trunc((to - from) / interval);
  if (length <= 0) throw new Error('the series cannot be sampled further; the time range is shorter than the interval');
  if (length + 1 > MAX_RESAMPLE_POINTS) throw new Error(`resampling would produce more than ${MAX_RESAMPLE_POINTS} points`);
  const out = newSeries(refId, series.labels, length + 1, guard);
  const count = series.times.length;
  const window = new Float64Array(count);
  const windowNulls = new Uint8Array(count);
  let bookmark = 0;
  let lastSeen: number | null = null;
  let lastSeenSet = false;
  for (let idx = 0, t = from; t <= to && idx <= length; idx++, t = from + idx * interval) {
    let n = 0;
    let hasNull = false;
    while (bookmark < count && !(series.times[bookmark] > t)) {
      const nullHere = isNull(series, bookmark);
      window[n] = series.values[bookmark];
      windowNulls[n] = nullHere ? 1 : 0;
      if (nullHere) hasNull = true;
      lastSeen = nullHere ? null : series.values[bookmark];
      lastSeenSet = true;
      bookmark++;
      n++;
    }
    let value: number | null;
    if (n === 0) {
      if (upsampler === 'pad') value = lastSeenSet ? lastSeen : null;
      else if (upsampler === 'backfilling') value = bookmark === count ? null : isNull(series, bookmark) ? null : series.values[bookmark];
      else if (upsampler === 'fillna') value = null;
      else throw new Error(`upsampling ${upsampler} not implemented`);
    } else if (n === 1) {
      value = windowNulls[0] ? null : window[0];
    } else {
      if (!['sum', 'mean', 'min', 'max', 'last'].includes(downsampler)) throw new Error(`downsampling ${downsampler} not implemented`);
      value = REDUCERS[downsampler](window, hasNull ? windowNulls : undefined, n);
    }
    out.times[idx] = t;
    if (value === null) setNull(out, idx);
    else out.values[idx] = value;
  }
  return out;
}

function resampleCommand(refId: string, model: Readonly<Record<string, unknown>>): Command {
  if (!('expression' in model)) throw new Error('no expression ID to resample. must be a reference to an existing query or expression');
  if (typeof model.expression !== 'string') throw new Error(`expected resample input variable to be type string, but got type ${goType(model.expression)}`);
  const input = varName(model.expression);
  if (!('window' in model)) throw new Error('no time duration specified for the window in resample command');
  if (typeof model.window !== 'string') throw new Error(`resample window is expected to be a string, got ${goType(model.window)}`);
  const windowText = model.window;
  if (!('downsampler' in model)) throw new Error('no downsampler function specified in resample command');
  if (typeof model.downsampler !== 'string') throw new Error(`expected resample downsampler to be a string, got type ${goType(model.downsampler)}`);
  const downsampler = model.downsampler;
  if (!('upsampler' in model)) throw new Error('no upsampler specified in resample command');
  if (typeof model.upsampler !== 'string') throw new Error(`expected resample downsampler to be a string, got type ${goType(model.upsampler)}`);
  const upsampler = model.upsampler;
  const interval = parseSdkDuration(windowText);
  // The original prints the zero duration it failed to fill, not the text.
  if (interval === null) throw new Error(`failed to parse resample "window" duration field "0s": time: invalid duration ${JSON.stringify(windowText)}`);
  if (interval <= 0) throw new Error('the series cannot be sampled further; the time range is shorter than the interval');
  return command('resample', [input], function* (vars, range, guard) {
    const out: Value[] = [];
    const inputs = vars.get(input)?.values ?? [];
    // The whole output is known before any of it is built: every series gets the range's windows.
    const windows = Math.trunc((range.to - range.from) / interval) + 1;
    if (windows > 1 && windows <= MAX_RESAMPLE_POINTS) {
      const series = inputs.filter((value) => value.kind === 'series').length;
      guard?.check(series * windows, series);
    }
    for (const value of inputs) {
      if (value.kind === 'series') out.push(resampleSeries(refId, value, interval, downsampler, upsampler, range.from, range.to, guard));
      else if (value.kind === 'nodata') return [...out, { kind: 'nodata' }];
      else throw new Error(`can only resample type series, got type ${typeName(value)}`);
      yield;
    }
    return out;
  });
}

const THRESHOLDS: Readonly<Record<string, { args: number; test: (x: number, a: number, b: number) => boolean }>> = {
  gt: { args: 1, test: (x, a) => x > a },
  lt: { args: 1, test: (x, a) => x < a },
  eq: { args: 1, test: (x, a) => x === a },
  ne: { args: 1, test: (x, a) => x !== a },
  gte: { args: 1, test: (x, a) => x >= a },
  lte: { args: 1, test: (x, a) => x <= a },
  within_range: { args: 2, test: (x, a, b) => x > a && x < b },
  outside_range: { args: 2, test: (x, a, b) => x < a || x > b },
  within_range_included: { args: 2, test: (x, a, b) => x >= a && x <= b },
  outside_range_included: { args: 2, test: (x, a, b) => x <= a || x >= b },
};

function thresholdCommand(refId: string, model: Readonly<Record<string, unknown>>): Command {
  const expression = typeof model.expression === 'string' ? model.expression : '';
  if (model.expression !== undefined && typeof model.expression !== 'string') {
    throw new Error(`failed to parse the threshold command: json: cannot unmarshal ${goType(model.expression) === 'float64' ? 'number' : goType(model.expression)} into Go struct field ThresholdCommandConfig.expression of type string`);
  }
  if (expression === '') throw new Error(`no variable specified to reference for refId ${refId}`);
  const conditions = Array.isArray(model.conditions) ? model.conditions : [];
  if (conditions.length !== 1) throw new Error('threshold expression requires exactly one condition');
  const condition = conditions[0] as Record<string, unknown> | null;
  const evaluator = (condition && typeof condition === 'object' ? condition.evaluator : undefined) as Record<string, unknown> | undefined;
  const type = typeof evaluator?.type === 'string' ? evaluator.type : '';
  const rawParams = Array.isArray(evaluator?.params) ? evaluator.params : [];
  if (rawParams.some((p) => typeof p !== 'number')) throw new Error('failed to parse the threshold command: json: cannot unmarshal string into Go struct field ConditionEvalJSON.conditions.evaluator.params of type float64');
  const params = rawParams as number[];
  const threshold = THRESHOLDS[type];
  if (!threshold) throw new Error(`invalid condition: expected threshold function to be one of [${Object.keys(THRESHOLDS).join(', ')}], got ${type}`);
  if (params.length < threshold.args) throw new Error(`invalid condition: incorrect number of arguments for threshold function '${type}': got ${params.length} but need ${threshold.args}`);
  const [a, b] = params;
  const test = (x: number | null) => (x === null ? null : threshold.test(x, a, b) ? 1 : 0);
  // The original does not strip a `$` here: `$A` names no refId.
  return command('threshold', [expression], function* (vars, _range, guard) {
    const out: Value[] = [];
    for (const value of vars.get(expression)?.values ?? []) {
      out.push(thresholded(value, guard));
      yield;
    }
    return out;
  });

  function thresholded(value: Value, guard: SeriesGuard | undefined): Value {
    switch (value.kind) {
      case 'series': {
        const out = newSeries(refId, value.labels, value.times.length, guard);
        out.times.set(value.times);
        if (value.nulls) out.nulls = value.nulls.slice();
        for (let i = 0; i < out.values.length; i++) out.values[i] = threshold.test(value.values[i], a, b) ? 1 : 0;
        return out;
      }
      case 'number':
        return { kind: 'number', name: refId, labels: value.labels, value: test(value.value) };
      case 'scalar':
        return { kind: 'scalar', value: test(value.value) };
      case 'nodata':
        return { kind: 'nodata' };
    }
  }
}

const BUILDERS: Readonly<Record<string, (refId: string, model: Readonly<Record<string, unknown>>) => Command>> = {
  math: mathCommand,
  reduce: reduceCommand,
  resample: resampleCommand,
  threshold: thresholdCommand,
  classic_conditions: classicConditionsCommand,
};

/** `buildCMDNode`: the command of an expression query, or the original's refusal (whole request). */
export function buildCommand(refId: string, model: Readonly<Record<string, unknown>>): Command {
  if (!('type' in model)) throw new Error(`invalid command type in expression '${refId}': no expression command type in query`);
  const type = model.type;
  if (typeof type !== 'string') throw new Error(`invalid command type in expression '${refId}': expected expression command type to be a string, got type ${goType(type)}`);
  if (type === 'sql') throw new Error('sql expressions are disabled');
  if (type === 'hysteresis') throw new Error(`expression command type '${type}' in expression '${refId}' not implemented`);
  const builder = BUILDERS[type];
  if (!builder) throw new Error(`invalid command type in expression '${refId}': '${type}' is not a recognized expression type`);
  try {
    return builder(refId, model);
  } catch (error) {
    throw new Error(`failed to parse expression '${refId}': ${ownMessage(error)}`);
  }
}
