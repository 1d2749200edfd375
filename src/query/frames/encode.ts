import type { ColumnEntities as Entities, DataResponse, Field, FieldConfig, FieldType, Frame, FrameMeta, Notice } from './frame.ts';
import { drain, drainSliced, type Steps } from '../slices.ts';

/**
 * Data frames and query answers as JSON, byte for byte as the original's plugin SDK writes them
 * (`data/frame_json.go`, `backend/json.go`): key orders of its structs, `typeInfo.frame` with a
 * separate `nullable`, `typeVersion` always inside `meta`, times as epoch milliseconds with
 * `nanos` where finer, NaN and ±Inf as `null` plus `entities`, strings escaped as Go escapes
 * them (`<`, `>`, `&`, U+2028, U+2029), floats printed as Go prints them. Written straight
 * to a string: no intermediate objects per value.
 */

/** The JS type the wire format reports for each Go type. */
const SIMPLE_TYPE: Record<FieldType, string> = {
  int8: 'number', int16: 'number', int32: 'number', int64: 'number', uint8: 'number', uint16: 'number', uint32: 'number',
  uint64: 'number', float32: 'number', float64: 'number', string: 'string', bool: 'boolean', 'time.Time': 'time',
  'json.RawMessage': 'other', enum: 'enum',
};

const NEEDS_ESCAPE = /[<>&\u2028\u2029]/;
const GO_ESCAPES = /[<>&\u2028\u2029]/g;
const GO_ESCAPE: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/** A JSON string as Go's encoder (HTML-safe) writes it. */
export function goString(value: string): string {
  return goEscaped(JSON.stringify(value));
}

/** JSON text with Go's HTML-safe escapes applied inside its strings. */
function goEscaped(json: string): string {
  return NEEDS_ESCAPE.test(json) ? json.replace(GO_ESCAPES, (c) => GO_ESCAPE[c]!) : json;
}

/**
 * A finite float as Go writes it: shortest form, plain decimals except below 1e-6 and from 1e21,
 * where the exponent has at least two digits (`1e-07`, `1e+21`).
 */
export function goFloat(value: number): string {
  const text = String(value);
  const e = text.indexOf('e');
  if (e < 0) return text;
  const sign = text[e + 1] === '-' ? '-' : '+';
  const digits = text.slice(e + 2);
  return `${text.slice(0, e)}e${sign}${digits.length < 2 ? `0${digits}` : digits}`;
}

/** Any JSON value as Go writes `interface{}` (maps: keys sorted; strings HTML-safe). */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string': return goString(value);
    case 'number': return Number.isFinite(value) ? goFloat(value) : 'null';
    case 'boolean': return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
      const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
      return `{${keys.map((k) => `${goString(k)}:${goJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
    }
    default: return 'null';
  }
}

/** A struct member: its key, and its JSON from the struct, undefined when not written (`omitempty`). */
type Member<T> = readonly [key: string, json: (owner: T) => string | undefined];

/**
 * The members of `owner` in the struct's order, each written when set. The member tables are made
 * once: a frame's meta and each field's config are written per frame, thousands per answer.
 */
function struct<T>(owner: T, members: ReadonlyArray<Member<T>>): string {
  let out = '';
  for (let i = 0; i < members.length; i++) {
    const [key, write] = members[i]!;
    const json = write(owner);
    if (json !== undefined) out += `${out ? ',' : ''}"${key}":${json}`;
  }
  return `{${out}}`;
}

const str = (v: string | undefined) => (v ? goString(v) : undefined);
const num = (v: number | undefined) => (v !== undefined && Number.isFinite(v) && v !== 0 ? goFloat(v) : undefined);
const any = (v: unknown) => (v === undefined || v === null ? undefined : goJson(v));
const flag = (v: boolean | undefined) => (v ? 'true' : undefined);
/** The SDK's `ConfFloat64`: NaN and ±Inf are written as null. */
const confFloat = (v: number | undefined) => (v === undefined ? undefined : Number.isFinite(v) ? goFloat(v) : 'null');

const NOTICE: ReadonlyArray<Member<Notice>> = [
  ['severity', (n) => str(n.severity ?? 'info')],
  ['text', (n) => goString(n.text)],
  ['link', (n) => str(n.link)],
  ['inspect', (n) => str(n.inspect)],
];

