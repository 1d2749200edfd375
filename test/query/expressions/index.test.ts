import { describe, expect, it } from '@jest/globals';
import type { DataResponse } from '../../../src/query/frames/frame.ts';
import type { KindContext } from '../../../src/query/kinds/kind.ts';
import { testDataKind } from '../../../src/query/kinds/testdata/index.ts';
import { ExpressionRequestError, isExpressionDataSource, runExpressionRequest, type ExpressionRequestQuery } from '../../../src/query/expressions/index.ts';

// Whole expression requests: the data source queries run once through the caller (here the real
// TestData kind), then the expressions in dependency order; answers as the original words them.

const range = { from: 0, to: 2000 };
const testdata = { uid: 'td', type: 'grafana-testdata-datasource' };
const expr = { uid: '__expr__', type: '__expr__' };

const context: KindContext = {
  dataSource: { id: 1, uid: 'td', orgId: 1, name: 'TestData', type: 'grafana-testdata-datasource', url: '', database: '', jsonData: {} },
  call: () => Promise.reject(new Error('no upstream')),
  signal: new AbortController().signal,
  maxPoints: 1_000_000,
  maxSeries: 100_000,
};

function query(refId: string, datasource: { uid: string; type: string }, model: Record<string, unknown>): ExpressionRequestQuery {
  return { refId, datasource, model: { refId, datasource, ...model }, intervalMs: 1000, maxDataPoints: 100, queryType: '' };
}

/** Runs the request; records what the data source was asked. */
async function run(queries: ExpressionRequestQuery[]) {
  const asked: ExpressionRequestQuery[][] = [];
  const results = await runExpressionRequest(queries, range, async (dataQueries) => {
    asked.push([...dataQueries]);
    return testDataKind.query(context, dataQueries.map((q) => ({ refId: q.refId, queryType: q.queryType, intervalMs: q.intervalMs, maxDataPoints: q.maxDataPoints, range, model: q.model })));
  });
  return { results, asked };
}

const csv = (refId: string, stringInput: string, extra: Record<string, unknown> = {}) => query(refId, testdata, { scenarioId: 'csv_metric_values', stringInput, ...extra });

