import { fieldLength, writtenField, type DataResponse, type Field, type Frame, type FrameMeta, type Notice } from '../../frames/frame.ts';
import { executedQueryString, type PrometheusQuery } from './model.ts';
import { goQuote } from '../../go-text.ts';
import { AnswerError, parseAnswerJson } from '../../answer-error.ts';
import { ownLabel, readLabels, type Labels } from '../../labels.ts';
import { drain, drainSliced, type Steps } from '../../slices.ts';
import { chunkDocuments, resultLayoutSteps, withoutResult } from '../result-chunks.ts';
import { annotations, parseSampleValue, sampleMillis, scanPrometheus, type ScannedDocument } from './scan.ts';

/**
 * Prometheus JSON to frames, as the original's converter and response code do it
 * (`pkg/promlib/converter/prom.go`, `querydata/response.go`): one frame per series with `Time`
 * and a float64 value field named after `__name__` (else `Value`), the labels, the step as the
 * time field's interval, `displayNameFromDS` from the legend; a scalar or string as one frame;
 * `Expr: ...\nStep: ...` on the first frame; warnings and infos as notices; an error document as
 * the refId's error, still with one empty frame carrying the meta.
 *
 * What the original's reader (jsoniter) refuses fails the answer here too: a sample that is not
 * `[<number>, "<string>"]`, a value `strconv.ParseFloat` refuses (`""`, `" 12 "`, `"0x10"`), a
 * time that overflows, labels that are not strings (`null` reads as ""), a result of the wrong
 * type, `data` without `resultType`. `null` where a list or series is expected reads as none or
 * as an empty series, as it does there. Pure.
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
    if (!(error instanceof AnswerError)) throw error;
    return withMeta(q, { error: `failed to parse the Prometheus response: ${error.message}`, errorSource: 'downstream', status, frames: [] });
  }
  if (doc.status === 'error') {
    return withMeta(q, { error: `${doc.errorType ?? ''}: ${doc.error ?? ''}`, errorSource: 'downstream', status, frames: [] });
  }
  const frames = yield* framesOf(q, doc, limits);
  const notices: Notice[] = [
    ...(doc.warnings ?? []).map((text): Notice => ({ severity: 'warning', text })),
    ...(doc.infos ?? []).map((text): Notice => ({ severity: 'info', text })),
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

/** A document as both readers give it: series already as numbers; a scalar's or string's one sample. */
interface ReadDocument extends ScannedDocument {
  sample?: [number, number | string];
}

