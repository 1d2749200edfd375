import type { Field, Frame, FrameMeta } from '../frames/frame.ts';
import type { DataQuery, UpstreamCall } from './kind.ts';
import { formatInterval, goDurationString, parseIntervalString } from '../durations.ts';
import { encodeValues, goJsonStringMap, goQuote, sortedLabels } from './go-text.ts';

/**
 * Loki, as the original's backend does it (`pkg/tsdb/loki`: parse_query.go, step.go, api.go,
 * frame.go): model -> one GET per refId -> metric series as time series frames, log streams as one
 * frame per query. Pure; `loki.ts` does the call.
 */

export type LokiQueryType = 'range' | 'instant';

export interface LokiQuery {
  refId: string;
  expr: string;
  queryType: LokiQueryType;
  direction: 'backward' | 'forward';
  maxLines: number;
  legendFormat: string;
  /** Milliseconds. */
  step: number;
  from: number;
  to: number;
  supportingQueryType: string;
}

const RESOLUTIONS = new Set([1, 2, 3, 4, 5, 10]);

/**
 * step.go: with no `step`, `max(interval * resolution, range / 11000)` rounded up to the
 * millisecond; with one, the parsed step times the resolution.
 */
export function lokiStep(intervalMs: number, rangeMs: number, resolution: number, step: string | undefined): number {
  if (step === undefined || step === '') {
    // Go divides nanoseconds as integers, then rounds up to the millisecond.
    const safeNs = (BigInt(Math.round(rangeMs)) * 1_000_000n) / 11000n;
    const safeMs = Number((safeNs + 999_999n) / 1_000_000n);
    return Math.max(Math.ceil(intervalMs * resolution), safeMs);
  }
  const ms = parseIntervalString(step);
  if (ms === null) throw new Error(`time: invalid duration ${goQuote(step)}`);
  return ms * resolution;
}

function str(model: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const v = model[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new Error(`invalid ${key}: ${JSON.stringify(v)}`);
  return v;
}

function int(model: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const v = model[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`invalid ${key}: ${JSON.stringify(v)}`);
  return v;
}

/** parse_query.go's variables: `$__interval`, `$__interval_ms`, `$__range*`, `$__auto`, and the `${...}` forms. */
export function interpolateLoki(expr: string, intervalMs: number, rangeMs: number, queryType: LokiQueryType, stepMs: number): string {
  const intervalText = formatInterval(intervalMs);
  const intervalMsText = String(Math.trunc(intervalMs));
  const rangeS = String(Math.round(rangeMs / 1000));
  const rangeMsText = String(Math.trunc(rangeMs));
  let out = expr
    .replaceAll('$__interval_ms', intervalMsText)
    .replaceAll('$__interval', intervalText)
    .replaceAll('$__range_ms', rangeMsText)
    .replaceAll('$__range_s', rangeS)
    .replaceAll('$__range', `${rangeS}s`);
  out = out.replaceAll('$__auto', queryType === 'instant' ? `${rangeS}s` : formatInterval(stepMs));
  return out
    .replaceAll('${__interval_ms}', intervalMsText)
    .replaceAll('${__interval}', intervalText)
    .replaceAll('${__range_ms}', rangeMsText)
    .replaceAll('${__range_s}', rangeS)
    .replaceAll('${__range}', `${rangeS}s`);
}

/** The model as parse_query.go reads it; throws with the original's wording on a bad value. */
export function parseLokiQuery(query: DataQuery): LokiQuery {
  const model = query.model;
  const resolutionRaw = int(model, 'resolution');
  const resolution = resolutionRaw !== undefined && RESOLUTIONS.has(resolutionRaw) ? resolutionRaw : 1;
  const rangeMs = query.range.to - query.range.from;
  const step = lokiStep(query.intervalMs, rangeMs, resolution, str(model, 'step'));

  const qt = str(model, 'queryType');
  let queryType: LokiQueryType;
  if (qt === undefined || qt === 'range') queryType = 'range';
  else if (qt === 'instant') queryType = 'instant';
  else throw new Error(`invalid queryType: ${qt}`);

  const dir = str(model, 'direction');
  let direction: 'backward' | 'forward';
  if (dir === undefined || dir === 'backward' || dir === 'scan') direction = 'backward';
  else if (dir === 'forward') direction = 'forward';
  else throw new Error(`invalid queryDirection: ${dir}`);

  return {
    refId: query.refId,
    expr: interpolateLoki(str(model, 'expr') ?? '', query.intervalMs, rangeMs, queryType, step),
    queryType,
    direction,
    maxLines: int(model, 'maxLines') ?? 0,
    legendFormat: str(model, 'legendFormat') ?? '',
    step,
    from: query.range.from,
    to: query.range.to,
    supportingQueryType: str(model, 'supportingQueryType') ?? '',
  };
}

const QUERY_TAGS: Record<string, string> = { logsVolume: 'logvolhist', logsSample: 'logsample', dataSample: 'datasample' };

/** api.go `makeDataRequest`: the GET, its query string as Go's `url.Values` encodes it, times in nanoseconds. */
export function lokiRequest(q: LokiQuery): UpstreamCall {
  const values: Record<string, string | undefined> = {
    query: q.expr,
    direction: q.direction,
    limit: q.maxLines > 0 ? String(q.maxLines) : undefined,
  };
  let path: string;
  if (q.queryType === 'range') {
    values.start = `${Math.trunc(q.from)}000000`;
    values.end = `${Math.trunc(q.to)}000000`;
    values.step = `${Math.trunc(q.step)}ms`;
    path = 'loki/api/v1/query_range';
  } else {
    values.time = `${Math.trunc(q.to)}000000`;
    path = 'loki/api/v1/query';
  }
  const tag = QUERY_TAGS[q.supportingQueryType];
  return { method: 'GET', path, query: encodeValues(values), ...(tag ? { headers: { 'X-Query-Tags': `Source=${tag}` } } : {}) };
}

/** api.go `makeLokiError`: the JSON `message`, else the whole body. */
export function lokiErrorMessage(body: Buffer | string): string {
  const text = body.toString();
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (parsed && typeof parsed.message === 'string' && parsed.message !== '') return parsed.message;
  } catch {
    // not JSON: older Loki versions answer plain text
  }
  return text;
}

