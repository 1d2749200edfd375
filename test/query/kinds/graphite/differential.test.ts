import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeResults } from '../../../../src/query/frames/encode.ts';
import { graphiteFrames, graphiteFramesSteps } from '../../../../src/query/kinds/graphite/frames.ts';
import { drain } from '../../../../src/query/slices.ts';
import { jsonText, labelName, members, raw, sometimes, spacingOf } from '../../../support/hostile-json.ts';

// Random and hostile Graphite render answers through the kind and through a plain reference:
// JSON.parse, decoded as the original's []TargetResponseDTO with null.Float points.

class Refused extends Error {}

interface RefFrame { target: string; labels: Array<[string, string]>; times: number[]; values: Array<number | null> }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function nullFloat(v: unknown, what: string): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Refused(`failed to parse the Graphite response: ${what} is out of range`);
    return v;
  }
  if (isObject(v)) {
    const key = Object.keys(v).filter((k) => k.toLowerCase() === 'float64').pop();
    const member = key === undefined ? null : v[key];
    if (member !== null && typeof member !== 'number') throw new Refused(`failed to parse the Graphite response: ${what} is not a number`);
    return member === null ? 0 : nullFloat(member, what);
  }
  throw new Refused(`failed to parse the Graphite response: ${what} is not a number`);
}

/** FormatFloat(v, 'f', -1, 64): the shortest digits (JavaScript's), the point moved by the exponent. */
function fixed(v: number): string {
  const [, sign, int, frac = '', exp] = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(v))!;
  const digits = `${int}${frac}`;
  const point = int!.length + Number(exp ?? 0);
  const body = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? `${digits}${'0'.repeat(point - digits.length)}` : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return `${sign}${body}`;
}

function reference(text: string): { error: string } | { frames: RefFrame[] } {
  try {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Refused('failed to parse the Graphite response: invalid JSON');
    }
    const list = Array.isArray(parsed) ? parsed : isObject(parsed) ? parsed.series : undefined;
    if (!Array.isArray(list)) throw new Refused('failed to parse the Graphite response: not a list of series');
    return {
      frames: list.map((raw): RefFrame => {
        if (raw !== null && !isObject(raw)) throw new Refused('failed to parse the Graphite response: a series is not an object');
        const s = (raw ?? {}) as Record<string, unknown>;
        if (s.target !== undefined && s.target !== null && typeof s.target !== 'string') throw new Refused('failed to parse the Graphite response: a target is not a string');
        const target = (s.target as string | null | undefined) ?? '';
        const points = s.datapoints ?? [];
        if (!Array.isArray(points)) throw new Refused('failed to parse the Graphite response: datapoints are not a list');
        const frame: RefFrame = { target, labels: [], times: [], values: [] };
        for (const point of points) {
          if (point !== null && !Array.isArray(point)) throw new Refused('failed to parse the Graphite response: a data point is not a list');
          const [value, ts] = (point ?? []) as unknown[];
          const seconds = nullFloat(ts, 'a data point timestamp');
          if (seconds === null) throw new Refused('failed to parse data point timestamp');
          const ms = Math.trunc(seconds) * 1000;
          if (!(Math.abs(ms) < 2 ** 63)) throw new Refused('a data point timestamp is out of range');
          frame.times.push(ms);
          frame.values.push(nullFloat(value, 'a data point value'));
        }
        if (s.tags !== undefined && s.tags !== null && !isObject(s.tags)) throw new Refused('failed to parse the Graphite response: tags are not an object');
        for (const [name, v] of Object.entries((s.tags ?? {}) as Record<string, unknown>)) {
          if (name === 'name') frame.labels.push([name, target.split(';')[0]!]);
          else if (typeof v === 'string') frame.labels.push([name, v]);
          else if (typeof v === 'number') frame.labels.push([name, fixed(v)]);
        }
        frame.labels.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return frame;
      }),
    };
  } catch (error) {
    if (error instanceof Refused) return { error: error.message };
    throw error;
  }
}

/** The kind's frames, read whole, or (`piece`) parsed in pieces of that many bytes as a large answer is. */
function actual(text: string, piece?: number): { outcome: { error: string } | { frames: RefFrame[] }; json: string } {
  try {
    const frames = piece === undefined ? graphiteFrames(text, 'A') : drain(graphiteFramesSteps(Buffer.from(text), 'A', { from: 0, pieceBytes: piece }));
    return {
      outcome: {
        frames: frames.map((f) => ({
          target: f.fields[1]!.config?.displayNameFromDS ?? '', labels: Object.entries(f.fields[1]!.labels ?? {}),
          times: f.fields[0]!.values as number[], values: f.fields[1]!.values as Array<number | null>,
        })),
      },
      json: encodeResults(new Map([['A', { frames }]])),
    };
  } catch (error) {
    return { outcome: { error: (error as Error).message }, json: '{}' };
  }
}

const floatArb = fc.oneof(
  { weight: 6, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => raw(String(v))) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, raw('1e400'), raw('-1e400'), '1', true, [1], members(['Float64', raw('2.5')]), members(), members(['float64', 'x'])) },
);
const timeArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 2_000_000_000 }).map((v) => raw(String(v))) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, raw('1e306'), raw('1e400'), raw('1.5e9'), raw('-0.5'), '1', raw('9.2e15')) },
);
const pointArb = sometimes(fc.tuple(floatArb, timeArb), [null, 5, [], [raw('1')], [raw('1'), raw('2'), raw('3')]]);
const tagValue = fc.oneof(fc.string({ maxLength: 4 }), fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => raw(String(v))), fc.constantFrom<unknown>(true, null, [1], members()));
const seriesArb = fc.record({
  target: sometimes(fc.constantFrom('a.b', 'a;tag=1', ''), [5, null]),
  datapoints: sometimes(fc.array(pointArb, { maxLength: 5 }), [null, 'abcdefghij', members()]),
  tags: fc.option(sometimes(fc.array(fc.tuple(fc.oneof(labelName, fc.constant('name')), tagValue), { maxLength: 3 }).map((pairs) => members(...pairs.filter(([k], i) => pairs.findIndex(([j]) => j === k) === i))), [[1], 'x']), { nil: undefined }),
}).map(({ target, datapoints, tags }) => members(['target', target], ['datapoints', datapoints], ...(tags === undefined ? [] : [['tags', tags] as const])));

const documentArb = fc.tuple(sometimes(fc.array(sometimes(seriesArb, [null, 5]), { maxLength: 3 }), [members(['series', []]), 'x', null]), fc.nat())
  .map(([list, spacing]) => jsonText(list, spacingOf(spacing)));

describe('Graphite answers: the kind against a JSON.parse reference', () => {
  it('gives the same frames or the same error, and always valid JSON', () => {
    fc.assert(fc.property(documentArb, (text) => {
      const { outcome, json } = actual(text);
      expect(outcome).toEqual(reference(text));
      expect(() => JSON.parse(json)).not.toThrow();
    }), { numRuns: 1500 });
  });

  it('gives the same when the answer is parsed in pieces, as a large one is', () => {
    fc.assert(fc.property(documentArb, fc.integer({ min: 1, max: 40 }), (text, piece) => {
      expect(actual(text, piece)).toEqual(actual(text));
    }), { numRuns: 1500 });
  });
});
