import { describe, expect, it } from '@jest/globals';
import { applyLiveDelta, type LiveResult, type LiveResultDelta } from '../../../examples/typed-client/src/live-frames.ts';
import type { DataResponse, Frame } from '../../../src/query/frames/frame.ts';
import { deepEqual, frameAppend, resultsDelta, type ResultDelta } from '../../../src/query/live/delta.ts';

function series(start: number, count: number, step: number, value: (t: number) => number | null, labels: Record<string, string> = { job: 'a' }): Frame {
  const times = Array.from({ length: count }, (_, i) => start + i * step);
  return {
    refId: 'A',
    meta: { type: 'timeseries-multi', typeVersion: [0, 1] },
    fields: [
      { name: 'Time', type: 'time.Time', config: { interval: step }, values: times },
      { name: 'Value', type: 'float64', nullable: true, labels, values: times.map(value) },
    ],
  };
}

/** What the GraphQL field sends for a server delta (src/graphql/schema/live-query.ts), through JSON. */
function wire(deltas: ResultDelta[]): LiveResultDelta[] {
  return JSON.parse(JSON.stringify(deltas.map((d) => d.kind === 'replace'
    ? { refId: d.refId, kind: 'REPLACE', status: d.response.status ?? 200, error: d.response.error ?? null, errorSource: d.response.error !== undefined ? (d.response.errorSource ?? '') : null, frames: d.response.frames ?? null }
    : d.kind === 'append' ? { refId: d.refId, kind: 'APPEND', appends: d.appends } : { refId: d.refId, kind: 'REMOVE' }))) as LiveResultDelta[];
}

/** A fresh query's answer as the client would hold it after a REPLACE. */
function fresh(results: Map<string, DataResponse>): Map<string, LiveResult> {
  return new Map(wire(resultsDelta(null, results)).map((d) => [d.refId, { status: d.status, error: d.error, errorSource: d.errorSource, frames: d.frames }]));
}

