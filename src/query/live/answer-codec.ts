import { writtenField, type ColumnEntities, type DataResponse, type Field, type Frame } from '../frames/frame.ts';

/**
 * How one refresh of a shared live query travels from the instance that ran it to the others
 * (through PostgreSQL, query/live/sharing.ts), and back into the same answers: frames with every
 * value as it was, NaN and ±Infinity included (JSON alone would turn them into null). Pure;
 * round-trip tested in test/query/live/answer-codec.test.ts.
 *
 * Layout: a version byte, a kind byte, then for results the byte length of a JSON header (u32 LE),
 * the header (the answers without their columns' values, each column's row count, byte length and
 * non-finite rows) and every column's values as a JSON array, in field order. A column the query
 * kinds already wrote as bytes is copied as it is and comes back as such a written column, parsed
 * only when something reads its values; any other comes back as values, as it went.
 */

/** What one refresh of a shared query came to, for every instance watching it. */
export type SharedOutcome =
  | { kind: 'results'; results: ReadonlyMap<string, DataResponse> }
  /** A data source the query names is gone: every stream of the query ends. */
  | { kind: 'gone' }
  /** The answer was too large to share: each instance watching runs this refresh itself. */
  | { kind: 'unshared' };

const VERSION = 1;
const KINDS = ['results', 'gone', 'unshared'] as const;
const PREFIX_BYTES = 6;

interface FieldHeader {
  name: string;
  type: Field['type'];
  nullable?: true;
  labels?: Record<string, string>;
  config?: Field['config'];
  nanos?: number[];
  rows: number;
  bytes: number;
  entities?: ColumnEntities;
  /** Written by a query kind as the SDK's bytes (else plain JSON of the values). */
  written?: true;
}

interface FrameHeader {
  name?: string;
  refId?: string;
  meta?: Frame['meta'];
  fields: FieldHeader[];
}

interface ResponseHeader {
  error?: string;
  errorSource?: DataResponse['errorSource'];
  status?: number;
  frames?: FrameHeader[];
}

export function encodeOutcome(outcome: SharedOutcome): Buffer {
  const prefix = Buffer.alloc(PREFIX_BYTES);
  prefix[0] = VERSION;
  prefix[1] = KINDS.indexOf(outcome.kind);
  if (outcome.kind !== 'results') return prefix.subarray(0, 2);
  const columns: Uint8Array[] = [];
  const header: Array<[string, ResponseHeader]> = [];
  for (const [refId, response] of outcome.results) {
    const out: ResponseHeader = {};
    if (response.error !== undefined) out.error = response.error;
    if (response.errorSource !== undefined) out.errorSource = response.errorSource;
    if (response.status !== undefined) out.status = response.status;
    if (response.frames) out.frames = response.frames.map((frame) => encodeFrame(frame, columns));
    header.push([refId, out]);
  }
  const json = Buffer.from(JSON.stringify(header));
  prefix.writeUInt32LE(json.length, 2);
  return Buffer.concat([prefix, json, ...columns]);
}

function encodeFrame(frame: Frame, columns: Uint8Array[]): FrameHeader {
  const out: FrameHeader = { fields: [] };
  if (frame.name !== undefined) out.name = frame.name;
  if (frame.refId !== undefined) out.refId = frame.refId;
  if (frame.meta !== undefined) out.meta = frame.meta;
  for (const field of frame.fields) {
    const written = field.written;
    let bytes: Uint8Array;
    let rows: number;
    let entities: ColumnEntities | undefined;
    if (written) {
      bytes = written.json;
      rows = written.rows;
      entities = written.entities;
    } else {
      bytes = Buffer.from(JSON.stringify(field.values));
      rows = field.values.length;
      entities = nonFinite(field.values);
    }
    columns.push(bytes);
    const header: FieldHeader = { name: field.name, type: field.type, rows, bytes: bytes.length };
    if (field.nullable) header.nullable = true;
    if (field.labels !== undefined) header.labels = field.labels;
    if (field.config !== undefined) header.config = field.config;
    if (field.nanos !== undefined) header.nanos = field.nanos;
    if (entities) header.entities = entities;
    if (written) header.written = true;
    out.fields.push(header);
  }
  return out;
}

