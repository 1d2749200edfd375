import { fieldLength, writtenField, type DataResponse, type Field, type Frame, type FrameMeta, type Notice } from '../../frames/frame.ts';
import { executedQueryString, type PrometheusQuery } from './model.ts';
import { goQuote } from '../../go-text.ts';
import { drain, drainSliced, type Steps } from '../../slices.ts';
import { chunkDocuments, resultLayoutSteps, withoutResult } from '../result-chunks.ts';
import { parseSampleValue, scanPrometheus, type ScannedDocument } from './scan.ts';

/**
 * Prometheus JSON to frames, as the original's converter and response code do it
 * (`pkg/promlib/converter/prom.go`, `querydata/response.go`): one frame per series with `Time`
 * and a float64 value field named after `__name__` (else `Value`), the labels, the step as the
 * time field's interval, `displayNameFromDS` from the legend; a scalar or string as one frame;
 * `Expr: ...\nStep: ...` on the first frame; warnings and infos as notices; an error document as
 * the refId's error, still with one empty frame carrying the meta. Pure.
 */

/** Thrown when a refId's answer would hold more points than allowed. */
export class TooManyPoints extends Error {}
/** Thrown when a refId's answer would hold more series than allowed. */
export class TooManySeries extends Error {}

/** A refId's budget: points and series (frames). */
export interface AnswerLimits {
  maxPoints: number;
  maxSeries: number;
}

/**
 * Bodies from `from` bytes up holding more than `series` series, or of `always` bytes and more,
 * are read in chunks of about `bytes` of series, the event loop given turns in between. Reading
 * costs mostly per series (labels): a range answer of 100 series of 1,000 points is read at once,
 * as fast as it is read.
 */
export interface Chunking {
  from: number;
  series: number;
  always: number;
  bytes: number;
}
export const CHUNKING: Chunking = { from: 1 << 20, series: 2000, always: 8 << 20, bytes: 256 * 1024 };

const METRIC = Buffer.from('"metric"');

/** Whether the body names more than `limit` series (its `"metric"` keys, found by the native search; a label value saying so counts too). */
function moreSeriesThan(body: Buffer, limit: number): boolean {
  let found = 0;
  for (let at = body.indexOf(METRIC); at >= 0; at = body.indexOf(METRIC, at + METRIC.length)) if (++found > limit) return true;
  return false;
}
/** Series converted between two stops. */
const SERIES_PER_STEP = 256;

type Sample = [number, string];
interface Series {
  metric?: Record<string, string>;
  values?: Sample[];
  value?: Sample;
}
interface PromDocument {
  status?: string;
  errorType?: string;
  error?: string;
  data?: { resultType?: string; result?: unknown };
  warnings?: unknown[];
  infos?: unknown[];
}

/** Seconds (float) to epoch milliseconds as `time.UnixMilli(int64(f*1000))`. */
const toMs = (seconds: number) => Math.trunc(seconds * 1000);

/** Response status codes whose bodies are Prometheus JSON; others are reported with the body's start. */
export function parsesAsPrometheus(status: number): boolean {
  return (status >= 200 && status < 300) || status === 400 || status === 422 || status === 503;
}

/** The SDK's `ErrorSourceFromHTTPStatus`: statuses only the plugin can cause are `plugin`, the rest `downstream`. */
export function errorSourceOf(status: number): 'plugin' | 'downstream' {
  return [405, 406, 412, 413, 416, 417, 426, 431, 414, 501].includes(status) ? 'plugin' : 'downstream';
}

/** One upstream answer (range or instant) to the refId's response. */
export function prometheusResponse(q: PrometheusQuery, status: number, body: Buffer, maxPoints: number, maxSeries = Infinity): DataResponse {
  return drain(responseSteps(q, status, body, { maxPoints, maxSeries }));
}

/** The same, giving the event loop a turn whenever its slice is used up (a large answer's series are read and converted in steps). */
export function prometheusResponseSliced(q: PrometheusQuery, status: number, body: Buffer, limits: AnswerLimits): Promise<DataResponse> {
  return drainSliced(responseSteps(q, status, body, limits));
}