const META: ReadonlyArray<Member<FrameMeta>> = [
  ['type', (m) => str(m.type)],
  ['typeVersion', (m) => (m.typeVersion ? `[${m.typeVersion[0]},${m.typeVersion[1]}]` : '[0,0]')],
  ['path', (m) => str(m.path)],
  ['pathSeparator', (m) => str(m.pathSeparator)],
  ['custom', (m) => any(m.custom)],
  ['stats', (m) => (m.stats?.length ? goJson(m.stats) : undefined)],
  ['notices', (m) => (m.notices?.length ? `[${m.notices.map((n) => struct(n, NOTICE)).join(',')}]` : undefined)],
  ['channel', (m) => str(m.channel)],
  ['preferredVisualisationType', (m) => str(m.preferredVisualisationType)],
  ['preferredVisualisationPluginId', (m) => str(m.preferredVisualisationPluginId)],
  ['executedQueryString', (m) => str(m.executedQueryString)],
  ['dataTopic', (m) => str(m.dataTopic)],
  ['uniqueRowIdFields', (m) => (m.uniqueRowIdFields?.length ? `[${m.uniqueRowIdFields.join(',')}]` : undefined)],
];

const CONFIG: ReadonlyArray<Member<FieldConfig>> = [
  ['displayName', (c) => str(c.displayName)],
  ['displayNameFromDS', (c) => str(c.displayNameFromDS)],
  ['path', (c) => str(c.path)],
  ['description', (c) => str(c.description)],
  ['filterable', (c) => flag(c.filterable)],
  ['writeable', (c) => flag(c.writeable)],
  ['unit', (c) => str(c.unit)],
  ['decimals', (c) => confFloat(c.decimals)],
  ['min', (c) => confFloat(c.min)],
  ['max', (c) => confFloat(c.max)],
  ['interval', (c) => num(c.interval)],
  ['mappings', (c) => any(c.mappings)],
  ['thresholds', (c) => any(c.thresholds)],
  ['color', (c) => any(c.color)],
  ['links', (c) => any(c.links)],
  ['noValue', (c) => str(c.noValue)],
  ['type', (c) => any(c.type)],
  ['custom', (c) => (c.custom && Object.keys(c.custom).length ? goJson(c.custom) : undefined)],
];

const ENTITIES: ReadonlyArray<Member<Entities>> = [
  ['NaN', (e) => list(e.NaN)],
  ['Inf', (e) => list(e.Inf)],
  ['NegInf', (e) => list(e.NegInf)],
];

const encodeMeta = (meta: FrameMeta) => struct(meta, META);
const encodeConfig = (config: FieldConfig) => struct(config, CONFIG);

function encodeFieldSchema(field: Field): string {
  let out = '{';
  if (field.name) out += `"name":${goString(field.name)},`;
  out += `"type":"${SIMPLE_TYPE[field.type]}","typeInfo":{"frame":"${field.type}"${field.nullable ? ',"nullable":true' : ''}}`;
  if (field.labels) out += `,"labels":${goJson(field.labels)}`;
  if (field.config) out += `,"config":${encodeConfig(field.config)}`;
  return `${out}}`;
}

/**
 * Whether every value is a number that JavaScript's JSON writes exactly as Go does: no null, no
 * NaN or infinity, nothing in exponent form (Go pads the exponent to two digits), and for integer
 * columns no fraction. Such a column (nearly every time and value column) is written natively.
 */
export function plainNumbers(values: readonly unknown[], integers: boolean): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !(v < 1e21 && v > -1e21)) return false;
    if (integers ? !Number.isInteger(v) : v !== 0 && v < 1e-6 && v > -1e-6) return false;
  }
  return true;
}

/** An integer's digits as Go writes an int64 (no exponent, as JavaScript writes from 1e21). */
const intText = (v: number) => (v < 1e21 && v > -1e21 ? String(v) : BigInt(v).toString());

/** One field's values; floats record their non-finite rows in `entities`. */
function encodeValues(field: Field, entities: Entities): string {
  const values = field.values;
  const n = values.length;
  if (n === 0) return '[]';
  // The characters Go escapes occur only inside strings, so escaping the array's JSON at once
  // is escaping each value.
  if (field.type === 'string') return goEscaped(JSON.stringify(values));
  if (field.type !== 'json.RawMessage' && field.type !== 'bool'
    && plainNumbers(values, field.type !== 'float32' && field.type !== 'float64')) return JSON.stringify(values);
  let out = '[';
  switch (field.type) {
    case 'float32':
    case 'float64':
      for (let i = 0; i < n; i++) {
        const v = values[i] as number | null;
        if (i) out += ',';
        if (v === null || v === undefined) out += 'null';
        else if (v - v === 0) out += v < 1e21 && v > -1e21 && (v >= 1e-6 || v <= -1e-6 || v === 0) ? v : goFloat(v);
        else {
          out += 'null';
          const kind = v !== v ? 'NaN' : v > 0 ? 'Inf' : 'NegInf';
          (entities[kind] ??= []).push(i);
        }
      }
      break;
    case 'json.RawMessage': {
      // Rows often share one value (a log stream's labels): written once, its text reused, and
      // the rows joined at once rather than appended one by one into a deep rope.
      const rows = new Array<string>(n);
      let last: unknown;
      let lastText = '';
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (v === undefined) rows[i] = 'null';
        else {
          if (i === 0 || v !== last || typeof v !== 'object') {
            last = v;
            lastText = JSON.stringify(v);
          }
          rows[i] = lastText;
        }
      }
      return `[${rows.join(',')}]`;
    }
    case 'bool':
      for (let i = 0; i < n; i++) {
        const v = values[i];
        out += `${i ? ',' : ''}${v === null || v === undefined ? 'null' : v ? 'true' : 'false'}`;
      }
      break;
    default:
      // Integers, enums and times (epoch milliseconds): plain integers. The kinds refuse times and
      // integers no int64 holds; should one get here all the same, it is written as null, never as
      // `Infinity` or `NaN`, which would make the whole answer invalid JSON.
      for (let i = 0; i < n; i++) {
        const v = values[i] as number | null;
        out += `${i ? ',' : ''}${v === null || v === undefined || v - v !== 0 ? 'null' : intText(Math.trunc(v))}`;
      }
  }
  return `${out}]`;
}

