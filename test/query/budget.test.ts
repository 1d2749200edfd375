import { describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../src/errors/messages.ts';
import { DomainError } from '../../src/errors/domain.ts';
import {
  AnswerMemory, BYTES_PER_BODY_BYTE, BYTES_PER_UNKNOWN, bytesOf, plan, refIdVerdict, RequestBudget, requestVerdict, RETRY_AFTER_SECONDS,
  type QueryLimits, type Size,
} from '../../src/query/budget.ts';

// The query budgets, pure: which refIds may run, what a request may still build, and the
// instance's bytes in flight.

const limits: QueryLimits = { pointsPerRefId: 100, seriesPerRefId: 10, pointsPerRequest: 250, seriesPerRequest: 25, bytesInFlight: 100_000 };
const size = (points: number, series: number): Size => ({ points, series });
const M = MESSAGES.query;

describe('refIdVerdict and requestVerdict', () => {
  it.each([
    ['fits', size(100, 10), null],
    ['one point too many', size(101, 1), M.tooManyPoints(100)],
    ['one series too many (empty series count too)', size(0, 11), M.tooManySeries(10)],
    ['both: series named first', size(1000, 1000), M.tooManySeries(10)],
  ])('a refId: %s', (_name, refId, expected) => {
    expect(refIdVerdict(refId, limits)).toBe(expected);
  });

  it.each([
    ['fits exactly', size(150, 15), size(100, 10), null],
    ['points past the request', size(200, 1), size(51, 1), M.requestTooManyPoints(250)],
    ['series past the request', size(0, 20), size(0, 6), M.requestTooManySeries(25)],
  ])('added to a request: %s', (_name, used, added, expected) => {
    expect(requestVerdict(used, added, limits)).toBe(expected);
  });
});

describe('plan', () => {
  it.each<[string, Array<[string, Size | null]>, Record<string, string>, Size, number]>([
    ['everything fits', [['A', size(100, 1)], ['B', size(100, 1)]], {}, size(200, 2), 0],
    ['a refId past its own budget fails alone', [['A', size(101, 1)], ['B', size(100, 1)]], { A: M.tooManyPoints(100) }, size(100, 1), 0],
    ['later refIds (by refId, not by position) fail past the request', [['C', size(100, 1)], ['A', size(100, 1)], ['B', size(100, 1)]],
      { C: M.requestTooManyPoints(250) }, size(200, 2), 0],
    ['a smaller later refId still fits where a bigger one did not', [['A', size(100, 1)], ['B', size(100, 1)], ['C', size(60, 1)], ['D', size(50, 1)]],
      { C: M.requestTooManyPoints(250) }, size(250, 3), 0],
    ['unknown sizes run, counted when they answer', [['A', null], ['B', size(100, 10)], ['C', null]], {}, size(100, 10), 2],
    ['60 refIds of 500 series of 10,000 points: none is built', Array.from({ length: 60 }, (_, i): [string, Size] => [`R${i}`, size(10_000_000, 500)]),
      Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`R${i}`, M.tooManySeries(10)])), size(0, 0), 0],
  ])('%s', (_name, estimates, refused, used, unknown) => {
    const result = plan(estimates, limits);
    expect(Object.fromEntries(result.refused)).toEqual(refused);
    expect(result.used).toEqual(used);
    expect(result.unknown).toBe(unknown);
  });

  it('starts from what the request has used already', () => {
    expect(Object.fromEntries(plan([['A', size(100, 1)]], limits, size(200, 0)).refused)).toEqual({ A: M.requestTooManyPoints(250) });
  });
});

