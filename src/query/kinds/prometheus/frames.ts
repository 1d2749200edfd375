import { fieldLength, writtenField, type DataResponse, type Field, type Frame, type FrameMeta, type Notice } from '../../frames/frame.ts';
import { executedQueryString, type PrometheusQuery } from './model.ts';
import { goQuote } from '../../go-text.ts';
import { AnswerError, parseAnswerJson } from '../../answer-error.ts';
import { ownLabel, readLabels, type Labels } from '../../labels.ts';
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

/** Response status codes whose bodies are Prometheus JSON; others are reported with the body's start. */
export function parsesAsPrometheus(status: number): boolean {
  return (status >= 200 && status < 300) || status === 400 || status === 422 || status === 503;
}

/** The SDK's `ErrorSourceFromHTTPStatus`: statuses only the plugin can cause are `plugin`, the rest `downstream`. */
export function errorSourceOf(status: number): 'plugin' | 'downstream' {
  return [405, 406, 412, 413, 416, 417, 426, 431, 414, 501].includes(status) ? 'plugin' : 'downstream';
}

/** One upstream answer (range or instant) to the refId's response. */
export function prometheusResponse(q: PrometheusQuery, status: number, body: Buffer, maxPoints: number): DataResponse {
  if (!parsesAsPrometheus(status)) {
    const text = body.subarray(0, 1024).toString('utf8');
    return withMeta(q, { error: `unexpected response with status code ${status}: ${text}`, errorSource: errorSourceOf(status), status, frames: [] });
  }
  let doc: ReadDocument;
  try {
    doc = readDocument(body);
  } catch (error) {
    if (!(error instanceof AnswerError)) throw error;
    return withMeta(q, { error: `failed to parse the Prometheus response: ${error.message}`, errorSource: 'downstream', status, frames: [] });
  }
  if (doc.status === 'error') {
    return withMeta(q, { error: `${doc.errorType ?? ''}: ${doc.error ?? ''}`, errorSource: 'downstream', status, frames: [] });
  }
  const frames = framesOf(q, doc, maxPoints);
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
  return withMeta(q, response);
}

/** The empty frame when there is none, the step and display name, and the executed query on the first. */
function withMeta(q: PrometheusQuery, response: DataResponse): DataResponse {
  const frames = response.frames ?? [];
  if (frames.length === 0) frames.push({ fields: [] });
  frames.forEach((frame, i) => {
    frame.meta ??= {};
    if (frame.fields.length >= 2) {
      frame.fields[0]!.config = { interval: q.stepMs };
      const name = displayName(q, frame.fields[1]!.labels ?? {});
      if (name !== '') frame.fields[1]!.config = { displayNameFromDS: name };
    }
    if (i === 0) frame.meta.executedQueryString = executedQueryString(q);
  });
  response.frames = frames;
  return response;
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

function framesOf(q: PrometheusQuery, doc: ReadDocument, maxPoints: number): Frame[] {
  const resultType = doc.resultType ?? '';
  const meta = (type: string, version: [number, number] = [0, 1]): FrameMeta => ({ type, typeVersion: version, custom: { resultType } });
  if (resultType === 'matrix' || resultType === 'vector') {
    let points = 0;
    return doc.series.map(({ metric: labels, time, value }): Frame => {
      const name = ownLabel(labels, '__name__') ?? 'Value';
      const fields: Field[] = Array.isArray(time) || Array.isArray(value)
        ? [timeField(time as number[]), { name, type: 'float64', labels, values: value as number[] }]
        : [writtenField('Time', 'time.Time', time), writtenField(name, 'float64', value, labels)];
      points += fieldLength(fields[0]!) * 2;
      if (points > maxPoints) throw new TooManyPoints();
      return { meta: meta('timeseries-multi'), fields };
    });
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