describe('runExpressionRequest', () => {
  it('recognises the expression data source by uid, legacy uid, type or legacy string', () => {
    expect([isExpressionDataSource({ uid: '__expr__' }), isExpressionDataSource({ uid: '-100' }), isExpressionDataSource({ type: '__expr__' }), isExpressionDataSource('__expr__'), isExpressionDataSource('-100')]).toEqual([true, true, true, true, true]);
    expect([isExpressionDataSource({ uid: 'td', type: 'prometheus' }), isExpressionDataSource('td'), isExpressionDataSource(undefined)]).toEqual([false, false, false]);
  });

  it('math, reduce and threshold chained over a TestData series, with the original frames', async () => {
    const { results, asked } = await run([
      csv('A', '1,2,3'),
      query('B', expr, { type: 'math', expression: '$A * 2' }),
      query('C', expr, { type: 'reduce', expression: 'B', reducer: 'sum' }),
      query('D', expr, { type: 'threshold', expression: 'C', conditions: [{ evaluator: { type: 'gt', params: [10] } }] }),
    ]);
    // The data source is asked once, with the engine's own defaults for interval and points.
    expect(asked).toHaveLength(1);
    expect(asked[0].map((q) => [q.refId, q.intervalMs, q.maxDataPoints])).toEqual([['A', 64, 5000]]);
    expect(results.get('A')).toEqual({
      frames: [{
        refId: 'A',
        meta: { type: 'timeseries-multi', typeVersion: [0, 1] },
        fields: [
          { name: 'Time', type: 'time.Time', values: [0, 1000, 2000] },
          // TestData series without labels are told apart by name, as the original does.
          { name: 'A-series', type: 'float64', nullable: true, labels: { __name__: 'A-series' }, values: [1, 2, 3] },
        ],
      }],
    });
    expect(results.get('B')).toEqual({
      frames: [{
        refId: 'B',
        meta: { type: 'timeseries-multi', typeVersion: [0, 1] },
        fields: [
          { name: 'Time', type: 'time.Time', values: [0, 1000, 2000] },
          { name: 'B', type: 'float64', nullable: true, labels: { __name__: 'A-series' }, values: [2, 4, 6] },
        ],
      }],
    });
    expect(results.get('C')).toEqual({ frames: [{ refId: 'C', meta: { type: 'numeric-multi', typeVersion: [0, 1] }, fields: [{ name: 'C', type: 'float64', nullable: true, labels: { __name__: 'A-series' }, values: [12] }] }] });
    expect(results.get('D')!.frames![0].fields[0].values).toEqual([1]);
  });

  it('two series joined: the sum of two queries, NaN carried to the wire as a float', async () => {
    const { results } = await run([csv('A', '1,2,3', { labels: 'x=1' }), csv('B', '10,20,30'), query('C', expr, { type: 'math', expression: '$A + $B' })]);
    expect(results.get('C')!.frames![0].fields[1].values).toEqual([11, 22, 33]);
    const divided = await run([csv('A', '0,1,2'), query('B', expr, { type: 'math', expression: '$A / 0' })]);
    expect(divided.results.get('B')!.frames![0].fields[1].values).toEqual([NaN, Infinity, Infinity]);
  });

  it('hidden queries run when referenced and are left out of the answer', async () => {
    const { results, asked } = await run([
      csv('A', '1,2', { hide: true }),
      csv('H', '5', { hide: true }),
      csv('V', '7'),
      query('B', expr, { type: 'reduce', expression: 'A', reducer: 'max' }),
    ]);
    expect(asked[0].map((q) => q.refId)).toEqual(['A', 'V']);
    expect([...results.keys()].sort()).toEqual(['B', 'V']);
    expect(results.get('B')!.frames![0].fields[0].values).toEqual([2]);
  });

  it('a failed query fails what depends on it, in the original words', async () => {
    const { results } = await run([query('A', testdata, { scenarioId: 'random_walk_with_error', seed: 1 }), query('B', expr, { type: 'math', expression: '$A + 1' }), query('C', expr, { type: 'reduce', expression: 'B', reducer: 'sum' })]);
    expect(results.get('A')).toEqual({ error: '[sse.dataQueryError] failed to execute query [A]: this is an error and it can include URLs http://grafana.com/', errorSource: 'plugin', status: 500, frames: [] });
    expect(results.get('B')).toEqual({ error: '[sse.dependencyError] did not execute expression [B] due to a failure to of the dependent expression or query [A]', errorSource: 'plugin', status: 400, frames: [] });
    expect(results.get('C')!.error).toBe('[sse.dependencyError] did not execute expression [C] due to a failure to of the dependent expression or query [B]');
  });

  it('frames that are no wide series fail the query as a conversion error; an expression error stays its own', async () => {
    const { results } = await run([query('A', testdata, { scenarioId: 'table_static' }), query('B', expr, { type: 'math', expression: '$A' })]);
    expect(results.get('A')!.error).toBe('[sse.readDataError] [A] got error: input data must be a wide series but got type long (input refid)');
    const scalar = await run([query('B', expr, { type: 'reduce', expression: 'C', reducer: 'sum' }), query('C', expr, { type: 'math', expression: '1 + 1' })]);
    expect(scalar.results.get('B')).toEqual({ error: 'can only reduce type series, got type scalar', errorSource: 'plugin', status: 400, frames: [] });
    expect(scalar.results.get('C')!.frames![0]).toEqual({ refId: 'C', meta: { type: 'numeric-multi', typeVersion: [0, 1] }, fields: [{ name: 'C', type: 'float64', nullable: true, values: [2] }] });
  });

  it('no data flows through as the "no data" frame', async () => {
    const { results } = await run([query('A', testdata, { scenarioId: 'no_data_points' }), query('B', expr, { type: 'reduce', expression: 'A', reducer: 'mean' })]);
    expect(results.get('A')).toEqual({ frames: [{ name: 'no data', refId: 'A', fields: [] }] });
    expect(results.get('B')).toEqual({ frames: [{ name: 'no data', refId: 'B', fields: [] }] });
  });

  it('classic conditions over TestData: one number, the matches in meta.custom', async () => {
    const { results } = await run([csv('A', '1,2,9'), query('C', expr, { type: 'classic_conditions', conditions: [{ evaluator: { type: 'gt', params: [3] }, operator: { type: 'and' }, query: { params: ['A'] }, reducer: { type: 'avg' } }] })]);
    expect(results.get('C')).toEqual({ frames: [{ refId: 'C', meta: { type: 'numeric-multi', typeVersion: [0, 1], custom: [{ value: '4', metric: 'A-series', labels: { __name__: 'A-series' } }] }, fields: [{ name: '', type: 'float64', nullable: true, values: [1] }] }] });
  });

  it('expressions alone need no data source call', async () => {
    const { results, asked } = await run([query('A', expr, { type: 'math', expression: '2 ** 10' })]);
    expect(asked).toEqual([]);
    expect(results.get('A')!.frames![0].fields[0].values).toEqual([1024]);
  });

  it.each([
    [[query('B', expr, { type: 'math', expression: '$Z * 2' })], "expression request error: unable to find dependent node 'Z'"],
    [[query('B', expr, { type: 'math', expression: '$B * 2' })], "expression request error: expression 'B' cannot reference itself. Must be query or another expression"],
    [[query('B', expr, { type: 'math', expression: '$C' }), query('C', expr, { type: 'math', expression: '$B' })], 'expression request error: topo: no topological ordering: cyclic components: [[B C]]'],
    [[query('B', expr, { type: 'math', expression: '1 +' })], "expression request error: failed to parse expression 'B': invalid math command type: expr: unexpected EOF in input: F()"],
    [[query('B', expr, { type: 'sql', expression: 'SELECT 1' })], 'expression request error: sql expressions are disabled'],
    [[query('B', expr, { type: 'math', expression: '1' }), query('C', expr, { type: 'classic_conditions', conditions: [{ evaluator: { type: 'gt', params: [0] }, query: { params: ['B'] }, reducer: { type: 'avg' } }] })],
      'expression request error: only data source queries may be inputs to a classic condition, B is a Expression'],
    [[csv('A', '1'), query('C', expr, { type: 'classic_conditions', conditions: [{ evaluator: { type: 'gt', params: [0] }, query: { params: ['A'] }, reducer: { type: 'avg' } }] }), query('D', expr, { type: 'math', expression: '$C' })],
      'expression request error: classic conditions may not be the input for other expressions, but C is the input for D'],
    [[csv('A', '1', { intervalMs: '1s' }), query('B', expr, { type: 'math', expression: '$A' })], 'expression request error: expected intervalMs to be an float64, got type string for refId A'],
  ])('refuses the whole request: %#', async (queries, message) => {
    const error = await run(queries).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpressionRequestError);
    expect((error as ExpressionRequestError).message).toBe(message);
    expect((error as ExpressionRequestError).status).toBe(400);
  });

  it('a runQueries that answers nothing for a refId gives no data for it', async () => {
    const results = await runExpressionRequest([csv('A', '1'), query('B', expr, { type: 'math', expression: '$A + 1' })], range, async () => new Map<string, DataResponse>());
    // The constant finds nothing to join with: counted as dropped, as the original counts it.
    expect(results.get('B')).toEqual({ frames: [{ name: 'no data', refId: 'B', meta: { notices: [{ severity: 'warning', text: '1 items dropped from union(s): ["$A + 1": (1: {})]' }] }, fields: [] }] });
  });
});