/** One frame as the SDK's `MarshalJSON` writes it: `{"schema":{...},"data":{...}}`. */
export function encodeFrame(frame: Frame): string {
  const pieces: string[] = [];
  drain(writeFrame(frame, (piece) => pieces.push(text(piece))));
  return pieces.join('');
}

/*
 * The writers below are generators that stop after each frame and each slice of a long column:
 * `drain` runs one at once, `encodeResultsSliced` gives the event loop a turn between stops when
 * its slice is used up.
 */

/** Rows of a column written at once: a longer one (an expression's million points) is written in slices of this many. */
export const COLUMN_SLICE_ROWS = 65536;

/** A long column's values, slice by slice, exactly as `encodeValues` writes them at once (each value is written alike either way). */
function* encodeValuesInSlices(field: Field, found: Entities, write: (piece: Piece) => void): Steps {
  const values = field.values;
  write('[');
  for (let start = 0; start < values.length; start += COLUMN_SLICE_ROWS) {
    const part: Entities = {};
    const json = encodeValues({ ...field, values: values.slice(start, start + COLUMN_SLICE_ROWS) }, part);
    write(start ? `,${json.slice(1, -1)}` : json.slice(1, -1));
    for (const kind of ['NaN', 'Inf', 'NegInf'] as const) {
      const rows = part[kind];
      if (rows) (found[kind] ??= []).push(...rows.map((row) => row + start));
    }
    yield;
  }
  write(']');
}

/** A piece of an answer: JSON text, or the bytes of a column already written. */
type Piece = string | Uint8Array;

const text = (piece: Piece): string => (typeof piece === 'string' ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('utf8'));

/** The frame's JSON in pieces (each column's values one piece): never one string of the whole frame. */
function* writeFrame(frame: Frame, write: (piece: Piece) => void): Steps {
  let schema = '{';
  if (frame.name) schema += `"name":${goString(frame.name)},`;
  if (frame.refId) schema += `"refId":${goString(frame.refId)},`;
  if (frame.meta) schema += `"meta":${encodeMeta(frame.meta)},`;
  schema += `"fields":[${frame.fields.map(encodeFieldSchema).join(',')}]}`;
  write(`{"schema":${schema},"data":{"values":[`);

  const entities: Array<Entities | null> = [];
  let anyEntity = false;
  let anyNanos = false;
  for (let i = 0; i < frame.fields.length; i++) {
    const field = frame.fields[i]!;
    const found: Entities = {};
    if (i) write(',');
    if (field.written) {
      write(field.written.json);
      Object.assign(found, field.written.entities);
    } else if (field.values.length > COLUMN_SLICE_ROWS) yield* encodeValuesInSlices(field, found, write);
    else write(encodeValues(field, found));
    const has = found.NaN !== undefined || found.Inf !== undefined || found.NegInf !== undefined;
    anyEntity ||= has;
    entities.push(has ? found : null);
    if (field.type === 'time.Time' && (field.writtenNanos || field.nanos?.some((ns) => ns !== 0))) anyNanos = true;
  }
  let tail = ']';
  if (anyEntity) tail += `,"entities":[${entities.map((e) => (e ? struct(e, ENTITIES) : 'null')).join(',')}]`;
  if (anyNanos) {
    write(`${tail},"nanos":[`);
    tail = ']';
    for (let i = 0; i < frame.fields.length; i++) {
      const f = frame.fields[i]!;
      if (i) write(',');
      if (f.type !== 'time.Time') write('null');
      else if (f.writtenNanos) write(f.writtenNanos.json);
      else write(f.nanos ? encodeNanos(f, f.nanos) : 'null');
    }
  }
  write(`${tail}}}`);
  yield;
}

