import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// One upstream answering as a hostile or broken store would, behind a data source of each kind:
// every refId it poisons gets a clear error of its own, the others their frames, and the whole
// answer stays JSON a client can parse, over REST and GraphQL alike.

let server: TestServer;
let upstream: Upstream;
const uid: Record<string, string> = {};

const matrix = (values: string, metric = '{}') => `{"status":"success","data":{"resultType":"matrix","result":[{"metric":${metric},"values":[${values}]}]}}`;

/** What the upstream answers, by the `expr`/`q`/`target` the query carries. */
const ANSWERS: Record<string, string> = {
  good: matrix('[1700000000,"1"],[1700000015,"NaN"],[1700000030,"+Inf"]', '{"__name__":"up","job":"a"}'),
  time1e400: matrix('[1e400,"1"]'),
  scalar1e400: '{"status":"success","data":{"resultType":"scalar","result":[1e400,"abc"]}}',
  valuesString: '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":"abcdefghij"}]}}',
  hex: matrix('[1700000000,"0x10"]'),
  emptyValue: matrix('[1700000000,""]'),
  numericLabel: matrix('[1700000000,"1"]', '{"job":5}'),
  objectLabel: matrix('[1700000000,"1"]', '{"job":{"a":1}}'),
  graphite: '[{"target":"a","datapoints":[[1,1e306]]}]',
  influx: '{"results":[{"series":[{"name":"m","tags":{"__proto__":"p"},"columns":["time","v"],"values":[[1000,1e400],[2000.5,1],[3000,2]]}]}]}',
  loki: '{"status":"success","data":{"resultType":"streams","result":[{"stream":{"job":7},"values":[["1","x"]]}]}}',
};

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const params = new URLSearchParams(body);
      const key = url.pathname.endsWith('/render') ? 'graphite'
        : url.pathname.endsWith('/query') && url.searchParams.has('db') ? 'influx'
          : url.pathname.includes('/loki/') ? 'loki'
            : params.get('query') ?? url.searchParams.get('query') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(ANSWERS[key] ?? '{}');
    });
  });
  server = await startTestServer();
  for (const type of ['prometheus', 'graphite', 'influxdb', 'loki']) {
    const created = await call(server, 'POST', '/api/datasources', { body: { name: `hostile-${type}`, type, access: 'proxy', url: upstream.url, jsonData: type === 'influxdb' ? { dbName: 'db' } : {} } });
    expect(created.status).toBe(200);
    uid[type] = created.body.datasource.uid;
  }
}, 120_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

const prometheus = (refId: string, expr: string, extra: Record<string, unknown> = {}) => ({ refId, datasource: { type: 'prometheus', uid: uid.prometheus }, expr, range: true, ...extra });

const QUERIES = () => [
  prometheus('A', 'good', { legendFormat: '{{constructor}}{{job}}' }),
  prometheus('B', 'time1e400'),
  prometheus('C', 'scalar1e400'),
  prometheus('D', 'valuesString'),
  prometheus('E', 'hex'),
  prometheus('F', 'emptyValue'),
  prometheus('G', 'numericLabel'),
  prometheus('H', 'objectLabel'),
  { refId: 'I', datasource: { type: 'graphite', uid: uid.graphite }, target: 'a' },
  { refId: 'J', datasource: { type: 'influxdb', uid: uid.influxdb }, query: 'SELECT v FROM m', rawQuery: true, resultFormat: 'time_series' },
  { refId: 'K', datasource: { type: 'loki', uid: uid.loki }, expr: '{a="b"}' },
];

const ERRORS: Record<string, string> = {
  B: 'failed to parse the Prometheus response: a sample time is out of range',
  C: 'failed to parse the Prometheus response: a sample time is out of range',
  D: 'failed to parse the Prometheus response: values is not an array',
  E: 'failed to parse the Prometheus response: strconv.ParseFloat: parsing "0x10": invalid syntax',
  F: 'failed to parse the Prometheus response: strconv.ParseFloat: parsing "": invalid syntax',
  G: 'failed to parse the Prometheus response: series labels: the value of "job" is not a string',
  H: 'failed to parse the Prometheus response: series labels: the value of "job" is not a string',
  I: 'a data point timestamp is out of range',
  K: 'failed to parse the Loki response: stream labels: the value of "job" is not a string',
};

describe('hostile upstream answers', () => {
  it('POST /api/ds/query: a clear error on each poisoned refId, frames on the others, valid JSON throughout', async () => {
    const res = await call(server, 'POST', '/api/ds/query', { body: { from: '1699999000000', to: '1700001000000', queries: QUERIES() } });
    expect(res.text).not.toMatch(/Infinity|NaN(?!")|not iterable|is not a function|Maximum call stack/);
    expect(res.body).toBeDefined(); // parsed: the whole answer is JSON
    expect(res.status).toBe(400);
    const results = res.body.results as Record<string, { error?: string; frames?: Array<{ schema: { fields: Array<{ labels?: unknown; config?: { displayNameFromDS?: string } }> }; data: { values: unknown[][]; entities?: unknown[] } }> }>;
    for (const [refId, message] of Object.entries(ERRORS)) expect([refId, results[refId]!.error]).toEqual([refId, message]);
    const good = results.A!.frames![0]!;
    expect(good.data.values).toEqual([[1700000000000, 1700000015000, 1700000030000], [1, null, null]]);
    expect(good.data.entities).toEqual([null, { NaN: [1], Inf: [2] }]);
    expect(good.schema.fields[1]!.config?.displayNameFromDS).toBe('a');
    const influx = results.J!.frames![0]!;
    expect(influx.data.values).toEqual([[1000, 3000], [null, 2]]);
    expect(influx.data.entities).toBeUndefined();
    expect(influx.schema.fields[1]!.labels).toEqual(JSON.parse('{"__proto__":"p"}'));
  });

  it('GraphQL dataQuery answers the same errors per refId, not a 500', async () => {
    const res = await gql(server, `query ($queries: [JSONObject!]!) { dataQuery(from: "1699999000000", to: "1700001000000", queries: $queries) {
      status results { refId error frames { fields { name numbers } } } } }`, { queries: QUERIES() });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const results = res.body.data.dataQuery.results as Array<{ refId: string; error: string | null; frames: Array<{ fields: Array<{ numbers: Array<number | null> | null }> }> }>;
    const byRefId = new Map(results.map((r) => [r.refId, r]));
    for (const [refId, message] of Object.entries(ERRORS)) expect([refId, byRefId.get(refId)!.error]).toEqual([refId, message]);
    expect(byRefId.get('A')!.frames[0]!.fields[1]!.numbers).toEqual([1, null, null]);
  });
});
