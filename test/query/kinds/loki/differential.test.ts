import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeFrame, encodeResults } from '../../../../src/query/frames/encode.ts';
import { goJsonStringMap, goQuote } from '../../../../src/query/go-text.ts';
import { lokiFrames, parseLokiQuery } from '../../../../src/query/kinds/loki/frames.ts';
import { jsonText, labels, members, raw, sometimes, spacingOf } from '../../../support/hostile-json.ts';

// Random and hostile Loki log answers through the kind (byte reader, else its general reading)
// and through a plain reference: JSON.parse, the streams read member by member as the original's
// converter reads them, ids as frame.go makes them. Same frame data or same error; valid JSON.

class Refused extends Error {}

/** Go's hash/fnv New32 (FNV-1) over the UTF-8 bytes. */
function fnv1(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text)) h = (Math.imul(h, 0x01000193) ^ byte) >>> 0;
  return h.toString(16);
}

interface Data { labels: unknown[]; times: number[]; lines: string[]; tsNs: string[]; ids: string[]; nanos: number[] }

function reference(text: string): { error: string } | { data: Data | null } {
  try {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new Refused('invalid JSON');
    }
    return { data: read(doc) };
  } catch (error) {
    if (error instanceof Refused) return { error: `failed to parse the Loki response: ${error.message}` };
    throw error;
  }
}

function read(doc: unknown): Data | null {
  const data = (doc as { data?: { result?: unknown } } | null)?.data;
  if (!data || typeof data !== 'object') throw new Refused('no data');
  const result = data.result;
  if (result === null || (Array.isArray(result) && result.length === 0)) return null;
  if (!Array.isArray(result)) throw new Refused('result is not an array');
  const out: Data = { labels: [], times: [], lines: [], tsNs: [], ids: [], nanos: [] };
  const seen = new Map<string, number>();
  let labelsJson = '{}';
  for (const stream of result) {
    if (stream === null) continue;
    if (typeof stream !== 'object' || Array.isArray(stream)) throw new Refused('a stream is not an object');
    for (const [key, v] of Object.entries(stream)) {
      if (key === 'stream') {
        if (v !== null && (typeof v !== 'object' || Array.isArray(v))) throw new Refused('stream labels are not an object');
        const map: Record<string, string> = Object.create(null) as Record<string, string>;
        for (const [k, value] of Object.entries(v ?? {})) {
          if (value !== null && typeof value !== 'string') throw new Refused(`stream labels: the value of ${goQuote(k)} is not a string`);
          map[k] = value ?? '';
        }
        labelsJson = goJsonStringMap(map);
      } else if (key === 'values' && v !== null) {
        if (!Array.isArray(v)) throw new Refused('values is not an array');
        for (const entry of v) {
          if (!Array.isArray(entry) || entry.length < 2 || typeof entry[0] !== 'string' || typeof entry[1] !== 'string') throw new Refused('a log entry is not ["<timestamp>", "<line>"]');
          const [ts, line] = entry as [string, string];
          if (!/^[0-9]{1,19}$/.test(ts) && !/^[+-][0-9]{1,17}$/.test(ts)) throw new Refused(`unexpected time format '${ts}' in response. response may have been truncated`);
          const ns = BigInt(ts);
          const ms = ns / 1_000_000n - (ns % 1_000_000n < 0n ? 1n : 0n);
          const sum = `${ts}_${fnv1(`${line}_${labelsJson}`)}`;
          const count = seen.get(sum) ?? 0;
          seen.set(sum, count + 1);
          out.labels.push(JSON.parse(labelsJson));
          out.times.push(Number(ms));
          out.nanos.push(Number(ns - ms * 1_000_000n));
          out.lines.push(line);
          out.tsNs.push(ts);
          out.ids.push(count > 0 ? `${sum}_${count}` : sum);
        }
      }
    }
  }
  return out;
}