/** The byte reader for the plain shapes (nearly every answer), the general reading for the rest. */
function readDocument(body: Buffer): ReadDocument {
  return scanPrometheus(body) ?? readParsed(parseAnswerJson(body.toString('utf8')));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string member as jsoniter's `ReadString` reads it: `null` is "". */
function stringMember(v: unknown, key: string): string {
  if (v === null) return '';
  if (typeof v !== 'string') throw new AnswerError(`${key} is not a string`);
  return v;
}

/** The parsed document read as the original reads it, members in their order. */
export function readParsed(doc: unknown): ReadDocument {
  if (!isObject(doc)) throw new AnswerError('not an object');
  const read: ReadDocument = { series: [] };
  for (const [key, v] of Object.entries(doc)) {
    if (key === 'status' || key === 'errorType' || key === 'error') read[key] = stringMember(v, key);
    else if (key === 'warnings' || key === 'infos') read[key] = annotations(v, key);
    else if (key === 'data') readParsedData(v, read);
  }
  return read;
}

function readParsedData(data: unknown, read: ReadDocument): void {
  // A list (label values, exemplars) holds no series; anything else but an object is refused.
  if (Array.isArray(data)) return;
  if (!isObject(data)) throw new AnswerError('expected object type');
  if (typeof data.resultType !== 'string') {
    if (data.resultType === undefined) throw new AnswerError('no resultType found');
    throw new AnswerError('resultType is not a string');
  }
  const resultType = data.resultType;
  read.resultType = resultType;
  if (!Object.hasOwn(data, 'result')) return;
  const result = data.result;
  switch (resultType) {
    case 'matrix':
    case 'vector':
      if (result === null) return;
      if (!Array.isArray(result)) throw new AnswerError('result is not an array');
      for (const series of result) read.series.push(readParsedSeries(series));
      return;
    case 'scalar':
      read.sample = readPair(result, true);
      return;
    case 'string':
      read.sample = readPair(result, false);
      return;
    case 'streams':
      return;
    default:
      throw new AnswerError(`unknown result type: ${resultType}`);
  }
}

/** A series' members in order: `value` and `values` append their samples alike; `null` is a series without any. */
function readParsedSeries(series: unknown): { metric: Labels; time: number[]; value: number[] } {
  const out = { metric: readLabels(undefined, 'series labels'), time: [] as number[], value: [] as number[] };
  if (series === null) return out;
  if (!isObject(series)) throw new AnswerError('a series is not an object');
  const push = (sample: unknown) => {
    const [ms, value] = readPair(sample, true) as [number, number];
    out.time.push(ms);
    out.value.push(value);
  };
  for (const [key, v] of Object.entries(series)) {
    if (key === 'metric') out.metric = readLabels(v, 'series labels');
    else if (key === 'value') push(v);
    else if (key === 'values') {
      if (v === null) continue;
      if (!Array.isArray(v)) throw new AnswerError('values is not an array');
      for (const sample of v) push(sample);
    }
  }
  return out;
}

/**
 * `[<seconds>, "<text>"]`: the time in epoch ms and the text, parsed as a float when `numeric`;
 * checked in the original's order (the time, the text, the end, then the value).
 */
function readPair(pair: unknown, numeric: boolean): [number, number | string] {
  const shape = () => new AnswerError('a sample is not [<time>, "<value>"]');
  if (!Array.isArray(pair) || typeof pair[0] !== 'number') throw shape();
  const ms = sampleMillis(pair[0]);
  if (typeof pair[1] !== 'string' || pair.length !== 2) throw shape();
  return [ms, numeric ? parseSampleValue(pair[1]) : pair[1]];
}

function* framesOf(q: PrometheusQuery, doc: ReadDocument, limits: AnswerLimits): Steps<Frame[]> {
  const resultType = doc.resultType ?? '';
  const meta = (type: string, version: [number, number] = [0, 1]): FrameMeta => ({ type, typeVersion: version, custom: { resultType } });
  if (resultType === 'matrix' || resultType === 'vector') {
    if (doc.series.length > limits.maxSeries) throw new TooManySeries();
    let points = 0;
    const frames: Frame[] = [];
    for (const { metric: labels, time, value } of doc.series) {
      const name = ownLabel(labels, '__name__') ?? 'Value';
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
    const sample = doc.sample;
    if (!sample) return [];
    const value: Field = resultType === 'scalar'
      ? { name: 'Value', type: 'float64', values: [sample[1]] }
      : { name: 'Value', type: 'string', values: [sample[1]] };
    return [{ meta: meta(resultType === 'scalar' ? 'numeric-multi' : 'timeseries-multi'), fields: [timeField([sample[0]]), value] }];
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
    legend = q.legendFormat.replace(/\{\{\s*(.+?)\s*\}\}/g, (_, name: string) => ownLabel(labels, name.trim()) ?? '');
  }
  return legend === '{}' ? q.expr : legend;
}

/** Prometheus's own `Metric.String()`: name then the other labels sorted, Go-quoted. */
function metricName(labels: Record<string, string>): string {
  const name = ownLabel(labels, '__name__');
  const parts = Object.keys(labels).filter((k) => k !== '__name__').sort().map((k) => `${k}=${goQuote(labels[k]!)}`);
  if (parts.length === 0) return name ?? '{}';
  return `${name ?? ''}{${parts.join(', ')}}`;
}
