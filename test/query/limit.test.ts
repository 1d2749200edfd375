import { describe, expect, it } from '@jest/globals';
import { mapLimited } from '../../src/query/limit.ts';

describe('mapLimited', () => {
  it('keeps at most `limit` in flight, starts the next as one ends, and answers in the items\' order', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const results = await mapLimited([30, 5, 20, 1, 10, 2], 2, async (ms) => {
      started.push(ms);
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, ms));
      inFlight--;
      return ms * 2;
    });
    expect(results).toEqual([60, 10, 40, 2, 20, 4]);
    expect(most).toBe(2);
    expect(started).toEqual([30, 5, 20, 1, 10, 2]);
  });

  it('runs nothing for no items, and all at once when the limit exceeds them', async () => {
    let calls = 0;
    expect(await mapLimited([], 4, async () => ++calls)).toEqual([]);
    let inFlight = 0;
    let most = 0;
    await mapLimited([1, 2, 3], 10, async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
    });
    expect([calls, most]).toEqual([0, 3]);
  });

  it('rejects with the first failure', async () => {
    await expect(mapLimited([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('two failed');
      return n;
    })).rejects.toThrow('two failed');
  });
});