describe('AnswerMemory', () => {
  it('takes what fits, refuses what does not, and gives back', () => {
    const memory = new AnswerMemory(1000);
    expect(memory.take(600, 0)).toBe(true);
    expect(memory.take(300, 0)).toBe(true);
    expect(memory.holders).toBe(2);
    expect(memory.take(200, 0)).toBe(false);
    expect(memory.holders).toBe(2);
    expect(memory.take(100, 300)).toBe(true);
    expect(memory.used).toBe(1000);
    memory.give(600, 600);
    expect(memory.used).toBe(400);
    expect(memory.holders).toBe(1);
  });

  it('always admits the only holder, however large (an idle instance never refuses forever)', () => {
    const memory = new AnswerMemory(1000);
    expect(memory.take(5000, 0)).toBe(true);
    expect(memory.take(5000, 5000)).toBe(true);
    expect(memory.take(1, 0)).toBe(false);
    memory.give(10_000, 10_000);
    expect(memory.used).toBe(0);
    expect(memory.holders).toBe(0);
  });

  it('counts memory already in use past the capacity', () => {
    const memory = new AnswerMemory(1000);
    memory.take(900, 0);
    memory.force(500, 0);
    expect(memory.used).toBe(1400);
    expect(memory.take(1, 0)).toBe(false);
  });
});

describe('RequestBudget', () => {
  it('admits the refIds that fit and holds their bytes, a refId of unknown size a fixed share', () => {
    const memory = new AnswerMemory(10_000_000);
    const budget = new RequestBudget(limits, memory);
    const refused = budget.admit([['A', size(100, 1)], ['B', size(101, 1)], ['C', null]]);
    expect(Object.fromEntries(refused)).toEqual({ B: M.tooManyPoints(100) });
    expect(budget.held).toBe(bytesOf(size(100, 1)) + BYTES_PER_UNKNOWN);
    expect(memory.used).toBe(budget.held);
    budget.release();
    budget.release();
    expect(memory.used).toBe(0);
    expect(memory.holders).toBe(0);
  });

  it('refuses with 503 and Retry-After when the instance has no room, holding nothing', () => {
    const memory = new AnswerMemory(bytesOf(size(150, 2)));
    const first = new RequestBudget(limits, memory);
    first.admit([['A', size(100, 1)]]);
    const second = new RequestBudget(limits, memory);
    let refusal: unknown;
    try {
      second.admit([['A', size(100, 1)]]);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ status: 503, message: M.answersBusy, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });
    expect(second.held).toBe(0);
    first.release();
    expect(() => second.admit([['A', size(100, 1)]])).not.toThrow();
  });

  it('spends an expression\'s series one by one against its refId and the request, and refuses before counting', () => {
    const budget = new RequestBudget(limits, new AnswerMemory(10_000_000));
    budget.admit([['A', size(100, 2)]]);
    expect(budget.spend('E', size(40, 1))).toBeNull();
    expect(budget.spend('E', size(40, 1))).toBeNull();
    expect(budget.check('E', size(40, 1))).toBe(M.tooManyPoints(100));
    expect(budget.spend('E', size(40, 1))).toBe(M.tooManyPoints(100));
    expect(budget.spend('F', size(80, 1))).toBe(M.requestTooManyPoints(250));
    expect(budget.spend('F', size(70, 1))).toBeNull();
    expect(budget.spend('G', size(1, 1))).toBe(M.requestTooManyPoints(250));
  });

  it('takes upstream bodies while there is room, then settles on what the answers take', () => {
    const memory = new AnswerMemory(10_000);
    const budget = new RequestBudget(limits, memory);
    budget.admit([['A', null]]);
    expect(budget.held).toBe(BYTES_PER_UNKNOWN);
    // Alone on the instance: taken even past the capacity.
    expect(budget.body(1000)).toBe(true);
    expect(budget.held).toBe(BYTES_PER_UNKNOWN + 1000 * BYTES_PER_BODY_BYTE);
    const other = new RequestBudget(limits, memory);
    expect(other.body(1)).toBe(false);
    budget.settle(size(10, 1));
    expect(budget.held).toBe(bytesOf(size(10, 1)));
    expect(memory.used).toBe(bytesOf(size(10, 1)));
    expect(other.body(1000)).toBe(true);
    budget.settle(size(1000, 10));
    expect(memory.used).toBe(bytesOf(size(1000, 10)) + 1000 * BYTES_PER_BODY_BYTE);
    budget.release();
    other.release();
    expect(memory.used).toBe(0);
    expect(memory.holders).toBe(0);
  });
});