/** `prometheusResponse` as steps; `chunking` for tests (any size, chunks of a few series). */
export function* responseSteps(q: PrometheusQuery, status: number, body: Buffer, limits: AnswerLimits, chunking = CHUNKING): Steps<DataResponse> {
  if (!parsesAsPrometheus(status)) {
    const text = body.subarray(0, 1024).toString('utf8');
    return withMeta(q, { error: `unexpected response with status code ${status}: ${text}`, errorSource: errorSourceOf(status), status, frames: [] });
  }
  let doc: ReadDocument;
  try {
    const chunked = body.length >= chunking.always || (body.length >= chunking.from && moreSeriesThan(body, chunking.series));
    doc = chunked ? yield* readInChunks(body, limits.maxSeries, chunking.bytes) : readDocument(body);
  } catch (error) {
    if (error instanceof TooManySeries) throw error;
    return withMeta(q, { error: `failed to parse the Prometheus response: ${(error as Error).message}`, errorSource: 'downstream', status, frames: [] });
  }
  if (doc.status === 'error') {
    return withMeta(q, { error: `${doc.errorType ?? ''}: ${doc.error ?? ''}`, errorSource: 'downstream', status, frames: [] });
  }
  const frames = yield* framesOf(q, doc, limits);
  const notices: Notice[] = [
    ...(Array.isArray(doc.warnings) ? doc.warnings : []).map((text): Notice => ({ severity: 'warning', text: String(text) })),
    ...(Array.isArray(doc.infos) ? doc.infos : []).map((text): Notice => ({ severity: 'info', text: String(text) })),
  ];
  if (notices.length) {
    if (frames.length === 0) frames.push({ name: 'Warnings', fields: [] });
    for (const frame of frames) frame.meta = { ...(frame.meta ?? {}), notices };
  }
  const response: DataResponse = { frames };
  // A 2xx without a success document is still a 200; the status is the upstream's otherwise.
  if (status !== 200) response.status = status;
  yield* metaSteps(q, frames);
  return response;
}

/** The empty frame when there is none, the step and display name, and the executed query on the first. */
function withMeta(q: PrometheusQuery, response: DataResponse): DataResponse {
  response.frames = drain(metaSteps(q, response.frames ?? []));
  return response;
}

function* metaSteps(q: PrometheusQuery, frames: Frame[]): Steps<Frame[]> {
  if (frames.length === 0) frames.push({ fields: [] });
  for (let i = 0; i < frames.length; i++) {
    const frame = frames[i]!;
    frame.meta ??= {};
    if (frame.fields.length >= 2) {
      frame.fields[0]!.config = { interval: q.stepMs };
      const name = displayName(q, frame.fields[1]!.labels ?? {});
      if (name !== '') frame.fields[1]!.config = { displayNameFromDS: name };
    }
    if (i === 0) frame.meta.executedQueryString = executedQueryString(q);
    if (i % SERIES_PER_STEP === SERIES_PER_STEP - 1) yield;
  }
  return frames;
}

/**
 * A large answer read a chunk of series at a time (`result-chunks.ts`), stopping after each; past
 * `maxSeries` it stops reading. Read at once when its layout is not simply found.
 */
function* readInChunks(body: Buffer, maxSeries: number, chunkBytes: number): Steps<ReadDocument> {
  const layout = yield* resultLayoutSteps(body);
  const type = layout ? body.toString('latin1', layout.resultType[0], layout.resultType[1]) : '';
  if (!layout || (type !== '"matrix"' && type !== '"vector"')) return readDocument(body);
  const doc: ReadDocument | null = scanPrometheus(withoutResult(body, layout));
  if (!doc) return readDocument(body);
  for (const chunk of chunkDocuments(body, layout, chunkBytes)) {
    yield;
    const part = scanPrometheus(chunk);
    if (!part) return readDocument(body);
    for (const series of part.series) doc.series.push(series);
    if (doc.series.length > maxSeries) throw new TooManySeries();
  }
  return doc;
}

/** A document as both readers give it: series already as numbers; a scalar or string result as is. */
interface ReadDocument extends ScannedDocument {
  result?: unknown;
}

