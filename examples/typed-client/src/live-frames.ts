// Keeps a live query's frames current from the events of the `liveQuery` subscription: the first
// event replaces every refId; later ones carry only what changed. An append drops `drop` rows
// from the start of a frame (its window moved) and adds rows at its end; a replace brings a
// refId's whole answer; a remove means the refId no longer answers. Nothing here mutates what it
// was given, so a page can keep the previous state for comparison or rendering. Select each
// field's `values` (and `nanos`): appends extend those, not the typed columns (`numbers`...).

export interface LiveField {
  name: string;
  type: string;
  values: unknown[];
  /** Sub-millisecond parts of a time field's rows, when any. */
  nanos?: number[];
  [key: string]: unknown;
}

export interface LiveFrame {
  fields: LiveField[];
  [key: string]: unknown;
}

export interface LiveResult {
  status?: number | null;
  error?: string | null;
  errorSource?: string | null;
  frames?: LiveFrame[] | null;
}

export interface LiveFrameAppend {
  frame: number;
  drop: number;
  values: unknown[][];
  nanos?: Array<number[] | null> | null;
}

export interface LiveResultDelta {
  refId: string;
  kind: 'REPLACE' | 'APPEND' | 'REMOVE';
  status?: number | null;
  error?: string | null;
  errorSource?: string | null;
  frames?: LiveFrame[] | null;
  appends?: LiveFrameAppend[] | null;
}

/** The answers by refId after applying one event's deltas to `state`. */
export function applyLiveDelta(state: ReadonlyMap<string, LiveResult>, deltas: readonly LiveResultDelta[]): Map<string, LiveResult> {
  const next = new Map(state);
  for (const delta of deltas) {
    if (delta.kind === 'REMOVE') {
      next.delete(delta.refId);
    } else if (delta.kind === 'REPLACE') {
      next.set(delta.refId, { status: delta.status, error: delta.error, errorSource: delta.errorSource, frames: delta.frames });
    } else {
      const current = next.get(delta.refId);
      if (!current?.frames) throw new Error(`append to refId ${delta.refId}, which has no frames`);
      const frames = [...current.frames];
      for (const append of delta.appends ?? []) frames[append.frame] = appendRows(frames[append.frame]!, append);
      next.set(delta.refId, { ...current, frames });
    }
  }
  return next;
}

function appendRows(frame: LiveFrame, append: LiveFrameAppend): LiveFrame {
  const rows = (frame.fields[0]?.values.length ?? 0) - append.drop + (append.values[0]?.length ?? 0);
  return {
    ...frame,
    // `DataFrame.length`, when selected, follows the rows.
    ...(typeof frame.length === 'number' ? { length: rows } : {}),
    fields: frame.fields.map((field, i) => {
      const moved: LiveField = { ...field, values: field.values.slice(append.drop).concat(append.values[i] ?? []) };
      const added = append.nanos?.[i];
      if (field.nanos || added) {
        const kept = field.nanos ? field.nanos.slice(append.drop) : new Array<number>(field.values.length - append.drop).fill(0);
        moved.nanos = kept.concat(added ?? new Array<number>(append.values[i]?.length ?? 0).fill(0));
      }
      return moved;
    }),
  };
}
