/**
 * The REST layer's own shaping: how a REST answer is written from the value its row's document
 * answers, where the wire has what the graph has not. Envelopes (`{"message": "Datasource added",
 * "id": 1, "name": "a", "datasource": {...}}`), legacy fields the original always sends the same
 * (`"password": ""`), values it derives (a logo URL from the kind), Go maps (whose keys the
 * original writes sorted: such a shape is checked to list them so). Declared as data, so that the
 * OpenAPI document describes the same shape the answers have, and compiled once into a plain
 * function per shape: a list of 5,000 rows is shaped with no walk of the value and no closure per row.
 */

/** A JSON schema object in the OpenAPI 3.0 dialect. */
export type JsonSchema = Record<string, unknown>;

/** One value of a shape. */
export type Wire =
  /** An object, its keys in the order written. */
  | { kind: 'object'; fields: ReadonlyArray<readonly [string, Wire]>; component?: string; description?: string }
  /** Each item of a list, shaped alike. */
  | { kind: 'list'; of: Wire }
  /** The value at dotted response keys of the current value (`dataSource.name`), shaped by `wire` if given. */
  | { kind: 'from'; path: readonly string[]; wire?: Wire; description?: string }
  /** A legacy field the original always sends with this value. */
  | { kind: 'constant'; value: unknown; schema: JsonSchema }
  /** A value derived from the one at `path` (the current value itself for an empty path), and the row's variables. */
  | { kind: 'computed'; path: readonly string[]; compute: (value: never, variables: Record<string, unknown>) => unknown; schema: JsonSchema }
  /** One of the row's variables (a page number REST echoes back). */
  | { kind: 'variable'; name: string; schema: JsonSchema };

type Field = Wire | string;

const asWire = (key: string, field: Field): Wire => (typeof field === 'string' ? from(field) : field);
const keysOf = (path: string) => (path === '' ? [] : path.split('.'));

/**
 * An object; a string field reads that key of the value (`id: 'id'`, or `'databaseId'` for an
 * alias the document did not make).
 */
export function object(fields: Readonly<Record<string, Field>>, options: { component?: string; description?: string } = {}): Wire {
  return { kind: 'object', fields: Object.entries(fields).map(([key, field]) => [key, asWire(key, field)] as const), ...options };
}

/** A Go map of the original: `object`, checked to list its keys sorted as Go writes them. */
export function goMap(fields: Readonly<Record<string, Field>>, options: { component?: string; description?: string } = {}): Wire {
  const keys = Object.keys(fields);
  const sorted = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.join() !== sorted.join()) throw new Error(`A Go map's keys are written sorted: ${sorted.join(', ')}`);
  return object(fields, options);
}

export const list = (of: Wire): Wire => ({ kind: 'list', of });
export const from = (path: string, wire?: Wire, description?: string): Wire => ({ kind: 'from', path: keysOf(path), wire, description });
export const constant = (value: unknown, schema: JsonSchema): Wire => ({ kind: 'constant', value, schema });
export const computed = <T>(path: string, compute: (value: T, variables: Record<string, unknown>) => unknown, schema: JsonSchema): Wire =>
  ({ kind: 'computed', path: keysOf(path), compute: compute as (value: never, variables: Record<string, unknown>) => unknown, schema });
export const variable = (name: string, schema: JsonSchema): Wire => ({ kind: 'variable', name, schema });

export type Shaper = (value: unknown, variables: Record<string, unknown>) => unknown;

/**
 * The function writing `wire`: generated code reading each key as a property, a loop per list,
 * null passed through where the graph answered null.
 */
export function compileWire(wire: Wire): Shaper {
  const bound: unknown[] = [];
  const bind = (value: unknown) => `b[${bound.push(value) - 1}]`;
  const functions: string[] = [];
  const compileValue = (w: Wire, value: string): string => {
    switch (w.kind) {
      case 'object': return `${compileFunction(w)}(${value}, vars)`;
      case 'list': return `${compileFunction(w)}(${value}, vars)`;
      case 'from': {
        const read = access(value, w.path);
        return w.wire ? compileValue(w.wire, read) : read;
      }
      // JSON is a JavaScript expression: a constant object or list is made afresh for every answer.
      case 'constant': return JSON.stringify(w.value);
      case 'computed': return `${bind(w.compute)}(${access(value, w.path)}, vars)`;
      case 'variable': return `vars[${JSON.stringify(w.name)}]`;
    }
  };
  const compileFunction = (w: Extract<Wire, { kind: 'object' | 'list' }>): string => {
    const name = `f${functions.length}`;
    functions.push('');
    let body: string;
    if (w.kind === 'list') {
      body = `if (v === null || v === undefined) return v; const n = v.length, out = new Array(n); for (let i = 0; i < n; i++) out[i] = ${compileValue(w.of, 'v[i]')}; return out;`;
    } else {
      body = `if (v === null || v === undefined) return v; return { ${w.fields.map(([key, field]) => `${JSON.stringify(key)}: ${compileValue(field, 'v')}`).join(', ')} };`;
    }
    functions[Number(name.slice(1))] = `function ${name}(v, vars) { ${body} }`;
    return name;
  };
  const entry = compileValue(wire, 'value');
  // Generated from the shapes declared in this layer's code, never from input.
  const make = new Function('b', `${functions.join('\n')}\nreturn function shape(value, vars) { return ${entry}; };`) as (bound: unknown[]) => Shaper;
  return make(bound);
}

/** `value` read along `path`, null (or undefined) passed through. */
function access(value: string, path: readonly string[]): string {
  return path.reduce((read, key) => `${read}?.[${JSON.stringify(key)}]`, value);
}
