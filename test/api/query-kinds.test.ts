import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { dataFrameFromJSON } from '../support/grafana-data.ts';
import { startGraphite, type Graphite } from '../support/graphite.ts';
import { startInfluxDb, type InfluxDb } from '../support/influxdb.ts';
import { startLokiStandIn } from '../support/loki.ts';
import type { Upstream } from '../support/upstream.ts';

// POST /api/ds/query and the resources route for Loki (stand-in), InfluxDB and Graphite (real),
// every frame decoded by the original frontend's decoder.
// On a 2-minute boundary, so the 2m buckets below hold two points each.
const T0 = Math.floor(Date.now() / 120_000) * 120_000 - 600_000;
const FROM = String(T0);
const TO = String(T0 + 600_000);

let server: TestServer;
let loki: Upstream;
let influx: InfluxDb | undefined;
let graphite: Graphite | undefined;
const ds: Record<string, { uid: string }> = {};

async function createDs(body: Record<string, unknown>) {
  const res = await call(server, 'POST', '/api/datasources', { body: { access: 'proxy', ...body } });
  expect(res.status).toBe(200);
  return res.body.datasource as { uid: string };
}

beforeAll(async () => {
  [loki, influx, graphite] = await Promise.all([startLokiStandIn(), startInfluxDb(), startGraphite()]);
  server = await startTestServer();
  ds.loki = await createDs({ name: 'loki', type: 'loki', url: loki.url });
  if (influx) {
    await influx.query('CREATE DATABASE site');
    await influx.write('site', Array.from({ length: 10 }, (_, i) => `req,path=/a count=${i} ${T0 + i * 60_000}\nreq,path=/b count=${10 * i} ${T0 + i * 60_000}`).join('\n'));
    ds.influx = await createDs({ name: 'influx', type: 'influxdb', url: influx.url, jsonData: { dbName: 'site', httpMode: 'POST' } });
  }
  if (graphite) {
    await graphite.send(Array.from({ length: 10 }, (_, i) => [`apps.api.latency`, i + 1, T0 / 1000 + i * 60] as [string, number, number]));
    ds.graphite = await createDs({ name: 'graphite', type: 'graphite', url: graphite.url });
  }
}, 120_000);

afterAll(async () => {
  await server?.close();
  await Promise.all([loki?.close(), influx?.close(), graphite?.close()]);
});

const dsQuery = (queries: unknown[]) => call(server, 'POST', '/api/ds/query', { body: { from: FROM, to: TO, queries } });

