import { describe, expect, it } from '@jest/globals';
import { normalizeQuery, shareKey } from '../../../src/query/live/share-key.ts';

describe('share keys', () => {
  const prom = { refId: 'A', datasource: { type: 'prometheus', uid: 'p1' }, expr: 'up', range: true };
  const key = (queries: Array<Record<string, unknown>>, extra: Partial<{ orgId: number; from: string; to: string; refreshMs: number }> = {}) =>
    shareKey({ orgId: 1, queries, from: 'now-1h', to: 'now', refreshMs: 5_000, ...extra });

  it('applies the envelope defaults, drops per-viewer noise and sorts keys', () => {
    expect(normalizeQuery({ expr: 'up', datasource: { uid: 'p1', type: 'prometheus', name: 'Prom' }, requestId: 'Q100', key: 'x' })).toEqual({
      datasource: { uid: 'p1' }, expr: 'up', hide: false, intervalMs: 1000, maxDataPoints: 100, queryType: '', refId: 'A',
    });
    expect(Object.keys(normalizeQuery({ z: 1, a: { y: 1, b: 2 } }))).toEqual(['a', 'hide', 'intervalMs', 'maxDataPoints', 'queryType', 'refId', 'z']);
    expect(normalizeQuery({ datasource: 'legacy-uid', datasourceId: 3 }).datasource).toEqual({ uid: 'legacy-uid' });
    expect(normalizeQuery({ datasourceId: 3 }).datasourceId).toBe(3);
  });

  it.each([
    ['key order', [{ range: true, expr: 'up', datasource: { uid: 'p1', type: 'prometheus' }, refId: 'A' }], true],
    ['spelled-out defaults', [{ ...prom, intervalMs: 1000, maxDataPoints: 100, queryType: '', hide: false }], true],
    ['another requestId', [{ ...prom, requestId: 'Q7' }], true],
    ['the data source type left out', [{ ...prom, datasource: { uid: 'p1' } }], true],
    ['another expression', [{ ...prom, expr: 'up == 1' }], false],
    ['another data source', [{ ...prom, datasource: { uid: 'p2' } }], false],
    ['another interval', [{ ...prom, intervalMs: 15_000 }], false],
    ['another maxDataPoints', [{ ...prom, maxDataPoints: 1_000 }], false],
    ['another refId', [{ ...prom, refId: 'B' }], false],
  ])('%s: shared %s', (_name, queries, shared) => {
    expect(key(queries) === key([prom])).toBe(shared);
  });

  it('splits by org, range text and refresh, never by query order', () => {
    const b = { ...prom, refId: 'B', expr: 'rate(x[5m])' };
    expect(key([prom, b])).toBe(key([b, prom]));
    expect(key([prom], { orgId: 2 })).not.toBe(key([prom]));
    expect(key([prom], { from: 'now-6h' })).not.toBe(key([prom]));
    expect(key([prom], { refreshMs: 10_000 })).not.toBe(key([prom]));
  });
});