/** 32-bit FNV-1 (Go's `hash/fnv.New32`, not FNV-1a) over UTF-8 bytes. */
export function fnv32(bytes: Uint8Array): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h, FNV_PRIME) ^ bytes[i]!;
  return h >>> 0;
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
const UNDERSCORE = 0x5f;

const HEX_DIGITS = '0123456789abcdef';

/** `%x` of a uint32 (`Number#toString(16)` takes V8's slow radix path: a third of the ids' time). */
function hex(value: number): string {
  let n = value;
  let out = '';
  do {
    out = HEX_DIGITS[n & 15] + out;
    n >>>= 4;
  } while (n !== 0);
  return out;
}


/**
 * frame.go `makeIdField`: `<tsNs>_<fnv32(line + "_" + labelsJSON) in hex>`, and `_N` on the N-th
 * repeat of the same id within the frame. Each line is hashed over its UTF-8 bytes written into
 * one scratch buffer; a stream's labels (the same string on its every row) are encoded once.
 */
export function logLineIds(tsNs: readonly string[], lines: readonly string[], labelsJson: readonly string[]): string[] {
  const rows = tsNs.length;
  const ids = new Array<string>(rows);
  const hashes = new Uint32Array(rows);
  // An id repeats only where the hash does: rows are kept in an open-addressed table by hash (a
  // Map keyed by 32-bit numbers costs more than the hashing), and a row counts the earlier ones
  // in its probe run with its hash and tsNs.
  const slots = new Int32Array(2 ** Math.ceil(Math.log2(rows * 2 + 2)));
  const mask = slots.length - 1;
  let scratch = Buffer.allocUnsafe(4096);
  let labelsText: string | undefined;
  let labelsBytes: Buffer = Buffer.alloc(0);
  for (let i = 0; i < rows; i++) {
    const line = lines[i]!;
    // No UTF-16 unit takes more than 3 bytes in UTF-8.
    if (line.length * 3 > scratch.length) scratch = Buffer.allocUnsafe(line.length * 3);
    const length = scratch.write(line, 0);
    if (labelsJson[i] !== labelsText) {
      labelsText = labelsJson[i]!;
      labelsBytes = Buffer.from(labelsText);
    }
    let h = FNV_OFFSET;
    for (let k = 0; k < length; k++) h = Math.imul(h, FNV_PRIME) ^ scratch[k]!;
    h = Math.imul(h, FNV_PRIME) ^ UNDERSCORE;
    for (let k = 0; k < labelsBytes.length; k++) h = Math.imul(h, FNV_PRIME) ^ labelsBytes[k]!;
    const hash = h >>> 0;
    hashes[i] = hash;
    let count = 0;
    let slot = hash & mask;
    for (let row = slots[slot]!; row !== 0; row = slots[slot]!) {
      if (hashes[row - 1] === hash && tsNs[row - 1] === tsNs[i]) count++;
      slot = (slot + 1) & mask;
    }
    slots[slot] = i + 1;
    const sum = `${tsNs[i]}_${hex(hash)}`;
    ids[i] = count > 0 ? `${sum}_${count}` : sum;
  }
  return ids;
}