describe('POST /api/ds/query with Loki', () => {
  it('answers grafana-client\'s smartquery body with a log frame the frontend decodes', async () => {
    const res = await dsQuery([{ refId: 'A', datasource: { type: 'loki', uid: ds.loki.uid }, expr: '{job="varlogs"}', queryType: 'range', maxLines: 1000, resolution: 1, legendFormat: '' }]);
    expect(res.status).toBe(200);
    const raw = res.body.results.A.frames[0];
    expect(raw.schema.meta.custom).toEqual({ frameType: 'LabeledTimeValues' });
    expect(raw.schema.fields.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual(['labels:other', 'Time:time', 'Line:string', 'tsNs:string', 'id:string']);
    expect(raw.data.nanos[1]).toEqual([456789, 0, 1000, 1000, 0]);
    const frame = dataFrameFromJSON(raw);
    expect(frame.length).toBe(5);
    expect(frame.fields[0].values[0]).toEqual({ filename: '/var/log/app.log', job: 'varlogs', level: 'error' });
    expect(frame.fields[1].nanos?.[0]).toBe(456789);
    expect(frame.fields[4].values[3]).toBe(`${frame.fields[4].values[2]}_1`);
  });

  it('answers many large log queries at once, each with its own lines, again once their buffers are reused', async () => {
    const lines = 3000;
    const batch = (round: number) => Promise.all(Array.from({ length: 6 }, async (_, i) => {
      const tag = `r${round}q${i}`;
      const res = await dsQuery([{ refId: 'A', datasource: { type: 'loki', uid: ds.loki.uid }, expr: `{generated="${tag}", lines="${lines}"}`, maxLines: lines }]);
      expect(res.status).toBe(200);
      const frame = dataFrameFromJSON(res.body.results.A.frames[0]);
      expect(frame.length).toBe(lines);
      const rows = (frame.fields[2].values as string[]).map((line) => /^tag=(\S+) row=(\d+) msg="served <ok>" (x*)$/.exec(line));
      expect(rows.every((m) => m?.[1] === tag && m[3].length === Number(m[2]) % 50)).toBe(true);
      expect(new Set(rows.map((m) => m?.[2])).size).toBe(lines);
      expect((frame.fields[0].values as Array<{ generated: string }>).every((labels) => labels.generated === tag)).toBe(true);
      expect(new Set(frame.fields[4].values).size).toBe(lines);
    }));
    await batch(1);
    await batch(2);
  });

  it('sends an answer a client reads slowly as it was, while later answers reuse buffers', async () => {
    const query = (tag: string, lines: number) => JSON.stringify({
      from: FROM, to: TO, queries: [{ refId: 'A', datasource: { type: 'loki', uid: ds.loki.uid }, expr: `{generated="${tag}", lines="${lines}"}`, maxLines: lines }],
    });
    // A client that reads nothing until the others are answered: its answer (megabytes, more
    // than the sockets hold) waits in the server, still to be written, meanwhile.
    const url = new URL('/api/ds/query', server.url);
    const body = query('slow', 40000);
    const slow = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, resolve);
      req.on('error', reject);
      req.end(body);
    });
    slow.pause();
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < 3; i++) {
      const res = await call(server, 'POST', '/api/ds/query', { rawBody: query(`fast${i}`, 40000), headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(200);
    }
    const chunks: Buffer[] = [];
    slow.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => slow.on('end', resolve));
    slow.resume();
    await ended;
    const frame = dataFrameFromJSON(JSON.parse(Buffer.concat(chunks).toString()).results.A.frames[0]);
    expect(frame.length).toBe(40000);
    expect((frame.fields[2].values as string[]).every((line) => line.startsWith('tag=slow '))).toBe(true);
    expect((frame.fields[0].values as Array<{ generated: string }>).every((labels) => labels.generated === 'slow')).toBe(true);
  });

  it('answers metric queries as time series, and Loki\'s error on its refId with a 400', async () => {
    const res = await dsQuery([
      { refId: 'M', datasource: { type: 'loki', uid: ds.loki.uid }, expr: 'rate({job="varlogs"}[1m])', step: '15s' },
      { refId: 'X', datasource: { type: 'loki', uid: ds.loki.uid }, expr: 'bad query' },
    ]);
    expect(res.status).toBe(400);
    const frames = res.body.results.M.frames.map(dataFrameFromJSON);
    expect(frames.map((f: { name?: string }) => f.name)).toEqual(['{job="varlogs", level="error"}', '{job="varlogs", level="info"}']);
    expect(frames[0].fields[1].values).toEqual([2, 0.5, NaN]);
    expect(frames[1].fields[1].values).toEqual([10, Infinity]);
    expect(res.body.results.X).toMatchObject({ error: 'parse error at line 1, col 1: syntax error: unexpected IDENTIFIER\n', errorSource: 'downstream', status: 400 });
  });

  it('serves the label resources, GET only', async () => {
    const labels = await call(server, 'GET', `/api/datasources/uid/${ds.loki.uid}/resources/labels?start=1&end=2`);
    expect([labels.status, labels.body]).toEqual([200, { status: 'success', data: ['filename', 'job', 'level'] }]);
    const values = await call(server, 'GET', `/api/datasources/uid/${ds.loki.uid}/resources/label/job/values?start=1`);
    expect(values.body.data).toEqual(['varlogs', 'systemd']);
    const post = await call(server, 'POST', `/api/datasources/uid/${ds.loki.uid}/resources/labels?start=1`, { body: {} });
    expect([post.status, post.body]).toEqual([405, { message: 'invalid HTTP method: POST' }]);
    const other = await call(server, 'GET', `/api/datasources/uid/${ds.loki.uid}/resources/query_range?query=x`);
    expect([other.status, other.body]).toEqual([400, { message: 'invalid URL: query_range?query=x' }]);
  });
});

describe('POST /api/ds/query with InfluxDB', () => {
  it('answers builder and raw queries with frames the frontend decodes', async () => {
    if (!influx) return;
    const res = await dsQuery([
      {
        refId: 'A', datasource: { type: 'influxdb', uid: ds.influx.uid }, intervalMs: 120_000, measurement: 'req', resultFormat: 'time_series',
        select: [[{ type: 'field', params: ['count'] }, { type: 'sum', params: [] }]], groupBy: [{ type: 'time', params: ['$__interval'] }, { type: 'tag', params: ['path'] }],
        alias: '$tag_path',
      },
      { refId: 'T', datasource: { type: 'influxdb', uid: ds.influx.uid }, rawQuery: true, query: 'SHOW TAG VALUES FROM "req" WITH KEY = "path"' },
    ]);
    expect(res.status).toBe(200);
    const frames = res.body.results.A.frames.map(dataFrameFromJSON);
    expect(frames.map((f: { name?: string }) => f.name)).toEqual(['/a', '/b']);
    expect(frames[1].fields[1].values.slice(0, 5)).toEqual([10, 50, 90, 130, 170]);
    expect(frames[0].meta?.executedQueryString).toMatch(/^SELECT sum\("count"\) FROM "req" WHERE time >= \d+ms and time <= \d+ms GROUP BY time\(2m\), "path"$/);
    expect(dataFrameFromJSON(res.body.results.T.frames[0]).fields[0].values).toEqual(['/a', '/b']);
  });
});

