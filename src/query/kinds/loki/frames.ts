import type { Field, Frame, FrameMeta } from '../../frames/frame.ts';
import type { DataQuery, UpstreamRequest } from '../kind.ts';
import { formatInterval, goDurationString, parseIntervalString } from '../../durations.ts';
import { encodeValues, goQuote, sortedLabels } from '../../go-text.ts';
import { drainSliced, type Steps } from '../../slices.ts';
import { resultLayoutSteps, withoutResult } from '../result-chunks.ts';
import { LogFrameWriter, scanLogStreams } from './log-frame.ts';
import { AnswerError, parseAnswerJson } from '../../answer-error.ts';
import { ownLabel, readLabels } from '../../labels.ts';
import { readParsed } from '../prometheus/frames.ts';
import { streamChunkDocuments, streamLayouts } from './stream-chunks.ts';

/**
 * Loki, as the original's backend does it (`pkg/tsdb/loki`: parse_query.go, step.go, api.go,
 * frame.go): model -> one GET per refId -> metric series as time series frames, log streams as one
 * frame per query. Pure; the kind (`index.ts`) makes the call.
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
export function lokiRequest(q: LokiQuery): UpstreamRequest {
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

/** frame.go `formatName`: `{k="v", ...}` sorted, or the legend with `{{label}}` filled in (missing ones empty). */
export function lokiSeriesName(labels: Readonly<Record<string, string>>, legendFormat: string): string {
  if (legendFormat === '') {
    const parts = Object.keys(labels).map((k) => `${k}=${goQuote(labels[k])}`);
    parts.sort();
    return `{${parts.join(', ')}}`;
  }
  return legendFormat.replace(/\{\{\s*(.+?)\s*\}\}/g, (_m, name: string) => ownLabel(labels, name.trim()) ?? '');
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

/**
 * A Loki query answer (`{status, data: {resultType, result, stats}}`) as the original's frames.
 * Metric results are read by the Prometheus reader's rules (the original reads both with one
 * converter); log streams from their bytes, else parsed. Throws an `AnswerError` on an answer the
 * original refuses.
 */
export function lokiFrames(body: Buffer | string, q: LokiQuery): Frame[] {
  try {
    return readFrames(typeof body === 'string' ? Buffer.from(body) : body, q);
  } catch (error) {
    throw asLokiAnswerError(error);
  }
}

/** An answer the original refuses, in its words; any other error as it is. */
function asLokiAnswerError(error: unknown): unknown {
  return error instanceof AnswerError ? new AnswerError(`failed to parse the Loki response: ${error.message}`) : error;
}

/** Streams answers from `from` bytes up are read in chunks of about `bytes` of log lines, the event loop given turns in between. */
export interface Chunking {
  from: number;
  bytes: number;
}
export const CHUNKING: Chunking = { from: 1 << 20, bytes: 256 * 1024 };

/** `lokiFrames`, a large streams answer read a chunk of lines at a time, giving the event loop a turn whenever its slice is used up. */
export function lokiFramesSliced(body: Buffer, q: LokiQuery): Promise<Frame[]> {
  return drainSliced(lokiFramesSteps(body, q));
}

/** The same as steps; `chunking` for tests (any size, chunks of a few lines). */
export function* lokiFramesSteps(body: Buffer, q: LokiQuery, chunking = CHUNKING): Steps<Frame[]> {
  if (body.length >= chunking.from) {
    let frames: Frame[] | null;
    try {
      frames = yield* streamsInChunks(body, q, chunking.bytes);
    } catch (error) {
      throw asLokiAnswerError(error);
    }
    if (frames) return frames;
  }
  return lokiFrames(body, q);
}

/** A streams answer's one log frame, written from chunks of its lines into one writer; null where it is not simply laid out. */
function* streamsInChunks(body: Buffer, q: LokiQuery, chunkBytes: number): Steps<Frame[] | null> {
  const layout = yield* resultLayoutSteps(body);
  if (!layout || body.toString('latin1', layout.resultType[0], layout.resultType[1]) !== '"streams"') return null;
  const rest = scanLogStreams(withoutResult(body, layout));
  if (!rest) return null;
  const streams = yield* streamLayouts(body, layout);
  if (!streams) return null;
  if (streams.length === 0) return [];
  const writer = new LogFrameWriter(body.length);
  for (const doc of streamChunkDocuments(body, streams, chunkBytes)) {
    yield;
    if (!scanLogStreams(doc, writer)) return null;
  }
  return [writer.frame(logMeta(lokiStats(rest.stats), q))];
}

function readFrames(bytes: Buffer, q: LokiQuery): Frame[] {
  const scanned = scanLogStreams(bytes);
  if (scanned) return scanned.streams === 0 ? [] : [scanned.writer.frame(logMeta(lokiStats(scanned.stats), q))];
  const parsed = parseAnswerJson(bytes.toString()) as { data?: { resultType?: unknown; result?: unknown; stats?: unknown } } | null;
  const data = parsed?.data;
  if (!data || typeof data !== 'object') throw new AnswerError('no data');
  const stats = lokiStats(data.stats);
  if (data.resultType === 'streams') return streamsFrame(data.result, bytes.length, logMeta(stats, q));
  const doc = readParsed(parsed);
  const executed = q.queryType === 'range' ? `Expr: ${q.expr}\nStep: ${goDurationString(q.step)}` : `Expr: ${q.expr}`;
  const meta: FrameMeta = { type: 'timeseries-multi', ...(stats ? { stats } : {}), executedQueryString: executed };
  switch (doc.resultType) {
    case 'matrix':
    case 'vector':
      return doc.series.map((series) => metricFrame(series.metric, series.time as number[], series.value as number[], q, meta));
    case 'scalar':
      return doc.sample ? [metricFrame(readLabels(undefined, 'labels'), [doc.sample[0]], [doc.sample[1] as number], q, meta)] : [];
    default:
      throw new AnswerError(`unknown result type: ${JSON.stringify(doc.resultType)}`);
  }
}

function asArray(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new AnswerError(`${what} is not an array`);
  return v;
}

/** The log frame's meta: Loki's stats, the frame type the frontend reads, the query. */
function logMeta(stats: unknown[] | undefined, q: LokiQuery): FrameMeta {
  return { ...(stats ? { stats } : {}), custom: { frameType: 'LabeledTimeValues' }, executedQueryString: `Expr: ${q.expr}` };
}

/** Streams of a parsed answer as the one log frame `scanLogStreams` writes from bytes. */
function streamsFrame(result: unknown, sizeHint: number, meta: FrameMeta): Frame[] {
  if (result === null) return [];
  const streams = asArray(result, 'result');
  if (streams.length === 0) return [];
  const writer = new LogFrameWriter(sizeHint);
  for (const stream of streams) {
    if (stream === null) continue;
    if (typeof stream !== 'object' || Array.isArray(stream)) throw new AnswerError('a stream is not an object');
    // Members in order: rows take the labels read last, a previous stream's when none came first.
    for (const [key, values] of Object.entries(stream)) {
      if (key === 'stream') writer.stream(readLabels(values, 'stream labels'));
      else if (key === 'values' && values !== null) readEntries(writer, asArray(values, 'values'));
    }
  }
  return [writer.frame(meta)];
}

/** `["<nanoseconds>", "<line>"(, anything)*]` rows. */
function readEntries(writer: LogFrameWriter, entries: unknown[]): void {
  for (const entry of entries) {
    if (!Array.isArray(entry) || entry.length < 2 || typeof entry[0] !== 'string' || typeof entry[1] !== 'string') {
      throw new AnswerError('a log entry is not ["<timestamp>", "<line>"]');
    }
    const ts = entry[0];
    if (!(/^[0-9]+$/.test(ts) && writer.timestamp(Buffer.from(ts, 'latin1'), 0, ts.length)) && !writer.signedTimestamp(ts)) {
      // The original's words for a time it cannot read; the ones it would read as another time
      // than the one written (20 digits and more, other text) are refused alike.
      throw new AnswerError(`unexpected time format '${ts.length > 64 ? `${ts.slice(0, 64)}...` : ts}' in response. response may have been truncated`);
    }
    writer.line(entry[1]);
  }
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