/** The rows JSON writes as null that hold NaN or ±Infinity; undefined when none. */
function nonFinite(values: readonly unknown[]): ColumnEntities | undefined {
  let entities: ColumnEntities | undefined;
  for (let row = 0; row < values.length; row++) {
    const value = values[row];
    if (typeof value !== 'number' || Number.isFinite(value)) continue;
    entities ??= {};
    const name = Number.isNaN(value) ? 'NaN' : value > 0 ? 'Inf' : 'NegInf';
    (entities[name] ??= []).push(row);
  }
  return entities;
}

/** The outcome `encodeOutcome` wrote; throws on bytes it did not write (another version, cut short). */
export function decodeOutcome(bytes: Buffer): SharedOutcome {
  if (bytes.length < 2 || bytes[0] !== VERSION) throw new Error('unknown shared answer format');
  const kind = KINDS[bytes[1]!];
  if (kind === undefined) throw new Error('unknown shared answer kind');
  if (kind !== 'results') return { kind };
  if (bytes.length < PREFIX_BYTES) throw new Error('shared answer cut short');
  const headerEnd = PREFIX_BYTES + bytes.readUInt32LE(2);
  if (headerEnd > bytes.length) throw new Error('shared answer cut short');
  const header = JSON.parse(bytes.toString('utf8', PREFIX_BYTES, headerEnd)) as Array<[string, ResponseHeader]>;
  let offset = headerEnd;
  const column = (length: number): Buffer => {
    if (!Number.isSafeInteger(length) || length < 0 || offset + length > bytes.length) throw new Error('shared answer cut short');
    const slice = bytes.subarray(offset, offset + length);
    offset += length;
    return slice;
  };
  const results = new Map<string, DataResponse>();
  for (const [refId, stored] of header) {
    const response: DataResponse = {};
    if (stored.error !== undefined) response.error = stored.error;
    if (stored.errorSource !== undefined) response.errorSource = stored.errorSource;
    if (stored.status !== undefined) response.status = stored.status;
    if (stored.frames) response.frames = stored.frames.map((frame) => decodeFrame(frame, column));
    results.set(refId, response);
  }
  if (offset !== bytes.length) throw new Error('shared answer has trailing bytes');
  return { kind, results };
}

function decodeFrame(stored: FrameHeader, column: (length: number) => Buffer): Frame {
  const frame: Frame = { fields: [] };
  if (stored.name !== undefined) frame.name = stored.name;
  if (stored.refId !== undefined) frame.refId = stored.refId;
  if (stored.meta !== undefined) frame.meta = stored.meta;
  for (const header of stored.fields) {
    const json = column(header.bytes);
    const entities = header.entities;
    let field: Field;
    if (header.written) {
      field = writtenField(header.name, header.type, { json, rows: header.rows, ...(entities ? { entities } : {}) }, header.labels);
    } else {
      const values = JSON.parse(json.toString('utf8')) as unknown[];
      if (!Array.isArray(values) || values.length !== header.rows) throw new Error('shared answer column does not match its header');
      for (const row of entities?.NaN ?? []) values[row] = NaN;
      for (const row of entities?.Inf ?? []) values[row] = Infinity;
      for (const row of entities?.NegInf ?? []) values[row] = -Infinity;
      field = { name: header.name, type: header.type, values };
      if (header.labels !== undefined) field.labels = header.labels;
    }
    // Assigned one by one: spreading a written column would read (parse) its `values` now.
    if (header.nullable) field.nullable = true;
    if (header.config !== undefined) field.config = header.config;
    if (header.nanos !== undefined) field.nanos = header.nanos;
    frame.fields.push(field);
  }
  return frame;
}