const q = parseLokiQuery({ refId: 'A', queryType: '', intervalMs: 1000, maxDataPoints: 100, range: { from: 0, to: 3_600_000 }, model: { expr: '{a="b"}' } });

function actual(text: string): { outcome: { error: string } | { data: Data | null }; json: string } {
  try {
    const frames = lokiFrames(text, q);
    const json = encodeResults(new Map([['A', { frames }]]));
    if (frames.length === 0) return { outcome: { data: null }, json };
    const encoded = JSON.parse(encodeFrame(frames[0]!)) as { data: { values: unknown[][]; nanos?: Array<number[] | null> } };
    const [labelsOut, times, lines, tsNs, ids] = encoded.data.values as [unknown[], number[], string[], string[], string[]];
    return { outcome: { data: { labels: labelsOut, times, lines, tsNs, ids, nanos: encoded.data.nanos?.[1] ?? times.map(() => 0) } }, json };
  } catch (error) {
    return { outcome: { error: (error as Error).message }, json: encodeResults(new Map([['A', { error: (error as Error).message, errorSource: 'downstream' as const, status: 502 }]])) };
  }
}

const lineArb = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.constantFrom('same line', 'a <b> & c', 'tab\there\n', '\u2028\u2029', '\ud800 lone', 'q"uote\\', '\u0000\u001f\u007f', 'é🌙') },
);

const tsArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('1700000000000000000', '1700000000000000001', '1700000000123456789', '5', '0', '000123') },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 9_999_999_999_999_999_999n }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('9999999999999999999', '99999999999999999999', '+5', '-1500000', '-1234567890123456789', '', '12a', '1e9', ' 1', '1.5') },
);

const entryArb = sometimes(fc.tuple(tsArb, lineArb).map(([ts, line]) => [ts, line]), [null, ['5'], [5, 'x'], ['5', 5], 'abc', ['5', 'x', members(['structuredMetadata', members()])]]);

const streamArb = fc.record({
  labels: sometimes(labels, [null, [1], 'x']),
  values: sometimes(fc.array(entryArb, { maxLength: 6 }), [null, 'abcdefghij', members()]),
  order: fc.constantFrom('labels first', 'values first', 'no labels', 'no values'),
}).map(({ labels: l, values, order }) => {
  if (order === 'no labels') return members(['values', values]);
  if (order === 'no values') return members(['stream', l]);
  return order === 'labels first' ? members(['stream', l], ['values', values]) : members(['values', values], ['stream', l]);
});

const documentArb = fc.record({
  streams: sometimes(fc.array(sometimes(streamArb, [null, 5]), { maxLength: 4 }), [null, 'x']),
  stats: fc.boolean(),
  spacing: fc.nat(),
}).map(({ streams, stats, spacing }) => {
  const data: Array<readonly [string, unknown]> = [['resultType', 'streams'], ['result', streams]];
  if (stats) data.push(['stats', members(['summary', members(['execTime', raw('0.5')])])]);
  return jsonText(members(['status', 'success'], ['data', members(...data)]), spacingOf(spacing));
});

describe('Loki log answers: the kind against a JSON.parse reference', () => {
  it('gives the same frame data (labels, times, lines, ids) or the same error, and always valid JSON', () => {
    fc.assert(fc.property(documentArb, (text) => {
      const { outcome, json } = actual(text);
      expect(outcome).toEqual(reference(text));
      expect(() => JSON.parse(json)).not.toThrow();
    }), { numRuns: 1500 });
  });

  it('numbers many repeats of one line in linear time, as the reference does', () => {
    const values = Array.from({ length: 3000 }, (_, i) => [String(1700000000000000000n + BigInt(i % 3)), 'same line']);
    const text = jsonText(members(['data', members(['resultType', 'streams'], ['result', [members(['stream', members(['a', 'b'])], ['values', values])]])]));
    expect(actual(text).outcome).toEqual(reference(text));
  });
});
