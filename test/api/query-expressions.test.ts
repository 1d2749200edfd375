import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { dataFrameFromJSON } from '../support/grafana-data.ts';

// Server-side expressions through POST /api/ds/query, over the built-in TestData kind (no
// upstream needed): the frames on the wire decode with the original frontend's decoder.

const FROM = '1700000000000';
const TO = '1700000002000';

let server: TestServer;
let td: { id: number; uid: string };

beforeAll(async () => {
  server = await startTestServer();
  const res = await call(server, 'POST', '/api/datasources', { body: { name: 'td-expr', type: 'grafana-testdata-datasource', access: 'proxy' } });
  expect(res.status).toBe(200);
  td = res.body.datasource;
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const dsQuery = (queries: unknown[]) => call(server, 'POST', '/api/ds/query', { body: { from: FROM, to: TO, queries } });
const csv = (refId: string, stringInput: string, extra: Record<string, unknown> = {}) => ({ refId, datasource: { type: 'grafana-testdata-datasource', uid: td.uid }, scenarioId: 'csv_metric_values', stringInput, ...extra });
const expression = (refId: string, model: Record<string, unknown>) => ({ refId, datasource: { type: '__expr__', uid: '__expr__', name: 'Expression' }, ...model });

describe('expressions through /api/ds/query', () => {
  it('math and reduce over a TestData query: 200, refIds sorted, frames as the original writes them', async () => {
    const res = await dsQuery([
      csv('A', '1,2,3'),
      expression('B', { type: 'math', expression: '$A * 10 + 1' }),
      expression('C', { type: 'reduce', expression: '$B', reducer: 'mean' }),
    ]);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.results)).toEqual(['A', 'B', 'C']);
    expect(res.body.results.B).toEqual({
      status: 200,
      frames: [{
        schema: {
          refId: 'B',
          meta: { type: 'timeseries-multi', typeVersion: [0, 1] },
          fields: [
            { name: 'Time', type: 'time', typeInfo: { frame: 'time.Time' } },
            { name: 'B', type: 'number', typeInfo: { frame: 'float64', nullable: true }, labels: { __name__: 'A-series' } },
          ],
        },
        data: { values: [[1700000000000, 1700000001000, 1700000002000], [11, 21, 31]] },
      }],
    });
    const reduced = dataFrameFromJSON(res.body.results.C.frames[0]);
    expect(reduced.meta).toMatchObject({ type: 'numeric-multi' });
    expect(reduced.fields[0]).toMatchObject({ name: 'C', type: 'number', labels: { __name__: 'A-series' }, values: [21] });
    const series = dataFrameFromJSON(res.body.results.B.frames[0]);
    expect(series.fields.map((f) => [f.name, f.type, f.values])).toEqual([['Time', 'time', [1700000000000, 1700000001000, 1700000002000]], ['B', 'number', [11, 21, 31]]]);
  });

  it('NaN and Inf reach the wire as entities and decode back; the legacy string data source works', async () => {
    const res = await dsQuery([csv('A', '0,1,-1'), { refId: 'B', datasource: '__expr__', type: 'math', expression: '$A / 0' }]);
    expect(res.status).toBe(200);
    expect(res.body.results.B.frames[0].data).toEqual({ values: [[1700000000000, 1700000001000, 1700000002000], [null, null, null]], entities: [null, { NaN: [0], Inf: [1], NegInf: [2] }] });
    expect(dataFrameFromJSON(res.body.results.B.frames[0]).fields[1].values).toEqual([NaN, Infinity, -Infinity]);
  });

  it('threshold over a hidden query: only what is shown is answered', async () => {
    const res = await dsQuery([csv('A', '1,5,10', { hide: true }), expression('B', { type: 'threshold', expression: 'A', conditions: [{ evaluator: { type: 'gt', params: [4] } }] })]);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.results)).toEqual(['B']);
    expect(dataFrameFromJSON(res.body.results.B.frames[0]).fields[1].values).toEqual([0, 1, 1]);
  });

  it('a failed query: 400 with every refId, the dependency error in the original words', async () => {
    const res = await dsQuery([{ refId: 'A', datasource: { uid: td.uid }, scenarioId: 'random_walk_with_error', seed: 1 }, expression('B', { type: 'math', expression: '$A + 1' })]);
    expect(res.status).toBe(400);
    expect(res.body.results.A).toMatchObject({ error: '[sse.dataQueryError] failed to execute query [A]: this is an error and it can include URLs http://grafana.com/', errorSource: 'plugin', status: 500 });
    expect(res.body.results.B).toEqual({ error: '[sse.dependencyError] did not execute expression [B] due to a failure to of the dependent expression or query [A]', errorSource: 'plugin', status: 400, frames: [] });
  });

  it('a request the engine cannot run is a 400 with the reason', async () => {
    const cases: [unknown[], string][] = [
      [[expression('B', { type: 'math', expression: '$A +' })], "expression request error: failed to parse expression 'B': invalid math command type: expr: unexpected EOF in input: F()"],
      [[expression('B', { type: 'math', expression: '$Z' })], "expression request error: unable to find dependent node 'Z'"],
      [[expression('B', { type: 'math', expression: '$C' }), expression('C', { type: 'math', expression: '$B' })], 'expression request error: topo: no topological ordering: cyclic components: [[B C]]'],
      [[expression('B', { type: 'sql', expression: 'SELECT 1' })], 'expression request error: sql expressions are disabled'],
    ];
    for (const [queries, message] of cases) {
      const res = await dsQuery(queries);
      expect([res.status, res.body]).toEqual([400, { message }]);
    }
  });

  it('an unknown data source under an expression is still a 404', async () => {
    const res = await dsQuery([{ refId: 'A', datasource: { uid: 'no-such-ds' } }, expression('B', { type: 'math', expression: '$A' })]);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Data source not found' });
  });

  it('the graph\'s root dataQuery runs expressions through the same service, typed', async () => {
    const res = await gql(server, `query($q: [JSONObject!]!) { dataQuery(from: "${FROM}", to: "${TO}", queries: $q) { status results { refId status error frames { refId meta fields { name type goType nullable labels { name value } numbers } } } } }`, {
      q: [csv('A', '2,4,6', { hide: true }), expression('B', { type: 'reduce', expression: 'A', reducer: 'max' }), expression('C', { type: 'math', expression: '$A - 1' })],
    });
    expect(res.body.errors).toBeUndefined();
    const { status, results } = res.body.data.dataQuery;
    expect(status).toBe(200);
    expect(results.map((r: { refId: string }) => r.refId)).toEqual(['B', 'C']);
    expect(results[0].frames[0].fields[0]).toEqual({ name: 'B', type: 'NUMBER', goType: 'float64', nullable: true, labels: [{ name: '__name__', value: 'A-series' }], numbers: [6] });
    expect(results[1].frames[0].fields[1].numbers).toEqual([1, 3, 5]);
  });
});