/** frame.go `formatName`: `{k="v", ...}` sorted, or the legend with `{{label}}` filled in (missing ones empty). */
export function lokiSeriesName(labels: Readonly<Record<string, string>>, legendFormat: string): string {
  if (legendFormat === '') {
    const parts = Object.keys(labels).map((k) => `${k}=${goQuote(labels[k])}`);
    parts.sort();
    return `{${parts.join(', ')}}`;
  }
  return legendFormat.replace(/\{\{\s*(.+?)\s*\}\}/g, (_m, name: string) => labels[name.trim()] ?? '');
}

const STAT_GROUPS: [string, string, [string, string, string][]][] = [
  ['summary', 'Summary', [
    ['bytesProcessedPerSecond', 'bytes processed per second', 'Bps'], ['linesProcessedPerSecond', 'lines processed per second', ''],
    ['totalBytesProcessed', 'total bytes processed', 'decbytes'], ['totalLinesProcessed', 'total lines processed', ''], ['execTime', 'exec time', 's'],
  ]],
  ['store', 'Store', [
    ['totalChunksRef', 'total chunks ref', ''], ['totalChunksDownloaded', 'total chunks downloaded', ''], ['chunksDownloadTime', 'chunks download time', 's'],
    ['headChunkBytes', 'head chunk bytes', 'decbytes'], ['headChunkLines', 'head chunk lines', ''], ['decompressedBytes', 'decompressed bytes', 'decbytes'],
    ['decompressedLines', 'decompressed lines', ''], ['compressedBytes', 'compressed bytes', 'decbytes'], ['totalDuplicates', 'total duplicates', ''],
  ]],
  ['ingester', 'Ingester', [
    ['totalReached', 'total reached', ''], ['totalChunksMatched', 'total chunks matched', ''], ['totalBatches', 'total batches', ''],
    ['totalLinesSent', 'total lines sent', ''], ['headChunkBytes', 'head chunk bytes', 'decbytes'], ['headChunkLines', 'head chunk lines', ''],
    ['decompressedBytes', 'decompressed bytes', 'decbytes'], ['decompressedLines', 'decompressed lines', ''], ['compressedBytes', 'compressed bytes', 'decbytes'],
    ['totalDuplicates', 'total duplicates', ''],
  ]],
];

/** frame.go `parseStats`: Loki's `stats` as `meta.stats`, in the original's order and units; undefined when absent. */
export function lokiStats(stats: unknown): unknown[] | undefined {
  if (!stats || typeof stats !== 'object') return undefined;
  const out: unknown[] = [];
  for (const [key, label, entries] of STAT_GROUPS) {
    const group = (stats as Record<string, unknown>)[key];
    if (!group || typeof group !== 'object') continue;
    for (const [name, text, unit] of entries) {
      const v = (group as Record<string, unknown>)[name];
      out.push({ displayName: `${label}: ${text}`, ...(unit ? { unit } : {}), value: typeof v === 'number' ? v : 0 });
    }
  }
  return out.length > 0 ? out : undefined;
}

function sampleValue(text: unknown): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const n = typeof text === 'string' ? Number(text) : NaN;
  if (typeof text !== 'string' || text.trim() === '' || Number.isNaN(n)) throw new Error(`bad sample value: ${JSON.stringify(text)}`);
  return n;
}

function sampleTime(sec: unknown): number {
  if (typeof sec !== 'number' || !Number.isFinite(sec)) throw new Error(`bad sample time: ${JSON.stringify(sec)}`);
  return Math.round(sec * 1000);
}

function metricFrame(labels: Record<string, string>, times: number[], values: number[], q: LokiQuery, meta: FrameMeta): Frame {
  const name = lokiSeriesName(labels, q.legendFormat);
  const time: Field = { name: 'Time', type: 'time.Time', values: times };
  if (q.queryType === 'range') time.config = { interval: q.step };
  return {
    name,
    meta: { ...meta },
    fields: [time, { name: 'Value', type: 'float64', labels: sortedLabels(labels), config: { displayNameFromDS: name }, values }],
  };
}

function stringLabels(raw: unknown): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error('bad labels');
  for (const v of Object.values(raw)) if (typeof v !== 'string') throw new Error('bad labels');
  return raw as Record<string, string>;
}

/** `tsNs` to epoch milliseconds and the sub-millisecond nanoseconds, without losing precision. */
export function splitNanos(tsNs: string): [number, number] {
  const length = tsNs.length;
  if (length === 0 || length > 19) throw new Error(`bad timestamp: ${JSON.stringify(tsNs)}`);
  // Digit by digit: the milliseconds (at most 13 digits) and the nanoseconds below them are exact.
  let ms = 0;
  let ns = 0;
  for (let i = 0; i < length; i++) {
    const digit = tsNs.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) throw new Error(`bad timestamp: ${JSON.stringify(tsNs)}`);
    if (i < length - 6) ms = ms * 10 + digit;
    else ns = ns * 10 + digit;
  }
  return [ms, ns];
}