describe('POST /api/ds/query with Graphite', () => {
  it('answers a render with one frame per series, and serves metrics/find', async () => {
    if (!graphite) return;
    const res = await dsQuery([{ refId: 'G', datasource: { type: 'graphite', uid: ds.graphite.uid }, target: "summarize(apps.*.latency, '5m', 'max')" }]);
    expect(res.status).toBe(200);
    const [frame] = res.body.results.G.frames.map(dataFrameFromJSON);
    expect(frame.refId).toBe('G');
    expect(frame.fields.map((f: { name: string }) => f.name)).toEqual(['time', 'value']);
    expect((frame.fields[1].values as (number | null)[]).filter((v) => v !== null).length).toBeGreaterThan(0);
    const found = await call(server, 'POST', `/api/datasources/uid/${ds.graphite.uid}/resources/metrics/find`, { body: { query: 'apps.*' } });
    expect([found.status, found.body]).toEqual([200, [{ text: 'api', id: 'apps.api', allowChildren: 1, expandable: 1, leaf: 0 }]]);
  });
});

describe('Server-side expressions over the new kinds\' time series', () => {
  const expr = (refId: string, model: Record<string, unknown>) => ({ refId, datasource: { type: '__expr__', uid: '__expr__' }, ...model });

  it('does math over Loki metric series and reduces them', async () => {
    const res = await dsQuery([
      { refId: 'A', datasource: { type: 'loki', uid: ds.loki.uid }, expr: 'rate({job="varlogs"}[1m])', step: '15s' },
      expr('B', { type: 'math', expression: '$A * 10' }),
      expr('C', { type: 'reduce', expression: '$A', reducer: 'max', settings: { mode: 'dropNN' } }),
    ]);
    expect(res.status).toBe(200);
    const b = res.body.results.B.frames.map(dataFrameFromJSON);
    expect(b.map((f: { fields: { values: unknown[] }[] }) => f.fields[1].values)).toEqual([[20, 5, NaN], [100, Infinity]]);
    expect(b[0].fields[1].labels).toEqual({ job: 'varlogs', level: 'error' });
    const c = res.body.results.C.frames.map(dataFrameFromJSON);
    expect(c.map((f: { fields: { values: unknown[] }[] }) => f.fields[0].values[0])).toEqual([2, 10]);
  });

  it('reduces InfluxDB series and thresholds them', async () => {
    if (!influx) return;
    const res = await dsQuery([
      { refId: 'A', datasource: { type: 'influxdb', uid: ds.influx.uid }, rawQuery: true, query: 'SELECT "count" FROM "req" WHERE $timeFilter GROUP BY "path"', alias: '$tag_path' },
      expr('B', { type: 'reduce', expression: '$A', reducer: 'sum' }),
      expr('C', { type: 'threshold', expression: 'B', conditions: [{ evaluator: { type: 'gt', params: [100] } }] }),
    ]);
    expect([res.status, res.body.message]).toEqual([200, undefined]);
    const sums = res.body.results.B.frames.map(dataFrameFromJSON).map((f: { fields: { values: unknown[]; labels?: Record<string, string> }[] }) => [f.fields[0].labels, f.fields[0].values[0]]);
    expect(sums).toEqual([[{ path: '/a' }, 45], [{ path: '/b' }, 450]]);
    expect(res.body.results.C.frames.map(dataFrameFromJSON).map((f: { fields: { values: unknown[] }[] }) => f.fields[0].values[0])).toEqual([0, 1]);
  });

  it('does math over Graphite series with their nulls', async () => {
    if (!graphite) return;
    const res = await dsQuery([
      { refId: 'A', datasource: { type: 'graphite', uid: ds.graphite.uid }, target: 'apps.api.latency' },
      expr('B', { type: 'math', expression: '$A + 1' }),
    ]);
    expect(res.status).toBe(200);
    const [a] = res.body.results.A.frames.map(dataFrameFromJSON);
    const [b] = res.body.results.B.frames.map(dataFrameFromJSON);
    const plusOne = (a.fields[1].values as (number | null)[]).map((v) => (v === null ? null : v + 1));
    expect(b.fields[1].values).toEqual(plusOne);
    // graphite-web's `from` leaves out the first bucket.
    expect(plusOne.filter((v) => v !== null)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });
});
