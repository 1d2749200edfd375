import type { DataResponse, Field, Frame } from '../frames/frame.ts';

/**
 * What changed in a live query's answer since the subscriber's last event. A refId's frames are
 * "appended" when each frame keeps its schema (name, refId, meta, fields with their names, types,
 * labels and config) and its new rows are its old rows with K rows dropped from the start (the
 * window moved) and M rows added at the end; a refId failing again exactly as before is unchanged;
 * anything else (an error coming, going or changing, a status, a frame more or less, a value
 * changed in place) replaces the refId's whole answer. Pure; the typed client's
 * `applyLiveDelta` (examples/typed-client/src/live-frames.ts) applies these, and
 * test/query/live/delta.test.ts checks that the result always equals the new answer.
 */

export interface FrameAppend {
  /** Index of the frame in the refId's `frames`. */
  frame: number;
  /** Rows removed from the start. */
  drop: number;
  /** The rows added, one column per field. */
  values: unknown[][];
  /** Per field, the added rows' sub-millisecond parts, when the field has any (else null). */
  nanos?: Array<number[] | null>;
}

export type ResultDelta =
  | { refId: string; kind: 'replace'; response: DataResponse }
  | { refId: string; kind: 'append'; appends: FrameAppend[] }
  | { refId: string; kind: 'remove' };

/** How many row offsets are tried before a frame is simply replaced (bounds the work per frame). */
const MAX_CANDIDATES = 8;

/** The events that turn `before` (null: nothing sent yet) into `after`; unchanged refIds are left out. */
export function resultsDelta(before: ReadonlyMap<string, DataResponse> | null, after: ReadonlyMap<string, DataResponse>): ResultDelta[] {
  const out: ResultDelta[] = [];
  for (const refId of [...after.keys()].sort()) {
    const next = after.get(refId)!;
    const previous = before?.get(refId);
    if (!previous) {
      out.push({ refId, kind: 'replace', response: next });
      continue;
    }
    if (previous === next) continue;
    const appends = responseAppends(previous, next);
    if (appends === null) out.push({ refId, kind: 'replace', response: next });
    else if (appends.length > 0) out.push({ refId, kind: 'append', appends });
  }
  if (before) for (const refId of [...before.keys()].sort()) if (!after.has(refId)) out.push({ refId, kind: 'remove' });
  return out;
}

/** The appends that turn one answer of a refId into the next, `[]` when equal, null when it must be replaced. */
export function responseAppends(before: DataResponse, after: DataResponse): FrameAppend[] | null {
  if ((before.status ?? 200) !== (after.status ?? 200)) return null;
  if (before.error !== undefined || after.error !== undefined) {
    // The same failure again is no change (a refId failing at every refresh is not resent); any
    // other change to a failed answer replaces it, an error having no append form.
    if (before.error !== after.error || before.errorSource !== after.errorSource) return null;
    const frames = framesAppends(before, after);
    return frames !== null && frames.length === 0 ? [] : null;
  }
  return framesAppends(before, after);
}

function framesAppends(before: DataResponse, after: DataResponse): FrameAppend[] | null {
  const old = before.frames ?? [];
  const next = after.frames ?? [];
  if (old.length !== next.length || (before.frames === undefined) !== (after.frames === undefined)) return null;
  const appends: FrameAppend[] = [];
  for (let i = 0; i < next.length; i++) {
    const append = frameAppend(old[i]!, next[i]!);
    if (append === null) return null;
    if (append.drop > 0 || append.values.some((column) => column.length > 0)) appends.push({ ...append, frame: i });
  }
  return appends;
}

/** K and M for one frame (as an append at index 0), or null when the frame must be replaced. */
export function frameAppend(before: Frame, after: Frame): FrameAppend | null {
  if (!sameSchema(before, after)) return null;
  const oldRows = rowCount(before);
  const newRows = rowCount(after);
  let drop = -1;
  let tried = 0;
  // The smallest K keeps the most rows; the first column narrows the candidates.
  for (let k = Math.max(0, oldRows - newRows); k <= oldRows && tried < MAX_CANDIDATES; k++) {
    if (k === oldRows) {
      if (oldRows === 0) drop = 0; // nothing to keep: every row is new
      break; // no overlap at all: a replacement, not a move of the window
    }
    if (!sameCell(before.fields[0]!, k, after.fields[0]!, 0)) continue;
    tried++;
    if (overlaps(before, after, k, oldRows - k)) {
      drop = k;
      break;
    }
  }
  if (drop < 0) return null;
  const kept = oldRows - drop;
  const append: FrameAppend = { frame: 0, drop, values: after.fields.map((field) => field.values.slice(kept)) };
  if (after.fields.some((field) => field.nanos)) append.nanos = after.fields.map((field) => field.nanos?.slice(kept) ?? null);
  return append;
}

function rowCount(frame: Frame): number {
  return frame.fields[0]?.values.length ?? 0;
}

function overlaps(before: Frame, after: Frame, from: number, length: number): boolean {
  for (let f = 0; f < before.fields.length; f++) {
    const a = before.fields[f]!;
    const b = after.fields[f]!;
    for (let row = 0; row < length; row++) if (!sameCell(a, from + row, b, row)) return false;
  }
  return true;
}

function sameCell(a: Field, i: number, b: Field, j: number): boolean {
  if ((a.nanos?.[i] ?? 0) !== (b.nanos?.[j] ?? 0)) return false;
  const x = a.values[i];
  const y = b.values[j];
  if (x === y) return true;
  if (typeof x === 'number' && typeof y === 'number') return Number.isNaN(x) && Number.isNaN(y);
  return typeof x === 'object' && typeof y === 'object' && x !== null && y !== null && deepEqual(x, y);
}

function sameSchema(a: Frame, b: Frame): boolean {
  if (a.name !== b.name || a.refId !== b.refId || !deepEqual(a.meta, b.meta) || a.fields.length !== b.fields.length) return false;
  if (a.fields.length === 0) return true;
  return a.fields.every((field, i) => {
    const other = b.fields[i]!;
    return field.name === other.name && field.type === other.type && Boolean(field.nullable) === Boolean(other.nullable)
      && deepEqual(field.labels, other.labels) && deepEqual(field.config, other.config);
  });
}

/** Structural equality of JSON-like values (key order ignored; NaN equals NaN). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => deepEqual(item, other[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((key) => x[key] !== undefined);
  if (keys.length !== Object.keys(y).filter((key) => y[key] !== undefined).length) return false;
  return keys.every((key) => deepEqual(x[key], y[key]));
}
