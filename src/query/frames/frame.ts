/**
 * The data frame, as the original's plugin SDK models it (`data/frame.go`, `field.go`,
 * `frame_meta.go`): column-major fields, each with a Go type name the wire format reports in
 * `typeInfo.frame`. Query kinds build these; `encode.ts` writes them exactly as the SDK does.
 */

/** Non-nullable Go type names, as written in `typeInfo.frame`. */
export type FieldType =
  | 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'uint32' | 'uint64'
  | 'float32' | 'float64' | 'string' | 'bool' | 'time.Time' | 'json.RawMessage' | 'enum';

/** `config` of a field (`data/field_config.go`); only the keys set are written. */
export interface FieldConfig {
  displayName?: string;
  displayNameFromDS?: string;
  path?: string;
  description?: string;
  filterable?: boolean;
  writeable?: boolean;
  unit?: string;
  decimals?: number;
  min?: number;
  max?: number;
  /** Milliseconds between points, for time fields. */
  interval?: number;
  mappings?: unknown;
  thresholds?: unknown;
  color?: unknown;
  links?: unknown;
  noValue?: string;
  type?: unknown;
  custom?: Record<string, unknown>;
}

export interface Field {
  name: string;
  type: FieldType;
  /** A nullable column may hold `null` for a missing value. */
  nullable?: boolean;
  /** Written when not undefined (`{}` included), keys sorted as Go writes maps. */
  labels?: Record<string, string>;
  config?: FieldConfig;
  /**
   * One value per row. `time.Time`: epoch milliseconds (integers; see `nanos`). Numeric types:
   * numbers (float fields may hold NaN and ±Infinity, written as null plus `entities`). `string`:
   * strings. `bool`: booleans. `json.RawMessage`: any JSON value, written as is. `null` only
   * where `nullable`.
   */
  values: unknown[];
  /** Time fields only: the sub-millisecond part of each row in nanoseconds (0-999999), when any is non-zero. */
  nanos?: number[];
  /** The values already written as the SDK writes them; `values` is then read from it when asked for. */
  written?: WrittenColumn;
  /** A written time column's `nanos` already written (some non-zero); `nanos` is then read from it when asked for. */
  writtenNanos?: WrittenColumn;
}

/**
 * A column written straight from an upstream answer's bytes (a log query's 5,000 lines): its
 * values as the JSON array the SDK writes, and how many rows it holds.
 */
export interface WrittenColumn {
  json: Uint8Array;
  rows: number;
  /** A float column's rows written as null that hold NaN or ±Infinity (the frame's `entities`). */
  entities?: ColumnEntities;
  /** The reusable buffer `json` lies in, until it is given back (`column-buffers.ts`). */
  buffer?: Buffer;
}

/** Rows of a float column that hold a value JSON cannot: written as null, listed here. */
export interface ColumnEntities {
  NaN?: number[];
  Inf?: number[];
  NegInf?: number[];
}

/**
 * A field whose values are `column`: the encoder copies its bytes, and `values` is parsed from
 * them only when something reads it (expressions, the graph, live deltas).
 */
export function writtenField(name: string, type: FieldType, column: WrittenColumn, labels?: Record<string, string>): Field {
  let values: unknown[] | undefined;
  return {
    name,
    type,
    ...(labels ? { labels } : {}),
    written: column,
    get values(): unknown[] {
      if (values) return values;
      values = JSON.parse(new TextDecoder().decode(column.json)) as unknown[];
      const entities = column.entities;
      for (const row of entities?.NaN ?? []) values[row] = NaN;
      for (const row of entities?.Inf ?? []) values[row] = Infinity;
      for (const row of entities?.NegInf ?? []) values[row] = -Infinity;
      return values;
    },
  };
}

/** A written time field whose sub-millisecond parts are written too (`nanos`, some not 0). */
export function writtenTimeField(name: string, column: WrittenColumn, nanos: WrittenColumn): Field {
  const field = writtenField(name, 'time.Time', column);
  let values: number[] | undefined;
  Object.defineProperties(field, {
    writtenNanos: { value: nanos, enumerable: true },
    nanos: { get: () => (values ??= JSON.parse(new TextDecoder().decode(nanos.json)) as number[]), enumerable: true },
  });
  return field;
}

/** A field's rows, without reading a written column's values. */
export function fieldLength(field: Field): number {
  return field.written ? field.written.rows : field.values.length;
}

export interface Notice {
  severity?: 'info' | 'warning' | 'error';
  text: string;
  link?: string;
  inspect?: 'meta' | 'error' | 'data' | 'stats';
}

/** `meta` of a frame (`data/frame_meta.go`); only the keys set are written, `typeVersion` always. */
export interface FrameMeta {
  type?: string;
  typeVersion?: [number, number];
  path?: string;
  pathSeparator?: string;
  custom?: unknown;
  stats?: unknown[];
  notices?: Notice[];
  channel?: string;
  preferredVisualisationType?: string;
  preferredVisualisationPluginId?: string;
  executedQueryString?: string;
  dataTopic?: string;
  uniqueRowIdFields?: number[];
}

export interface Frame {
  name?: string;
  refId?: string;
  meta?: FrameMeta;
  fields: Field[];
}

/** The answer for one refId (SDK `backend.DataResponse`). */
export interface DataResponse {
  frames?: Frame[];
  /** Present on failure; `errorSource` and `status` go with it. */
  error?: string;
  errorSource?: 'plugin' | 'downstream';
  /** HTTP-like status; 200 when unset and no error. */
  status?: number;
}
