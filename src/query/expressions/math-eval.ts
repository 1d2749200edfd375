/**
 * Evaluates a parsed math expression over the results of other refIds, with the original's
 * semantics (`mathexp/exp.go`, `funcs.go`): values joined on labels (the union rules), series
 * joined on equal timestamps, null and NaN carried as the original carries them.
 */
import type { Notice } from '../frames/frame.ts';
import { drain, type Steps } from '../slices.ts';
import { nodeText, type Node, type ParsedExpression } from './math-parse.ts';
import {
  isNull, labelCount, labelsContain, labelsString, newSeries,
  type Labels, type NumberValue, type Results, type Scalar, type SeriesGuard, type Series, type Value,
} from './values.ts';

/** Ours: how many pairs one binary operation may compare before it is refused. */
export const MAX_UNION_PAIRS = 1_000_000;

export class MathEvalError extends Error {}

type BinaryFn = (a: number, b: number) => number;

/** Go's math.Pow where it differs from `**`. */
function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return x ** y;
}

const bool = (v: boolean) => (v ? 1 : 0);

/** `binaryOp`: `||` and `&&` short-circuit before NaN; otherwise NaN in gives NaN out. */
const OPS: Readonly<Record<string, BinaryFn>> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '%': (a, b) => a % b,
  '**': goPow,
  '==': (a, b) => bool(a === b),
  '!=': (a, b) => bool(a !== b),
  '>': (a, b) => bool(a > b),
  '<': (a, b) => bool(a < b),
  '>=': (a, b) => bool(a >= b),
  '<=': (a, b) => bool(a <= b),
  '||': (a, b) => bool(a !== 0 || b !== 0),
  '&&': (a, b) => bool(a !== 0 && b !== 0),
};

function binaryFn(op: string): BinaryFn {
  const fn = OPS[op];
  if (!fn) throw new MathEvalError(`expr: unknown operator ${op}`);
  if (op === '||') return (a, b) => (a !== 0 ? 1 : Number.isNaN(b) ? NaN : fn(a, b));
  if (op === '&&') return (a, b) => (a === 0 ? 0 : Number.isNaN(a) || Number.isNaN(b) ? NaN : fn(a, b));
  return (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : fn(a, b));
}

/** Go's math.Round: half away from zero. */
const goRound = (x: number) => (x < 0 ? -Math.round(-x) : Math.round(x));

const PER_FLOAT: Readonly<Record<string, (x: number) => number>> = {
  abs: Math.abs,
  log: Math.log,
  round: goRound,
  ceil: Math.ceil,
  floor: Math.floor,
  is_nan: (x) => bool(Number.isNaN(x)),
  is_inf: (x) => bool(x === Infinity || x === -Infinity),
};

const PER_NULLABLE: Readonly<Record<string, (x: number | null) => number>> = {
  is_null: (x) => bool(x === null),
  is_number: (x) => bool(x !== null && Number.isFinite(x)),
};

const CONSTANTS: Readonly<Record<string, number | null>> = { nan: NaN, inf: Infinity, infn: -Infinity, null: null };

const scalar = (value: number | null): Scalar => ({ kind: 'scalar', value });