/** A time field's nanoseconds, 0 where the time is null. */
function encodeNanos(field: Field, nanos: readonly number[]): string {
  // A written column holds no null.
  if (field.written && nanos.length === field.written.rows && plainNumbers(nanos, true)) return JSON.stringify(nanos);
  const values = field.values;
  if (nanos.length === values.length && !values.includes(null) && plainNumbers(nanos, true)) return JSON.stringify(nanos);
  return `[${values.map((v, i) => (v === null ? 0 : (nanos[i] ?? 0))).join(',')}]`;
}

const list = (rows: number[] | undefined) => (rows ? `[${rows.join(',')}]` : undefined);

/** One refId's answer (SDK `DataResponse`): `error`, `errorSource`, `status`, `frames`. */
export function encodeResponse(response: DataResponse): string {
  let out = '';
  drain(writeResponse(response, (piece) => (out += text(piece))));
  return out;
}

function* writeResponse(response: DataResponse, write: (piece: Piece) => void): Steps {
  let head = '{';
  if (response.error !== undefined) head += `"error":${goString(response.error)},"errorSource":${goString(response.errorSource ?? '')},`;
  head += `"status":${response.status ?? (response.error !== undefined ? 500 : 200)}`;
  if (!response.frames) return write(`${head}}`);
  write(`${head},"frames":[`);
  const frames = response.frames;
  for (let i = 0; i < frames.length; i++) {
    if (i) write(',');
    yield* writeFrame(frames[i]!, write);
  }
  write(']}');
}

/** The whole `/api/ds/query` answer, refIds sorted as Go writes a map. */
export function encodeResults(responses: ReadonlyMap<string, DataResponse>): string {
  return encodeResultsToBytes(responses).toString('utf8');
}

/** The same answer as one buffer. */
export function encodeResultsToBytes(responses: ReadonlyMap<string, DataResponse>): Buffer {
  const { chunks, byteLength } = encodeResultsToChunks(responses);
  return Buffer.concat(chunks, byteLength);
}

/** An answer as the chunks to send in order, and their size in bytes. */
export interface EncodedChunks {
  chunks: Uint8Array[];
  byteLength: number;
}

/**
 * The same answer as chunks to write in order: each column written from bytes is sent as those
 * bytes, and the text between them is written into a buffer of its exact size piece by piece. A
 * large answer is never one string of thousands of pieces (whose flattening and UTF-8 pass would
 * cost about as much as writing the frames), nor are written columns copied into one more buffer:
 * a buffer of an answer's size is memory outside the JS heap, and enough of it per second starts
 * a full collection of the heap.
 */
export function encodeResultsToChunks(responses: ReadonlyMap<string, DataResponse>): EncodedChunks {
  const out = new ChunkWriter();
  drain(writeResults(responses, out.write));
  return out.done();
}

/**
 * The same, given the event loop a turn whenever its slice is used up (between frames, and between
 * slices of a long column): an answer of millions of points never holds it for long.
 */
export async function encodeResultsSliced(responses: ReadonlyMap<string, DataResponse>): Promise<EncodedChunks> {
  const out = new ChunkWriter();
  await drainSliced(writeResults(responses, out.write));
  return out.done();
}

function* writeResults(responses: ReadonlyMap<string, DataResponse>, write: (piece: Piece) => void): Steps {
  write('{"results":{');
  const refIds = [...responses.keys()].sort(compareGoStrings);
  for (let i = 0; i < refIds.length; i++) {
    write(`${i ? ',' : ''}${goString(refIds[i]!)}:`);
    yield* writeResponse(responses.get(refIds[i]!)!, write);
  }
  write('}}');
}

/** Text pending is written into a buffer once it reaches this many characters (and before each written column). */
const FLUSH_CHARS = 1 << 20;

/** The chunks of an answer, text pieces gathered into buffers of their exact size. */
class ChunkWriter {
  readonly #chunks: Uint8Array[] = [];
  #byteLength = 0;
  #pending: string[] = [];
  #pendingChars = 0;

  readonly write = (piece: Piece): void => {
    if (typeof piece === 'string') {
      this.#pending.push(piece);
      this.#pendingChars += piece.length;
      if (this.#pendingChars >= FLUSH_CHARS) this.#flush();
      return;
    }
    this.#flush();
    this.#chunks.push(piece);
    this.#byteLength += piece.byteLength;
  };

  done(): EncodedChunks {
    this.#flush();
    return { chunks: this.#chunks, byteLength: this.#byteLength };
  }

  #flush(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    let size = 0;
    for (const piece of pending) size += Buffer.byteLength(piece);
    const bytes = Buffer.allocUnsafe(size);
    let at = 0;
    for (const piece of pending) at += bytes.write(piece, at);
    this.#pending = [];
    this.#pendingChars = 0;
    this.#chunks.push(bytes);
    this.#byteLength += size;
  }
}

/** Go sorts map keys by bytes (UTF-8); code-unit order differs only for astral characters. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