/** A Loki query answer (`{status, data: {resultType, result, stats}}`) as the original's frames. Throws on a malformed answer. */
export function lokiFrames(body: Buffer | string, q: LokiQuery): Frame[] {
  let parsed: { data?: { resultType?: unknown; result?: unknown; stats?: unknown } };
  try {
    parsed = JSON.parse(body.toString());
  } catch (error) {
    throw new Error(`failed to parse the Loki response: ${(error as Error).message}`);
  }
  const data = parsed?.data;
  if (!data || typeof data !== 'object') throw new Error('failed to parse the Loki response: no data');
  const stats = lokiStats(data.stats);
  const executed = q.queryType === 'range' ? `Expr: ${q.expr}\nStep: ${goDurationString(q.step)}` : `Expr: ${q.expr}`;
  const result = data.result;
  try {
    switch (data.resultType) {
      case 'streams':
        return streamsFrame(result, stats, `Expr: ${q.expr}`);
      case 'matrix': {
        const meta: FrameMeta = { type: 'timeseries-multi', ...(stats ? { stats } : {}), executedQueryString: executed };
        return asArray(result).map((series) => {
          const s = series as { metric?: unknown; values?: unknown };
          const times: number[] = [];
          const values: number[] = [];
          for (const pair of asArray(s.values)) {
            const [t, v] = asArray(pair);
            times.push(sampleTime(t));
            values.push(sampleValue(v));
          }
          return metricFrame(stringLabels(s.metric), times, values, q, meta);
        });
      }
      case 'vector': {
        const meta: FrameMeta = { type: 'timeseries-multi', ...(stats ? { stats } : {}), executedQueryString: executed };
        return asArray(result).map((sample) => {
          const s = sample as { metric?: unknown; value?: unknown };
          const [t, v] = asArray(s.value);
          return metricFrame(stringLabels(s.metric), [sampleTime(t)], [sampleValue(v)], q, meta);
        });
      }
      case 'scalar': {
        const [t, v] = asArray(result);
        const meta: FrameMeta = { type: 'timeseries-multi', ...(stats ? { stats } : {}), executedQueryString: executed };
        return [metricFrame({}, [sampleTime(t)], [sampleValue(v)], q, meta)];
      }
      default:
        throw new Error(`unknown result type: ${JSON.stringify(data.resultType)}`);
    }
  } catch (error) {
    throw new Error(`failed to parse the Loki response: ${(error as Error).message}`);
  }
}

function asArray(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new Error('expected an array');
  return v;
}

function streamsFrame(result: unknown, stats: unknown[] | undefined, executed: string): Frame[] {
  const labelsValues: unknown[] = [];
  const labelsJson: string[] = [];
  const times: number[] = [];
  const nanos: number[] = [];
  const lines: string[] = [];
  const tsNs: string[] = [];
  let anyNanos = false;
  for (const stream of asArray(result)) {
    const s = stream as { stream?: unknown; values?: unknown };
    const labels = sortedLabels(stringLabels(s.stream));
    const json = goJsonStringMap(labels);
    for (const entry of asArray(s.values)) {
      const pair = asArray(entry);
      const ts = pair[0];
      const line = pair[1];
      if (typeof ts !== 'string' || typeof line !== 'string') throw new Error('bad log entry');
      const [ms, ns] = splitNanos(ts);
      if (ns !== 0) anyNanos = true;
      labelsValues.push(labels);
      labelsJson.push(json);
      times.push(ms);
      nanos.push(ns);
      lines.push(line);
      tsNs.push(ts);
    }
  }
  if (tsNs.length === 0 && asArray(result).length === 0) return [];
  const time: Field = { name: 'Time', type: 'time.Time', values: times };
  if (anyNanos) time.nanos = nanos;
  return [{
    meta: { ...(stats ? { stats } : {}), custom: { frameType: 'LabeledTimeValues' }, executedQueryString: executed },
    fields: [
      { name: 'labels', type: 'json.RawMessage', values: labelsValues },
      time,
      { name: 'Line', type: 'string', values: lines },
      { name: 'tsNs', type: 'string', values: tsNs },
      { name: 'id', type: 'string', values: logLineIds(tsNs, lines, labelsJson) },
    ],
  }];
}

/** Resource paths the original forwards (loki.go `callResource`), matched on path plus query as it does. */
export function lokiResourceAllowed(pathAndQuery: string): boolean {
  // A `..` segment would climb out of /loki/api/v1/ once the path is joined.
  const path = pathAndQuery.split('?')[0];
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return false;
  }
  if (decoded.split('/').some((segment) => segment === '..' || segment === '.')) return false;
  return ['labels?', 'label/', 'series?', 'index/stats?'].some((prefix) => pathAndQuery.startsWith(prefix));
}
