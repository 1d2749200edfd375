import fc from 'fast-check';

/**
 * Upstream answers as a hostile or broken upstream writes them, for the scanners' differential
 * tests: JSON text built from values and raw literals (`1e400`, which no JSON.stringify writes),
 * with random whitespace, so the byte readers meet every spacing and member order.
 */

/** A literal written as it is. */
export class Raw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export const raw = (text: string) => new Raw(text);

/** A JSON object whose members keep this order, duplicates and `__proto__` included. */
export class Members {
  readonly entries: ReadonlyArray<readonly [string, unknown]>;
  constructor(entries: ReadonlyArray<readonly [string, unknown]>) {
    this.entries = entries;
  }
}

export const members = (...entries: Array<readonly [string, unknown]>) => new Members(entries);

const SPACES = [' ', '\n', '\t', '\r\n  '];

/** JSON text of `value`; `spacing` picks the whitespace before each token (empty mostly). */
export function jsonText(value: unknown, spacing: () => string = () => ''): string {
  const ws = spacing;
  if (value instanceof Raw) return value.text;
  if (value instanceof Members) return `{${value.entries.map(([k, v]) => `${ws()}${JSON.stringify(k)}${ws()}:${ws()}${jsonText(v, spacing)}${ws()}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map((v) => `${ws()}${jsonText(v, spacing)}${ws()}`).join(',')}]`;
  if (value !== null && typeof value === 'object') return jsonText(new Members(Object.entries(value)), spacing);
  return JSON.stringify(value);
}

/** A spacing drawn from a seed: no whitespace at all, or some before a fifth of the tokens. */
export function spacingOf(seed: number): () => string {
  if (seed % 3 === 0) return () => '';
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % 5 === 0 ? SPACES[state % SPACES.length]! : '';
  };
}

/** Sample value strings: plain decimals (the fast path) and everything strconv.ParseFloat decides on. */
export const sampleText = fc.oneof(
  { weight: 6, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => String(v)) },
  { weight: 3, arbitrary: fc.integer({ min: -1e6, max: 1e6 }).map((v) => String(v / 100)) },
  { weight: 4, arbitrary: fc.constantFrom('', ' 12 ', '0x10', '0b11', '0o7', 'NaN', 'nan', '+Inf', '-Inf', 'Inf', 'infinity', '+NaN', '1e400', '-1e400',
    '0x1p-2', '0x1.8p1', '1_000', '1__0', '.5', '5.', '-', '1.2.3', '00012', '1e-400', 'true', 'null', '١', 'é') },
);

/** A sample value as an upstream may send it: a string mostly, else what the original refuses. */
export const sampleValue = fc.oneof(
  { weight: 10, arbitrary: sampleText },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(raw('12'), null, true, raw('1e400'), ['1'], members(['v', '1'])) },
  { weight: 1, arbitrary: sampleText.map((t) => raw(JSON.stringify(t).replace(/[0-9]/, (d) => `\\u003${d}`))) },
);

/** A time in float seconds as an upstream may send it. */
export const sampleTime = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 2_000_000_000 }).map((s) => raw(String(s))) },
  { weight: 3, arbitrary: fc.double({ min: -1e10, max: 1e10, noNaN: true }).map((s) => raw(String(s).replace('Infinity', '1e400'))) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(raw('1e400'), raw('-1e400'), raw('1e306'), raw('1e16'), raw('9.2e15'), raw('-0'), raw('1.7e9'), raw('0.0005'), '123', null, true) },
);

/** Label values: strings mostly, then the other types upstreams have sent. */
export const labelValue = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 5, raw('1e400'), true, members(['a', 'b']), ['x']) },
);

export const labelName = fc.constantFrom('__name__', 'job', 'instance', 'constructor', '__proto__', 'toString', 'a', 'é');

/** A label object: keys in order, `__proto__` and `constructor` among them. */
export const labels = fc.array(fc.tuple(labelName, labelValue), { maxLength: 4 })
  .map((pairs) => members(...pairs.filter(([k], i) => pairs.findIndex(([j]) => j === k) === i)));

/** Mostly `value`, sometimes one of the things an upstream should never send in its place. */
export function sometimes<T>(arbitrary: fc.Arbitrary<T>, hostile: unknown[]): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 12, arbitrary }, { weight: 1, arbitrary: fc.constantFrom(...hostile) });
}