/** The byte reader for the plain shapes (nearly every answer), `JSON.parse` for the rest. */
function readDocument(body: Buffer): ReadDocument {
  const scanned = scanPrometheus(body);
  if (scanned) return scanned;
  const doc = JSON.parse(body.toString('utf8')) as PromDocument;
  if (typeof doc !== 'object' || doc === null) throw new Error('not an object');
  const resultType = doc.data?.resultType;
  const result = doc.data?.result;
  const read: ReadDocument = {
    status: doc.status, errorType: doc.errorType, error: doc.error, warnings: doc.warnings, infos: doc.infos,
    resultType, series: [], result,
  };
  if (resultType === 'matrix' || resultType === 'vector') {
    for (const series of (Array.isArray(result) ? result : []) as Series[]) {
      const samples = resultType === 'matrix' ? (series.values ?? []) : series.value ? [series.value] : [];
      const time = new Array<number>(samples.length);
      const value = new Array<number>(samples.length);
      for (let i = 0; i < samples.length; i++) {
        const sample = samples[i]!;
        time[i] = toMs(sample[0]);
        value[i] = parseSampleValue(sample[1]);
      }
      read.series.push({ metric: series.metric ?? {}, time, value });
    }
  }
  return read;
}

function* framesOf(q: PrometheusQuery, doc: ReadDocument, limits: AnswerLimits): Steps<Frame[]> {
  const resultType = doc.resultType ?? '';
  const result = doc.result;
  const meta = (type: string, version: [number, number] = [0, 1]): FrameMeta => ({ type, typeVersion: version, custom: { resultType } });
  if (resultType === 'matrix' || resultType === 'vector') {
    if (doc.series.length > limits.maxSeries) throw new TooManySeries();
    let points = 0;
    const frames: Frame[] = [];
    for (const { metric: labels, time, value } of doc.series) {
      const name = labels.__name__ ?? 'Value';
      const fields: Field[] = Array.isArray(time) || Array.isArray(value)
        ? [timeField(time as number[]), { name, type: 'float64', labels, values: value as number[] }]
        : [writtenField('Time', 'time.Time', time), writtenField(name, 'float64', value, labels)];
      points += fieldLength(fields[0]!) * 2;
      if (points > limits.maxPoints) throw new TooManyPoints();
      frames.push({ meta: meta('timeseries-multi'), fields });
      if (frames.length % SERIES_PER_STEP === 0) yield;
    }
    return frames;
  }
  if (resultType === 'scalar' || resultType === 'string') {
    const sample = Array.isArray(result) ? (result as Sample) : null;
    if (!sample) return [];
    const value: Field = resultType === 'scalar'
      ? { name: 'Value', type: 'float64', values: [parseSampleValue(sample[1])] }
      : { name: 'Value', type: 'string', values: [String(sample[1])] };
    return [{ meta: meta(resultType === 'scalar' ? 'numeric-multi' : 'timeseries-multi'), fields: [timeField([toMs(sample[0])]), value] }];
  }
  return [];
}

const timeField = (values: number[]): Field => ({ name: 'Time', type: 'time.Time', values });

/**
 * `getName`: the legend template with `{{label}}` filled in (missing labels empty), none for
 * `__auto` with labels, else `metric{k="v", ...}`; `{}` becomes the expression itself.
 */
export function displayName(q: Pick<PrometheusQuery, 'legendFormat' | 'expr'>, labels: Record<string, string>): string {
  let legend = metricName(labels);
  if (q.legendFormat === '__auto') {
    if (Object.keys(labels).length > 0) legend = '';
  } else if (q.legendFormat !== '') {
    legend = q.legendFormat.replace(/\{\{\s*(.+?)\s*\}\}/g, (_, name: string) => labels[name.trim()] ?? '');
  }
  return legend === '{}' ? q.expr : legend;
}

/** Prometheus's own `Metric.String()`: name then the other labels sorted, Go-quoted. */
function metricName(labels: Record<string, string>): string {
  const name = labels.__name__;
  const parts = Object.keys(labels).filter((k) => k !== '__name__').sort().map((k) => `${k}=${goQuote(labels[k]!)}`);
  if (parts.length === 0) return name ?? '{}';
  return `${name ?? ''}{${parts.join(', ')}}`;
}
