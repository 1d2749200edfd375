import type { Frame } from '../../frames/frame.ts';
import type { DataQuery, UpstreamRequest } from '../kind.ts';
import { encodeValues, sortedLabels } from '../../go-text.ts';
import { AnswerError, parseAnswerJson } from '../../answer-error.ts';
import { checkedMillis } from '../../go-numbers.ts';
import { PIECE_BYTES, parseJsonSteps } from '../../json-sliced.ts';
import { drain, type Steps } from '../../slices.ts';

/**
 * Graphite, as the original's backend does it (`pkg/tsdb/graphite/query.go`): the target, its
 * interval units rewritten, one `POST /render` per refId, one frame per returned series. Pure.
 */

/** query.go `fixIntervalFormat`: Graphite reads `'5m'` as months-less minutes only as `'5min'`, and `'1M'` as `'1mon'`. */
export function fixIntervalFormat(target: string): string {
  return target.replace(/'(\d+)m'/g, (m) => m.replaceAll('m', 'min')).replace(/'(\d+)M'/g, (m) => m.replaceAll('M', 'mon'));
}

/** `targetFull` when set, else `target`, rewritten; undefined when the query has none. */
export function graphiteTarget(model: Readonly<Record<string, unknown>>): string | undefined {
  const full = typeof model.targetFull === 'string' ? model.targetFull : '';
  const target = full !== '' ? full : typeof model.target === 'string' ? model.target : '';
  return target === '' ? undefined : fixIntervalFormat(target);
}