/** The common case of two series on the same timestamps, joined without a lookup table. */
function sameTimes(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * One evaluation: a walk of the expression's tree that stops (`yield`) after each value it makes,
 * so that a caller may give the event loop a turn between series.
 */
class Evaluation {
  private readonly refId: string;
  private readonly vars: ReadonlyMap<string, Results>;
  private readonly guard: SeriesGuard | undefined;
  /** Binary node text -> operand text -> labels of the values it dropped. */
  readonly drops = new Map<string, Map<string, Labels[]>>();
  dropCount = 0;

  constructor(refId: string, vars: ReadonlyMap<string, Results>, guard: SeriesGuard | undefined) {
    this.refId = refId;
    this.vars = vars;
    this.guard = guard;
  }

  /**
   * The tree evaluated children first, with a stack of its own rather than recursion: a flat
   * chain of thousands of terms is as deep as it is long.
   */
  *walk(root: Node): Steps<Value[]> {
    const results: Value[][] = [];
    const pending: Array<{ node: Node; ready: boolean }> = [{ node: root, ready: false }];
    while (pending.length > 0) {
      const { node, ready } = pending.pop()!;
      if (!ready) {
        switch (node.type) {
          case 'number':
            results.push([scalar(node.value)]);
            break;
          case 'var':
            results.push(this.vars.get(node.name)?.values ?? []);
            break;
          case 'string':
            throw new MathEvalError(`expr: can not walk node type: string`);
          case 'unary':
            pending.push({ node, ready: true }, { node: node.arg, ready: false });
            break;
          case 'binary':
            // Left first, then right, as the original walks them.
            pending.push({ node, ready: true }, { node: node.right, ready: false }, { node: node.left, ready: false });
            break;
          case 'func':
            if (node.name in CONSTANTS) results.push([scalar(CONSTANTS[node.name])]);
            else pending.push({ node, ready: true }, { node: node.args[0], ready: false });
            break;
        }
        continue;
      }
      switch (node.type) {
        case 'unary': {
          const out: Value[] = [];
          for (const value of results.pop()!) {
            out.push(this.unary(node.op, value));
            yield;
          }
          results.push(out);
          break;
        }
        case 'binary': {
          const right = results.pop()!;
          const left = results.pop()!;
          results.push(yield* this.binary(node, left, right));
          break;
        }
        case 'func':
          results.push(yield* this.func(node, results.pop()!));
          break;
        default:
          break;
      }
    }
    return results.pop()!;
  }

  private unary(op: '!' | '-', value: Value): Value {
    const fn = op === '!' ? (a: number) => (Number.isNaN(a) ? NaN : bool(a === 0)) : (a: number) => -a;
    switch (value.kind) {
      case 'scalar':
        return scalar(value.value === null ? null : fn(value.value));
      case 'number':
        return { kind: 'number', name: this.refId, labels: value.labels, value: value.value === null ? null : fn(value.value) };
      case 'series': {
        const out = newSeries(this.refId, value.labels, value.times.length, this.guard);
        out.times.set(value.times);
        if (value.nulls) out.nulls = value.nulls.slice();
        for (let i = 0; i < out.values.length; i++) out.values[i] = fn(value.values[i]);
        return out;
      }
      case 'nodata':
        return { kind: 'nodata' };
    }
  }

  private *union(a: Value[], b: Value[], node: Extract<Node, { type: 'binary' }>): Steps<{ labels: Labels | undefined; a: Value; b: Value }[]> {
    const unions: { labels: Labels | undefined; a: Value; b: Value }[] = [];
    if (a.length === 0 || b.length === 0) return unions;
    const aMatched = new Uint8Array(a.length);
    const bMatched = new Uint8Array(b.length);
    const collectDrops = () => {
      const key = nodeText(node);
      const record = (operand: string, values: Value[], matched: Uint8Array) => {
        values.forEach((value, i) => {
          if (matched[i] || value.kind === 'nodata') return;
          let byNode = this.drops.get(key);
          if (!byNode) this.drops.set(key, (byNode = new Map()));
          const list = byNode.get(operand) ?? [];
          list.push(value.kind === 'scalar' ? {} : (value.labels ?? {}));
          byNode.set(operand, list);
          this.dropCount++;
        });
      };
      record(nodeText(node.left), a, aMatched);
      record(nodeText(node.right), b, bMatched);
    };
    if ((a.length === 1 || b.length === 1) && (a[0].kind === 'nodata' || b[0].kind === 'nodata')) {
      unions.push({ labels: undefined, a: a[0], b: b[0] });
      collectDrops();
      return unions;
    }
    const labelsOf = (value: Value) => (value.kind === 'series' || value.kind === 'number' ? value.labels : undefined);
    const keyed = (value: Value) => {
      const labels = labelsOf(value);
      const count = labelCount(labels);
      return { labels, count, signature: count === 0 ? '' : labelsString(labels) };
    };
    // Equal label sets are found by their signature; only sets of another size need the subset test.
    const bKeys = b.map(keyed);
    const bBySignature = new Map<string, number[]>();
    const bByCount = new Map<number, number[]>();
    bKeys.forEach((key, i) => {
      bBySignature.set(key.signature, [...(bBySignature.get(key.signature) ?? []), i]);
      bByCount.set(key.count, [...(bByCount.get(key.count) ?? []), i]);
    });
    let work = 0;
    const spend = (n: number) => {
      work += n;
      if (work > MAX_UNION_PAIRS) throw new MathEvalError(`expr: joining ${a.length} by ${b.length} values is more than ${MAX_UNION_PAIRS} pairs`);
    };
    for (let iA = 0; iA < a.length; iA++) {
      const aValue = a[iA]!;
      const aKey = keyed(aValue);
      const matches: { index: number; labels: Labels | undefined }[] = [];
      if (aKey.count === 0) {
        spend(b.length);
        bKeys.forEach((bKey, iB) => matches.push({ index: iB, labels: bKey.labels }));
      } else {
        for (const iB of bBySignature.get(aKey.signature) ?? []) matches.push({ index: iB, labels: aKey.labels });
        for (const iB of bByCount.get(0) ?? []) matches.push({ index: iB, labels: aKey.labels });
        for (const [count, indexes] of bByCount) {
          if (count === 0 || count === aKey.count) continue;
          spend(indexes.length);
          for (const iB of indexes) {
            const bLabels = bKeys[iB].labels;
            if (labelsContain(aKey.labels, bLabels)) matches.push({ index: iB, labels: aKey.labels });
            else if (labelsContain(bLabels, aKey.labels)) matches.push({ index: iB, labels: bLabels });
          }
        }
        matches.sort((x, y) => x.index - y.index);
      }
      spend(matches.length);
      for (const { index, labels } of matches) {
        unions.push({ labels, a: aValue, b: b[index] });
        aMatched[iA] = 1;
        bMatched[index] = 1;
      }
      // Each pair is a value of the answer: past the series the budget leaves, none more is paired.
      if (matches.length > 0) this.guard?.check(0, unions.length);
      yield;
    }
    // One value on each side and no match: combined anyway, labels dropped, as the original does.
    if (unions.length === 0 && a.length === 1 && b.length === 1) unions.push({ labels: undefined, a: a[0], b: b[0] });
    collectDrops();
    return unions;
  }

  private *binary(node: Extract<Node, { type: 'binary' }>, left: Value[], right: Value[]): Steps<Value[]> {
    const fn = binaryFn(node.op);
    const out: Value[] = [];
    for (const { labels, a, b } of yield* this.union(left, right, node)) {
      yield;
      if (a.kind === 'nodata') {
        out.push(a);
        continue;
      }
      if (b.kind === 'nodata') {
        out.push(b);
        continue;
      }
      if (a.kind === 'scalar' && b.kind === 'scalar') {
        out.push(scalar(a.value === null || b.value === null ? null : fn(a.value, b.value)));
      } else if (a.kind === 'series' && b.kind === 'series') {
        out.push(this.seriesSeries(labels, fn, a, b));
      } else if (a.kind === 'series') {
        out.push(this.seriesNumber(labels, fn, a, (b as Scalar | NumberValue).value, true));
      } else if (b.kind === 'series') {
        out.push(this.seriesNumber(labels, fn, b, a.value, false));
      } else {
        const x = a.value;
        const y = (b as Scalar | NumberValue).value;
        const number: NumberValue = { kind: 'number', name: this.refId, labels, value: x === null || y === null ? null : fn(x, y) };
        out.push(number);
      }
    }
    return out;
  }

  private seriesNumber(labels: Labels | undefined, fn: BinaryFn, series: Series, value: number | null, seriesFirst: boolean): Series {
    const length = series.times.length;
    const out = newSeries(this.refId, labels, length, this.guard);
    out.times.set(series.times);
    if (value === null) {
      out.nulls = new Uint8Array(length).fill(1);
      return out;
    }
    if (series.nulls) out.nulls = series.nulls.slice();
    const values = series.values;
    const result = out.values;
    if (seriesFirst) for (let i = 0; i < length; i++) result[i] = fn(values[i], value);
    else for (let i = 0; i < length; i++) result[i] = fn(value, values[i]);
    return out;
  }

  /** `biSeriesSeries`: points where both have the same time, in A's order; the rest dropped. */
  private seriesSeries(labels: Labels | undefined, fn: BinaryFn, a: Series, b: Series): Series {
    if (sameTimes(a.times, b.times)) {
      const out = newSeries(this.refId, labels, a.times.length, this.guard);
      out.times.set(a.times);
      for (let i = 0; i < a.values.length; i++) out.values[i] = fn(a.values[i], b.values[i]);
      if (a.nulls || b.nulls) {
        const nulls = new Uint8Array(a.times.length);
        for (let i = 0; i < nulls.length; i++) nulls[i] = (a.nulls?.[i] ?? 0) | (b.nulls?.[i] ?? 0);
        out.nulls = nulls;
      }
      return out;
    }
    // Its arrays are allocated apart, A's length each: spent before they are.
    const out = newSeries(this.refId, labels, 0, this.guard);
    this.guard?.spend(a.times.length, 0);
    const bIndex = new Map<number, number>();
    for (let i = 0; i < b.times.length; i++) bIndex.set(b.times[i], i);
    const times = new Float64Array(a.times.length);
    const values = new Float64Array(a.times.length);
    let nulls: Uint8Array | undefined;
    let n = 0;
    for (let i = 0; i < a.times.length; i++) {
      const j = bIndex.get(a.times[i]);
      if (j === undefined) continue;
      times[n] = a.times[i];
      if (isNull(a, i) || isNull(b, j)) {
        nulls ??= new Uint8Array(a.times.length);
        nulls[n] = 1;
      } else values[n] = fn(a.values[i], b.values[j]);
      n++;
    }
    out.times = times.slice(0, n);
    out.values = values.slice(0, n);
    if (nulls) out.nulls = nulls.slice(0, n);
    return out;
  }

  private *func(node: Extract<Node, { type: 'func' }>, input: Value[]): Steps<Value[]> {
    const perFloat = PER_FLOAT[node.name];
    const perNullable = PER_NULLABLE[node.name];
    // `perFloat` turns null into NaN without calling the function; `perNullableFloat` sees the null.
    const apply = perFloat ? (x: number | null) => (x === null ? NaN : perFloat(x)) : perNullable;
    const each = (value: Value): Value => {
      switch (value.kind) {
        case 'scalar':
          return scalar(apply(value.value));
        case 'number':
          return { kind: 'number', name: this.refId, labels: value.labels, value: apply(value.value) };
        case 'series': {
          const out = newSeries(this.refId, value.labels, value.times.length, this.guard);
          out.times.set(value.times);
          for (let i = 0; i < out.values.length; i++) out.values[i] = apply(isNull(value, i) ? null : value.values[i]);
          return out;
        }
        case 'nodata':
          return { kind: 'nodata' };
      }
    };
    const out: Value[] = [];
    for (const value of input) {
      out.push(each(value));
      yield;
    }
    return out;
  }

  /** `addDropNotices`: one warning on the first value, naming at most five dropped items per operand. */
  dropNotice(): Notice | undefined {
    if (this.dropCount === 0) return undefined;
    const nodes = [...this.drops].map(([text, operands]) => {
      const parts = [...operands].map(([operand, items]) => {
        const shown = items.slice(0, 5).map((labels) => `{${labelsString(labels)}}`).join(' ');
        return `(${operand}: ${shown}${items.length > 5 ? `...${items.length - 5} more...` : ''})`;
      });
      return `["${text}": ${parts.join(' ')}]`;
    });
    return { severity: 'warning', text: `${this.dropCount} items dropped from union(s)${nodes.length > 0 ? `: ${nodes.join(' ')}` : ''}` };
  }
}

/** Runs `expression` for refId `refId` over the results of the refIds it names. */
export function evaluateMath(refId: string, parsed: ParsedExpression, vars: ReadonlyMap<string, Results>): Value[] {
  return drain(mathSteps(refId, parsed, vars));
}

/** The same as steps, stopping after each value made; every series built is spent from `guard` first. */
export function* mathSteps(refId: string, parsed: ParsedExpression, vars: ReadonlyMap<string, Results>, guard?: SeriesGuard): Steps<Value[]> {
  const evaluation = new Evaluation(refId, vars, guard);
  let values = yield* evaluation.walk(parsed.root);
  const notice = evaluation.dropNotice();
  if (notice && values.length > 0) {
    // Values may be another refId's own (`$A` alone): copy before annotating.
    const first = { ...values[0], notices: [...(values[0].notices ?? []), notice] } as Value;
    values = [first, ...values.slice(1)];
  }
  return values;
}