describe('frame deltas', () => {
  const value = (t: number) => (t / 1000) % 7;

  it.each([
    ['window moved by two rows', series(0, 10, 1000, value), series(2000, 10, 1000, value), { drop: 2, added: 2 }],
    ['rows only added', series(0, 5, 1000, value), series(0, 8, 1000, value), { drop: 0, added: 3 }],
    ['rows only dropped', series(0, 8, 1000, value), series(3000, 5, 1000, value), { drop: 3, added: 0 }],
    ['unchanged', series(0, 5, 1000, value), series(0, 5, 1000, value), { drop: 0, added: 0 }],
    ['from empty', series(0, 0, 1000, value), series(0, 4, 1000, value), { drop: 0, added: 4 }],
    ['NaN kept in place', series(0, 5, 1000, () => NaN), series(1000, 5, 1000, () => NaN), { drop: 1, added: 1 }],
    ['a past value changed', series(0, 5, 1000, value), series(1000, 5, 1000, (t) => (t === 2000 ? 99 : value(t))), null],
    ['no overlap at all', series(0, 5, 1000, value), series(10_000, 5, 1000, value), null],
    ['labels changed', series(0, 5, 1000, value), series(1000, 5, 1000, value, { job: 'b' }), null],
    ['config changed', series(0, 5, 1000, value), series(1000, 5, 2000, value), null],
    ['everything dropped', series(0, 5, 1000, value), series(0, 0, 1000, value), null],
  ])('%s', (_name, before, after, expected) => {
    const append = frameAppend(before, after);
    if (expected === null) expect(append).toBeNull();
    else {
      expect(append?.drop).toBe(expected.drop);
      expect(append?.values.map((c) => c.length)).toEqual([expected.added, expected.added]);
    }
  });

  it('an error, a new refId, a removed one and a frame more are whole replacements', () => {
    const a = { status: 200, frames: [series(0, 3, 1000, value)] };
    const delta = resultsDelta(new Map([['A', a], ['B', a], ['C', a]]), new Map<string, DataResponse>([
      ['A', { error: 'boom', errorSource: 'downstream', status: 502 }],
      ['B', { status: 200, frames: [series(0, 3, 1000, value), series(0, 3, 1000, value)] }],
      ['D', a],
    ]));
    expect(delta.map((d) => [d.refId, d.kind])).toEqual([['A', 'replace'], ['B', 'replace'], ['D', 'replace'], ['C', 'remove']]);
    expect(resultsDelta(new Map([['A', a]]), new Map([['A', { status: 200, frames: [series(0, 3, 1000, value)] }]]))).toEqual([]);
  });

  it('a refId failing again exactly as before is not resent; any change to its failure is', () => {
    const failed = (error: string, status = 502, errorSource: DataResponse['errorSource'] = 'downstream', frames?: Frame[]): DataResponse => ({ error, errorSource, status, ...(frames ? { frames } : {}) });
    const before = new Map([['A', failed('upstream said no')], ['B', failed('Data source not found', 404, 'plugin')]]);
    // New objects every refresh, as every run makes them.
    expect(resultsDelta(before, new Map([['A', failed('upstream said no')], ['B', failed('Data source not found', 404, 'plugin')]]))).toEqual([]);
    const changes: Array<[string, DataResponse]> = [
      ['another message', failed('upstream said no again')],
      ['another status', failed('upstream said no', 503)],
      ['another source', failed('upstream said no', 502, 'plugin')],
      ['frames beside the error', failed('upstream said no', 502, 'downstream', [series(0, 2, 1000, () => 1)])],
      ['recovered', { status: 200, frames: [series(0, 2, 1000, () => 1)] }],
    ];
    for (const [, next] of changes) {
      expect(resultsDelta(before, new Map([['A', next], ['B', before.get('B')!]]))).toEqual([{ refId: 'A', kind: 'replace', response: next }]);
    }
    // Same error and the same frames beside it: unchanged too.
    const withFrames = failed('partial', 502, 'downstream', [series(0, 2, 1000, () => 1)]);
    expect(resultsDelta(new Map([['A', withFrames]]), new Map([['A', failed('partial', 502, 'downstream', [series(0, 2, 1000, () => 1)])]]))).toEqual([]);
    // A success turning into a failure is a replacement, as before.
    expect(resultsDelta(new Map([['A', { status: 200, frames: [] }]]), new Map([['A', failed('x')]]))[0]!.kind).toBe('replace');
  });

  it('the client ends with the same frames as a fresh query at every step', () => {
    // A seeded walk through the shapes an answer takes over time: windows moving, series
    // appearing, errors coming and going, values rewritten.
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let state = new Map<string, LiveResult>();
    let previous: Map<string, DataResponse> | null = null;
    let start = 0;
    let appendsSeen = 0;
    for (let step = 0; step < 200; step++) {
      const roll = random();
      start += roll < 0.7 ? 1000 * Math.floor(random() * 3) : 0;
      const count = 5 + Math.floor(random() * 3);
      const results = new Map<string, DataResponse>();
      results.set('A', roll > 0.95 ? { error: 'upstream said no', errorSource: 'downstream', status: 502 } : { status: 200, frames: [series(start, count, 1000, (t) => (roll > 0.9 ? t : t % 13))] });
      if (random() > 0.3) results.set('B', { status: 200, frames: [series(start, 4, 1000, (t) => (t % 5 === 0 ? NaN : t)), { fields: [] }] });
      const delta = resultsDelta(previous, results);
      appendsSeen += delta.filter((d) => d.kind === 'append').length;
      state = applyLiveDelta(state, wire(delta));
      expect(state).toEqual(fresh(results));
      previous = results;
    }
    expect(appendsSeen).toBeGreaterThan(20);
  });

  it('nanos move with their rows', () => {
    const before: Frame = { fields: [{ name: 't', type: 'time.Time', values: [1, 2, 3], nanos: [0, 5, 0] }] };
    const after: Frame = { fields: [{ name: 't', type: 'time.Time', values: [2, 3, 4], nanos: [5, 0, 7] }] };
    const append = frameAppend(before, after)!;
    expect(append).toMatchObject({ drop: 1, values: [[4]], nanos: [[7]] });
    const applied = applyLiveDelta(new Map([['A', { frames: [before] as never }]]), [{ refId: 'A', kind: 'APPEND', appends: [append] }]);
    expect(applied.get('A')!.frames![0]!.fields[0]).toEqual({ name: 't', type: 'time.Time', values: [2, 3, 4], nanos: [5, 0, 7] });
  });

  it.each([
    [{ a: 1, b: [1, { c: NaN }] }, { b: [1, { c: NaN }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, true],
    [{ a: 1 }, { a: 2 }, false],
    [[1, 2], [1, 2, 3], false],
    [[1], { 0: 1 }, false],
    [null, {}, false],
  ])('deepEqual(%j, %j) = %s', (a, b, equal) => {
    expect(deepEqual(a, b)).toBe(equal);
  });
});