/** The `/render` form: `from`/`until` in whole seconds, `format=json`, `maxDataPoints`, the target. */
export function graphiteRequest(query: DataQuery, target: string): UpstreamRequest {
  const body = encodeValues({
    from: String(Math.floor(query.range.from / 1000)),
    until: String(Math.floor(query.range.to / 1000)),
    format: 'json',
    maxDataPoints: String(Math.trunc(query.maxDataPoints)),
    target,
  });
  return { method: 'POST', path: 'render', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" };

/**
 * query.go `parseGraphiteError`: graphite-web before 1.6 answers a failed render with a 500 HTML
 * stack trace; its text lines are kept, the tags dropped.
 */
export function graphiteErrorMessage(status: number, body: string): string {
  if (status !== 500 || !body.startsWith('<body')) return body;
  const text = body
    .replace(/<[^>]*>/g, '\n')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => line.replace(/&(amp|lt|gt|quot|#39|apos);/g, (_m, e: string) => ENTITIES[e]))
    .join('\n');
  return text.trim();
}

/** Go's `strconv.FormatFloat(v, 'f', -1, 64)`: the shortest digits, never an exponent. */
export function formatFloatF(v: number): string {
  const text = String(v);
  const e = text.indexOf('e');
  if (e < 0) return text;
  const negative = text[0] === '-';
  const digits = text.slice(negative ? 1 : 0, e).replace('.', '');
  const point = text.slice(negative ? 1 : 0, e).indexOf('.');
  const exponent = Number(text.slice(e + 1)) + (point < 0 ? e - (negative ? 1 : 0) : point);
  const fixed = exponent <= 0 ? `0.${'0'.repeat(-exponent)}${digits}` : exponent >= digits.length ? digits + '0'.repeat(exponent - digits.length) : `${digits.slice(0, exponent)}.${digits.slice(exponent)}`;
  return negative ? `-${fixed}` : fixed;
}

/** A tag as the original keeps it: strings, and numbers as Go formats them; other types are left out. */
function tagValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatFloatF(v);
  return undefined;
}

/**
 * A datapoint member as the original's `null.Float` decodes it: a number (one that overflows a
 * double is refused, as `encoding/json` refuses it), null, or an object read as `sql.NullFloat64`
 * (its `Float64` member, any case); strings, booleans and lists are refused.
 */
function nullFloat(v: unknown, what: string): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new AnswerError(`failed to parse the Graphite response: ${what} is out of range`);
    return v;
  }
  if (typeof v === 'object' && !Array.isArray(v)) {
    const key = Object.keys(v).findLast((k) => k.toLowerCase() === 'float64');
    const member = key === undefined ? null : (v as Record<string, unknown>)[key];
    if (member !== null && typeof member !== 'number') throw new AnswerError(`failed to parse the Graphite response: ${what} is not a number`);
    return member === null ? 0 : nullFloat(member, what);
  }
  throw new AnswerError(`failed to parse the Graphite response: ${what} is not a number`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A `/render?format=json` answer as frames for one refId; throws an `AnswerError` on an answer the original refuses. */
export function graphiteFrames(body: Buffer | string, refId: string): Frame[] {
  return drain(graphiteFramesSteps(typeof body === 'string' ? Buffer.from(body) : body, refId));
}

/** Answers from this many bytes up are parsed in pieces (below it, one `JSON.parse` takes a few milliseconds). */
export const SLICED_FROM = 1 << 20;

/** Points converted between two stops. */
const POINTS_PER_STEP = 16_384;

/**
 * `graphiteFrames` as steps: a large answer parsed in pieces and converted a few thousand points at
 * a time; `slicing` for tests (every answer in pieces of a few bytes).
 */
export function* graphiteFramesSteps(body: Buffer, refId: string, slicing = { from: SLICED_FROM, pieceBytes: PIECE_BYTES }): Steps<Frame[]> {
  let parsed: unknown;
  try {
    parsed = body.length >= slicing.from ? yield* parseJsonSteps(body, { pieceBytes: slicing.pieceBytes }) : parseAnswerJson(body.toString());
  } catch (error) {
    if (!(error instanceof AnswerError)) throw error;
    throw new AnswerError(`failed to parse the Graphite response: ${error.message}`);
  }
  // Old graphite versions wrapped the list as {"series": [...]}.
  const list = Array.isArray(parsed) ? parsed : isObject(parsed) ? parsed.series : undefined;
  if (!Array.isArray(list)) throw new AnswerError('failed to parse the Graphite response: not a list of series');
  const frames: Frame[] = [];
  for (const raw of list) {
    yield;
    if (raw !== null && !isObject(raw)) throw new AnswerError('failed to parse the Graphite response: a series is not an object');
    const series = raw ?? {};
    if (series.target !== undefined && series.target !== null && typeof series.target !== 'string') {
      throw new AnswerError('failed to parse the Graphite response: a target is not a string');
    }
    const target = typeof series.target === 'string' ? series.target : '';
    const points = series.datapoints ?? [];
    if (!Array.isArray(points)) throw new AnswerError('failed to parse the Graphite response: datapoints are not a list');
    const times: number[] = [];
    const values: (number | null)[] = [];
    for (let from = 0; from < points.length; from += POINTS_PER_STEP) {
      if (from > 0) yield;
      readPoints(points, from, Math.min(points.length, from + POINTS_PER_STEP), times, values);
    }
    const labels = Object.create(null) as Record<string, string>;
    const tags = series.tags;
    if (tags !== undefined && tags !== null && !isObject(tags)) throw new AnswerError('failed to parse the Graphite response: tags are not an object');
    for (const [name, v] of Object.entries(tags ?? {})) {
      // Metrictank's `name` is the whole series key; the target up to its first ';' is the name.
      const value = name === 'name' ? target.split(';')[0] : tagValue(v);
      if (value !== undefined) labels[name] = value;
    }
    frames.push({
      refId,
      meta: { type: 'timeseries-multi' },
      fields: [
        { name: 'time', type: 'time.Time', values: times },
        { name: 'value', type: 'float64', nullable: true, labels: sortedLabels(labels), config: { displayNameFromDS: target }, values },
      ],
    } satisfies Frame);
  }
  return frames;
}

/** Data points `from` to `to` of a series into its times and values. */
function readPoints(points: unknown[], from: number, to: number, times: number[], values: (number | null)[]): void {
  for (let i = from; i < to; i++) {
    const point = points[i];
    if (point !== null && !Array.isArray(point)) throw new AnswerError('failed to parse the Graphite response: a data point is not a list');
    const [value, ts] = (point ?? []) as unknown[];
    const seconds = nullFloat(ts, 'a data point timestamp');
    if (seconds === null) throw new AnswerError('failed to parse data point timestamp');
    times.push(checkedMillis(Math.trunc(seconds) * 1000, 'a data point timestamp'));
    values.push(nullFloat(value, 'a data point value'));
  }
}
