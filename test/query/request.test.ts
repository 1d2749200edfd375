import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../../src/errors/domain.ts';
import {
  checkQueryCount, checkRefIds, EXPRESSION_UID, EXPRESSION_UIDS, isExpressionUid, parseQueryRequest, referenceOf,
} from '../../src/query/request.ts';

// The body of POST /api/ds/query read as the original's parseMetricRequest reads it, pure.

const NOW = 1_700_000_000_000;

/** What a refusal carries to the wire: status and the original's errutil body. */
function refusal(run: () => unknown): { status: number; body: unknown } | null {
  try {
    run();
    return null;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { status: error.status, body: error.body };
  }
}

describe('parseQueryRequest', () => {
  it('reads the range and each query with the envelope defaults', () => {
    const model = { datasource: { uid: 'p1', type: 'prometheus' }, expr: 'up' };
    expect(parseQueryRequest({ from: '1000', to: '2000', queries: [model] }, NOW)).toEqual({
      range: { from: 1000, to: 2000 },
      queries: [{ refId: 'A', ref: { uid: 'p1', id: null }, intervalMs: 1000, maxDataPoints: 100, queryType: '', model }],
    });
  });

  it('keeps what each query sets, and the whole query object as its model', () => {
    const model = { refId: 'B', datasourceId: 4, intervalMs: 15000, maxDataPoints: 43, queryType: 'range', extra: [1] };
    const [query] = parseQueryRequest({ from: 'now-1h', to: 'now', queries: [model] }, NOW).queries;
    expect(query).toEqual({ refId: 'B', ref: { uid: null, id: 4 }, intervalMs: 15000, maxDataPoints: 43, queryType: 'range', model });
    expect(query!.model).toBe(model);
  });

  it.each([
    ['a fraction', 1.5, 1000],
    ['a string', '500', 1000],
    ['past 2^53', 2 ** 53, 1000],
    ['null', null, 1000],
    ['zero', 0, 0],
    ['negative', -5, -5],
  ])('reads intervalMs as an int64 or the default: %s', (_name, intervalMs, expected) => {
    expect(parseQueryRequest({ queries: [{ intervalMs }] }, NOW).queries[0]!.intervalMs).toBe(expected);
  });

  it('gives a query that is no object no fields, and non-string refIds and types their defaults', () => {
    const queries = parseQueryRequest({ queries: [null, 'x', [1], { refId: 7, queryType: false }] }, NOW).queries;
    expect(queries.map((q) => [q.refId, q.ref, q.queryType])).toEqual([
      ['A', { uid: null, id: null }, ''], ['A', { uid: null, id: null }, ''], ['A', { uid: null, id: null }, ''], ['A', { uid: null, id: null }, ''],
    ]);
  });

  it.each([[{}], [{ queries: [] }], [{ queries: {} }], [{ queries: 'A' }]])('answers 400 "No queries found" for %j', (body) => {
    expect(refusal(() => parseQueryRequest(body, NOW))).toEqual({
      status: 400, body: { statusCode: 400, messageId: 'query.noQueries', message: 'No queries found' },
    });
  });
});

describe('referenceOf', () => {
  it.each<[string, Record<string, unknown>, { uid: string | null; id: number | null }]>([
    ['datasource.uid', { datasource: { uid: 'u1', type: 'loki' } }, { uid: 'u1', id: null }],
    ['the pre-8.3 string form', { datasource: 'u2' }, { uid: 'u2', id: null }],
    ['a uid wins over datasourceId', { datasource: { uid: 'u3' }, datasourceId: 9 }, { uid: 'u3', id: null }],
    ['an empty uid falls back to datasourceId', { datasource: { uid: '' }, datasourceId: 9 }, { uid: null, id: 9 }],
    ['a non-string uid is none', { datasource: { uid: 5 }, datasourceId: 2 }, { uid: null, id: 2 }],
    ['an array is no reference', { datasource: ['u4'] }, { uid: null, id: null }],
    ['datasourceId must be positive', { datasourceId: 0 }, { uid: null, id: null }],
    ['datasourceId must be an integer', { datasourceId: 2.5 }, { uid: null, id: null }],
    ['datasourceId as a string is none', { datasourceId: '3' }, { uid: null, id: null }],
    ['nothing', {}, { uid: null, id: null }],
  ])('%s', (_name, model, expected) => {
    expect(referenceOf(model)).toEqual(expected);
  });
});

describe('the expression engine\'s uids', () => {
  it('are __expr__ and the pre-8.3 -100', () => {
    expect([EXPRESSION_UID, [...EXPRESSION_UIDS]]).toEqual(['__expr__', ['__expr__', '-100']]);
    expect([isExpressionUid('__expr__'), isExpressionUid('-100'), isExpressionUid('__EXPR__'), isExpressionUid('grafana'), isExpressionUid(null)])
      .toEqual([true, true, false, false, false]);
  });
});

describe('checkQueryCount and checkRefIds', () => {
  it('refuses more queries than the limit before reading any, and not the limit itself', () => {
    expect(refusal(() => checkQueryCount({ queries: [{}, {}] }, 2))).toBeNull();
    expect(refusal(() => checkQueryCount({ queries: 'not an array' }, 0))).toBeNull();
    expect(refusal(() => checkQueryCount({ queries: [{}, {}, {}] }, 2))).toEqual({
      status: 400,
      body: { statusCode: 400, messageId: 'query.tooManyQueries', message: 'Too many queries in one request: at most 2 ([query] max_queries_per_request)' },
    });
  });

  it('refuses a refId used twice, with the original\'s words (trailing space included)', () => {
    expect(refusal(() => checkRefIds([{ refId: 'A' }, { refId: 'B' }, { refId: 'a' }]))).toBeNull();
    expect(refusal(() => checkRefIds([{ refId: 'A' }, { refId: 'B' }, { refId: 'A' }]))).toEqual({
      status: 400, body: { statusCode: 400, messageId: 'query.duplicateRefId', message: 'Multiple queries using the same RefId is not allowed ' },
    });
  });
});
