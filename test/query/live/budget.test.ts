import { describe, expect, it } from '@jest/globals';
import { CallBudget, callsPerRefresh, formatRate } from '../../../src/query/live/budget.ts';

const prom = (refId: string) => ({ refId, datasource: { type: 'prometheus', uid: 'p1' }, expr: 'up' });
const math = (refId: string) => ({ refId, datasource: { type: '__expr__', uid: '__expr__' }, type: 'math', expression: '$A * 2' });

describe('calls per refresh', () => {
  it.each([
    ['one query', [prom('A')], 1],
    ['200 queries', Array.from({ length: 200 }, (_, i) => prom(`R${i}`)), 200],
    ['expressions do not call a data source', [prom('A'), prom('B'), math('C'), { refId: 'D', datasource: { uid: '-100' } }], 2],
    ['legacy string and id references count', [{ refId: 'A', datasource: 'p1' }, { refId: 'B', datasourceId: 3 }, { refId: 'C', datasource: '__expr__' }], 2],
    ['a query naming no data source still counts (the envelope refuses it)', [{ refId: 'A' }], 1],
    ['only expressions: the run itself', [math('A')], 1],
  ])('%s', (_name, queries, calls) => {
    expect(callsPerRefresh(queries)).toBe(calls);
  });

  it.each([[12, '12'], [0.5, '0.5'], [10 / 3, '3.33'], [200, '200']])('formats %d as %s', (rate, text) => {
    expect(formatRate(rate)).toBe(text);
  });
});

describe('a caller\'s budget of calls per second', () => {
  it('refuses what would go past the limit, naming what is held; the limit met exactly fits', () => {
    const budget = new CallBudget(10);
    const a = budget.reserve('user:1', 'q1', 4);
    const b = budget.reserve('user:1', 'q2', 6);
    expect('release' in a && 'release' in b).toBe(true);
    expect(budget.held('user:1')).toBe(10);
    expect(budget.reserve('user:1', 'q3', 0.2)).toEqual({ refused: { limit: 10, asked: 0.2, held: 10 } });
    // Another caller has a budget of its own.
    expect('release' in budget.reserve('key:7', 'q3', 10)).toBe(true);
  });

  it('counts a live query once per caller however many of its subscriptions watch it, until the last ends', () => {
    const budget = new CallBudget(5);
    const first = budget.reserve('user:1', 'q1', 5);
    const second = budget.reserve('user:1', 'q1', 5);
    if (!('release' in first) || !('release' in second)) throw new Error('refused');
    expect(budget.held('user:1')).toBe(5);
    first.release();
    first.release(); // a second release of the same subscription changes nothing
    expect(budget.held('user:1')).toBe(5);
    expect('refused' in budget.reserve('user:1', 'q2', 1)).toBe(true);
    second.release();
    expect(budget.held('user:1')).toBe(0);
    expect('release' in budget.reserve('user:1', 'q2', 5)).toBe(true);
  });

  it('rates that sum to the limit through rounding still fit', () => {
    const budget = new CallBudget(1);
    for (let i = 0; i < 3; i++) expect('release' in budget.reserve('user:1', `q${i}`, 1 / 3)).toBe(true);
    expect('refused' in budget.reserve('user:1', 'q3', 0.001)).toBe(true);
  });

  it('0 holds no limit', () => {
    const budget = new CallBudget(0);
    expect('release' in budget.reserve('user:1', 'q1', 1e6)).toBe(true);
    expect(budget.held('user:1')).toBe(1e6);
  });
});
