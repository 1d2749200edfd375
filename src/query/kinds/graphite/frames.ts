import type { Frame } from '../../frames/frame.ts';
import type { DataQuery, UpstreamCall } from '../kind.ts';
import { encodeValues, sortedLabels } from '../../go-text.ts';

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
export function graphiteRequest(query: DataQuery, target: string): UpstreamCall {
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

function tagValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

/** A `/render?format=json` answer as frames for one refId; throws on a malformed answer. */
export function graphiteFrames(body: Buffer | string, refId: string): Frame[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString());
  } catch (error) {
    throw new Error(`failed to parse the Graphite response: ${(error as Error).message}`);
  }
  // Old graphite versions wrapped the list as {"series": [...]}.
  const list = Array.isArray(parsed) ? parsed : (parsed as { series?: unknown })?.series;
  if (!Array.isArray(list)) throw new Error('failed to parse the Graphite response: not a list of series');
  return list.map((raw) => {
    const series = (raw ?? {}) as { target?: unknown; datapoints?: unknown; tags?: unknown };
    const target = typeof series.target === 'string' ? series.target : '';
    const times: number[] = [];
    const values: (number | null)[] = [];
    for (const point of Array.isArray(series.datapoints) ? series.datapoints : []) {
      const [value, ts] = Array.isArray(point) ? point : [];
      if (typeof ts !== 'number' || !Number.isFinite(ts)) throw new Error('failed to parse data point timestamp');
      times.push(Math.trunc(ts) * 1000);
      values.push(typeof value === 'number' ? value : null);
    }
    const labels: Record<string, string> = {};
    if (series.tags && typeof series.tags === 'object') {
      for (const [name, v] of Object.entries(series.tags as Record<string, unknown>)) {
        // Metrictank's `name` is the whole series key; the target up to its first ';' is the name.
        const value = name === 'name' ? target.split(';')[0] : tagValue(v);
        if (value !== undefined) labels[name] = value;
      }
    }
    return {
      refId,
      meta: { type: 'timeseries-multi' },
      fields: [
        { name: 'time', type: 'time.Time', values: times },
        { name: 'value', type: 'float64', nullable: true, labels: sortedLabels(labels), config: { displayNameFromDS: target }, values },
      ],
    } satisfies Frame;
  });
}
