import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../src/errors/messages.ts';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';
import { freePort, listening, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';
import { ADMIN, basic, call, gql, startTestServer, type Reply } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// Hostile requests to the query API from a Viewer, each sent to a server running in a process of
// its own (as `npm start` runs it) while `/api/health` is asked every few milliseconds: no request
// stops the server or holds its event loop. Work is refused before it is built where its size is
// known (TestData, expressions), counted as it is read otherwise (upstream answers), and what is
// built is converted and encoded in slices. After each request the server still answers.

const M = MESSAGES.query;
const FROM = '1700000000000';
const TO = '1700003600000';
const VIEWER = basic('budget-viewer', 'viewer-pass-1');
/** `/api/health` answers within this while any single hostile request runs (99th percentile over the run). */
const HEALTH_P99_MS = 250;

let server: { url: string };
let main: MainProcess;
let database: PgConnection;
let upstream: Upstream;
let td: { uid: string };
let prom: { uid: string };
let loki: { uid: string };
let influx: { uid: string };
let graphite: { uid: string };

/** A Prometheus instant answer of `n` one-point series, as Prometheus writes it (about 5 MB for 100,000). */
function manySeries(n: number): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`{"metric":{"__name__":"up","instance":"host-${i}:9100"},"value":[1700003600,"1"]}`);
  return `{"status":"success","data":{"resultType":"vector","result":[${parts.join(',')}]}}`;
}

/** An InfluxDB 1.x answer of ten series of `rows` rows each, `[epoch ms, value]`, as InfluxDB writes it. */
function bigInflux(rows: number): string {
  const series = Array.from({ length: 10 }, (_, s) => {
    const values: string[] = [];
    for (let i = 0; i < rows; i++) values.push(`[${1_700_000_000_000 + i * 1000},${(i % 9973) / 7}]`);
    return `{"name":"cpu","tags":{"host":"h${s}"},"columns":["time","mean"],"values":[${values.join(',')}]}`;
  });
  return `{"results":[{"statement_id":0,"series":[${series.join(',')}]}]}`;
}

/** A Graphite `/render` answer of ten series of `points` points each, `[value, epoch s]`. */
function bigGraphite(points: number): string {
  const series = Array.from({ length: 10 }, (_, s) => {
    const datapoints: string[] = [];
    for (let i = 0; i < points; i++) datapoints.push(`[${(i % 9973) / 7},${1_700_000_000 + i}]`);
    return `{"target":"a.b.${s}","datapoints":[${datapoints.join(',')}]}`;
  });
  return `[${series.join(',')}]`;
}

/** A Loki streams answer of `n` lines over ten streams, every line its own. */
function manyLines(n: number): string {
  const result = Array.from({ length: 10 }, (_, s) => ({
    stream: { job: 'app', stream: String(s) },
    values: Array.from({ length: n / 10 }, (_, i) => [`${1_700_000_000_000 + i * 10 + s}000000`, `level=info row=${i} stream=${s} msg="request served" path=/api/items/${i}`]),
  }));
  return JSON.stringify({ status: 'success', data: { resultType: 'streams', result } });
}

async function createDs(body: Record<string, unknown>) {
  const res = await call(server, 'POST', '/api/datasources', { body: { access: 'proxy', ...body } });
  expect(res.status).toBe(200);
  return { uid: res.body.datasource.uid as string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Probed<T> {
  reply: T;
  /**
   * Each `/api/health` answer's wait, in milliseconds of CPU time of the event loop's thread: what
   * the server did before it got to answer. On a machine shared with other work the wall time also
   * counts the time the process waited for a core, which says nothing about the server.
   */
  latencies: number[];
  p99: number;
  worst: number;
  /** The same in wall time, for the record. */
  worstWall: number;
}

/** CPU time of the server's main thread (its event loop's) in ms, as Linux counts it (10 ms steps). */
function mainThreadCpuMs(): number {
  const pid = main.child.pid!;
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
};

/** Runs `work` while asking `/api/health` every 5 ms (each ask waiting for the one before). */
async function probed<T>(work: () => Promise<T>): Promise<Probed<T>> {
  const latencies: number[] = [];
  const walls: number[] = [];
  let done = false;
  const probe = (async () => {
    while (!done) {
      const started = performance.now();
      const cpu = mainThreadCpuMs();
      const res = await call(server, 'GET', '/api/health', { auth: null });
      latencies.push(mainThreadCpuMs() - cpu);
      walls.push(performance.now() - started);
      expect(res.status).toBe(200);
      await sleep(5);
    }
  })();
  await sleep(20);
  const reply = await work().finally(() => (done = true));
  await probe;
  return { reply, latencies, p99: percentile(latencies, 0.99), worst: Math.max(...latencies), worstWall: Math.max(...walls) };
}

const dsQuery = (body: unknown, auth: string | null = VIEWER): Promise<Reply> => call(server, 'POST', '/api/ds/query', { body, auth });

/**
 * The same, its answer's bytes read as they come, joined and parsed only once `probed` has stopped
 * asking: joining and parsing 200 MB of JSON would hold the probes' process.
 */
function dsQueryBytes(body: unknown): () => Promise<{ status: number; chunks: Uint8Array[] }> {
  return async () => {
    const res = await fetch(`${server.url}/api/ds/query`, { method: 'POST', headers: { authorization: VIEWER, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const chunks: Uint8Array[] = [];
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    return { status: res.status, chunks };
  };
}

const parsed = (reply: { status: number; chunks: Uint8Array[] }) => ({ status: reply.status, body: JSON.parse(Buffer.concat(reply.chunks).toString('utf8')) });

async function stillAnswers(): Promise<void> {
  const health = await call(server, 'GET', '/api/health', { auth: null });
  expect(health.status).toBe(200);
  const small = await dsQuery({ from: FROM, to: TO, queries: [{ refId: 'A', datasource: td, scenarioId: 'random_walk', seed: 1 }] });
  expect(small.status).toBe(200);
  expect(small.body.results.A.frames).toHaveLength(1);
  // Every answer's bytes given back once it is sent.
  const inFlight = async () => /^dashgate_query_answer_bytes_in_flight (\d+)$/m.exec((await call(server, 'GET', '/metrics', { auth: null })).text)?.[1];
  for (let i = 0; i < 50 && (await inFlight()) !== '0'; i++) await sleep(20);
  expect(await inFlight()).toBe('0');
}

const report: Record<string, { p99: number; worst: number; worstWall: number; probes: number }> = {};
function judge(name: string, run: Probed<unknown>): void {
  report[name] = { p99: Math.round(run.p99), worst: Math.round(run.worst), worstWall: Math.round(run.worstWall), probes: run.latencies.length };
  expect(run.latencies.length).toBeGreaterThan(0);
  expect(run.p99).toBeLessThan(HEALTH_P99_MS);
}

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    req.resume();
    const url = req.url ?? '';
    const body = url.startsWith('/prom/api/v1/query') ? PROM_BODY : url.startsWith('/loki/') ? LOKI_BODY
      : url.startsWith('/influx/query') ? INFLUX_BODY : url.startsWith('/graphite/render') ? GRAPHITE_BODY : '{}';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  database = await createTestDatabase();
  const port = await freePort();
  main = spawnMain({
    env: {
      GF_DATABASE_TYPE: 'postgres', GF_DATABASE_HOST: `${database.host}:${database.port}`, GF_DATABASE_NAME: database.database,
      GF_DATABASE_USER: database.user, GF_DATABASE_PASSWORD: database.password, GF_SECURITY_SECRET_KEY: 'query-budgets-test-key-0123456789',
      GF_SERVER_HTTP_ADDR: '127.0.0.1', GF_SERVER_HTTP_PORT: String(port), GF_LOG_LEVEL: 'info',
    },
  });
  await listening(main);
  server = { url: `http://127.0.0.1:${port}` };
  td = await createDs({ name: 'td', type: 'grafana-testdata-datasource' });
  prom = await createDs({ name: 'prom', type: 'prometheus', url: `${upstream.url}/prom` });
  loki = await createDs({ name: 'loki', type: 'loki', url: upstream.url });
  influx = await createDs({ name: 'influx', type: 'influxdb', url: `${upstream.url}/influx`, jsonData: { dbName: 'db' } });
  graphite = await createDs({ name: 'graphite', type: 'graphite', url: `${upstream.url}/graphite` });
  const user = await call(server, 'POST', '/api/admin/users', { body: { login: 'budget-viewer', password: 'viewer-pass-1' }, auth: ADMIN });
  expect(user.status).toBe(200);
}, 180_000);

afterAll(async () => {
  // The /api/health waits seen during each hostile request (ms of CPU; the worst in wall time too), for the record.
  process.stdout.write(`query budgets, /api/health while each hostile request ran: ${JSON.stringify(report)}\n`);
  if (main) await stopMain(main);
  if (database) await dropTestDatabase(database);
  await upstream?.close();
});

const PROM_BODY = manySeries(100_000);
const LOKI_BODY = manyLines(40_000);
// About 54 MiB each, below the answers' 64 MiB bound ([dataproxy] response_limit at 0).
const INFLUX_BODY = bigInflux(175_000);
const GRAPHITE_BODY = bigGraphite(190_000);

describe('requests that would build more than a server holds fail before building it', () => {
  it('60 refIds of random_walk, 500 series at 1 ms over an hour (an 8 KB Viewer request): every refId fails at once', async () => {
    const queries = Array.from({ length: 60 }, (_, i) => ({ refId: `Q${i}`, datasource: { uid: td.uid }, scenarioId: 'random_walk', seriesCount: 500, intervalMs: 1 }));
    expect(JSON.stringify({ from: FROM, to: TO, queries }).length).toBeLessThan(9000);
    const run = await probed(() => dsQuery({ from: FROM, to: TO, queries }));
    expect(run.reply.status).toBe(400);
    for (let i = 0; i < 60; i++) expect(run.reply.body.results[`Q${i}`]).toEqual({ error: M.tooManyPoints(5_000_000), errorSource: 'plugin', status: 400 });
    judge('60 refIds x 500 series x 1 ms', run);
    await stillAnswers();
  });

  it('random_walk of 1,000,000 series over an empty range (from == to): too many series, none built', async () => {
    const run = await probed(() => dsQuery({ from: FROM, to: FROM, queries: [{ refId: 'A', datasource: td, scenarioId: 'random_walk', seriesCount: 1_000_000 }] }));
    expect(run.reply.status).toBe(400);
    expect(run.reply.body.results.A).toEqual({ error: M.tooManySeries(100_000), errorSource: 'plugin', status: 400 });
    judge('1,000,000 empty series', run);
    await stillAnswers();
  });

  it('10,000 default refIds: the whole request is refused with 400', async () => {
    const queries = Array.from({ length: 10_000 }, (_, i) => ({ refId: `R${i}`, datasource: td }));
    const run = await probed(() => dsQuery({ from: FROM, to: TO, queries }));
    expect(run.reply.status).toBe(400);
    expect(run.reply.body).toEqual({ statusCode: 400, messageId: 'query.tooManyQueries', message: M.tooManyQueries(1000) });
    judge('10,000 refIds', run);
    await stillAnswers();
  });

  it('1,000 default refIds, within the limits: all built, in slices', async () => {
    const queries = Array.from({ length: 1000 }, (_, i) => ({ refId: `R${i}`, datasource: td, seed: i }));
    const run = await probed(dsQueryBytes({ from: FROM, to: TO, queries }));
    const reply = parsed(run.reply);
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body.results)).toHaveLength(1000);
    expect(reply.body.results.R999.frames[0].data.values[0]).toHaveLength(3600);
    judge('1,000 refIds x 3,600 points', run);
    await stillAnswers();
  });

  it('predictable_csv_wave of 10,000 one-second waves: too many points, none built', async () => {
    const csvWave = Array.from({ length: 10_000 }, () => ({ timeStep: 1, valuesCSV: '1,2' }));
    const run = await probed(() => dsQuery({ from: FROM, to: TO, queries: [{ refId: 'A', datasource: td, scenarioId: 'predictable_csv_wave', csvWave }] }));
    expect(run.reply.status).toBe(400);
    expect(run.reply.body.results.A.error).toBe(M.tooManyPoints(5_000_000));
    judge('10,000 csv waves', run);
    await stillAnswers();
  });

  it('the largest request the defaults take (10,000,000 points) is built and sent in slices; the refIds past it fail', async () => {
    const queries = ['A', 'B', 'C'].map((refId) => ({ refId, datasource: td, scenarioId: 'random_walk', seriesCount: 250, intervalMs: 360, seed: 1 }));
    const run = await probed(dsQueryBytes({ from: FROM, to: TO, queries }));
    const reply = parsed(run.reply);
    expect(reply.status).toBe(400);
    expect(reply.body.results.A.frames).toHaveLength(250);
    expect(reply.body.results.B.frames).toHaveLength(250);
    expect(reply.body.results.C).toEqual({ error: M.requestTooManyPoints(10_000_000), errorSource: 'plugin', status: 400 });
    judge('10,000,000 points built', run);
    await stillAnswers();
  }, 180_000);
});

describe('expressions', () => {
  const expr = { uid: '__expr__', type: '__expr__' };
  const input = () => ({ refId: 'A', datasource: td, scenarioId: 'random_walk', seriesCount: 100, intervalMs: 360, seed: 1, hide: true });

  it('40 math expressions over a million points: the ones past the request budget fail before they are computed', async () => {
    const maths = Array.from({ length: 40 }, (_, i) => ({ refId: `M${String(i).padStart(2, '0')}`, datasource: expr, type: 'math', expression: `$A * ${i + 1}` }));
    const run = await probed(dsQueryBytes({ from: FROM, to: TO, queries: [input(), ...maths] }));
    const reply = parsed(run.reply);
    expect(reply.status).toBe(400);
    const results = reply.body.results as Record<string, { error?: string; frames?: unknown[] }>;
    const answered = Object.values(results).filter((r) => r.error === undefined);
    const refused = Object.values(results).filter((r) => r.error !== undefined);
    // A (2,000,000 points, hidden) leaves room for four of them.
    expect(answered).toHaveLength(4);
    for (const r of answered) expect(r.frames).toHaveLength(100);
    expect(refused).toHaveLength(36);
    for (const r of refused) expect(r.error).toBe(M.requestTooManyPoints(10_000_000));
    judge('40 math expressions x 1,000,000 points', run);
    await stillAnswers();
  }, 180_000);

  it('resampling 40 series to about a million points each: refused before any is built', async () => {
    const series = { ...input(), seriesCount: 40, intervalMs: 60_000 };
    const resample = { refId: 'R', datasource: expr, type: 'resample', expression: '$A', window: '4ms', downsampler: 'mean', upsampler: 'pad' };
    const run = await probed(() => dsQuery({ from: FROM, to: TO, queries: [series, resample] }));
    expect(run.reply.status).toBe(400);
    expect(run.reply.body.results.R).toMatchObject({ error: M.tooManyPoints(5_000_000), status: 400 });
    judge('resample 40 series to 900,000 points', run);
    await stillAnswers();
  });

  it('a join of 1,000 by 1,000 series (a million pairs): the pairs past the refId budget are never made', async () => {
    const a = { refId: 'A', datasource: td, scenarioId: 'random_walk', seriesCount: 1000, labels: 'x=1', intervalMs: 60_000, seed: 1, hide: true };
    const b = { ...a, refId: 'B', labels: 'x=1,b=$seriesIndex' };
    const join = { refId: 'J', datasource: expr, type: 'math', expression: '$A + $B' };
    const run = await probed(() => dsQuery({ from: FROM, to: TO, queries: [a, b, join] }));
    expect(run.reply.status).toBe(400);
    expect(run.reply.body.results.J.error).toBe(M.tooManySeries(100_000));
    judge('join 1,000 x 1,000 series', run);
    await stillAnswers();
  }, 180_000);
});

describe('the graph', () => {
  const walk = (refId: string, seriesCount: number) => ({ refId, datasource: td, scenarioId: 'random_walk', seriesCount, intervalMs: 360, seed: 1 });
  const document = 'query Q($a: [JSONObject!]!, $b: [JSONObject!]!) { one: dataQuery(from: "1700000000000", to: "1700003600000", queries: $a) { results { refId error frames { fields { numbers } } } } two: dataQuery(from: "1700000000000", to: "1700003600000", queries: $b) { results { refId error } } }';

  it('holds the query fields of one GraphQL request, aliases together, to [query] max_points_per_graph_request: the GraphQL executor writes each value in one go', async () => {
    // 40,000 points each: A and B fit the default 100,000; C, and the second alias, do not.
    const variables = { a: [walk('A', 2), walk('B', 2), walk('C', 2)], b: [walk('D', 2)] };
    // The document compiled once (as any document is on its first use), then measured.
    await gql(server, document, variables, VIEWER);
    const run = await probed(() => gql(server, document, variables, VIEWER));
    expect(run.reply.status).toBe(200);
    const [one, two] = [run.reply.body.data.one.results, run.reply.body.data.two.results];
    expect(one.map((r: { refId: string; error: string | null }) => [r.refId, r.error])).toEqual([['A', null], ['B', null], ['C', M.graphTooManyPoints(100_000)]]);
    expect(one[0].frames[0].fields[1].numbers).toHaveLength(10_000);
    expect(two).toEqual([{ refId: 'D', error: M.graphTooManyPoints(100_000) }]);
    judge('GraphQL 100,000 points', run);
    await stillAnswers();
  }, 180_000);

  it('refuses a data query of the largest REST size at once', async () => {
    const run = await probed(() => gql(server, document, { a: [walk('A', 250), walk('B', 250)], b: [walk('C', 0)] }, VIEWER));
    expect(run.reply.body.data.one.results.map((r: { error: string | null }) => r.error)).toEqual([M.graphTooManyPoints(100_000), M.graphTooManyPoints(100_000)]);
    expect(run.reply.body.data.two.results).toEqual([{ refId: 'C', error: null }]);
    judge('GraphQL 10,000,000 points', run);
    await stillAnswers();
  }, 180_000);
});

describe('large upstream answers are converted in slices', () => {
  it('a Prometheus answer of 100,000 one-point series', async () => {
    const run = await probed(dsQueryBytes({ from: FROM, to: TO, queries: [{ refId: 'A', datasource: prom, expr: 'up', instant: true }] }));
    const reply = parsed(run.reply);
    expect(reply.status).toBe(200);
    expect(reply.body.results.A.frames).toHaveLength(100_000);
    judge('Prometheus 100,000 series', run);
    await stillAnswers();
  }, 180_000);

  it('a Loki answer of 40,000 log lines', async () => {
    const run = await probed(dsQueryBytes({ from: FROM, to: TO, queries: [{ refId: 'A', datasource: loki, expr: '{job="app"}', queryType: 'range', maxLines: 40_000 }] }));
    const reply = parsed(run.reply);
    expect(reply.status).toBe(200);
    expect(reply.body.results.A.frames[0].data.values[0]).toHaveLength(40_000);
    judge('Loki 40,000 lines', run);
    await stillAnswers();
  }, 180_000);

  it('an InfluxDB answer of 54 MiB (1,750,000 rows)', async () => {
    expect(INFLUX_BODY.length).toBeGreaterThan(50 * 2 ** 20);
    const run = await probed(dsQueryBytes({ from: FROM, to: TO, queries: [{ refId: 'A', datasource: influx, rawQuery: true, query: 'SELECT mean("v") FROM "cpu"', resultFormat: 'time_series' }] }));
    const reply = parsed(run.reply);
    expect(reply.status).toBe(200);
    expect(reply.body.results.A.frames).toHaveLength(10);
    expect(reply.body.results.A.frames[9].data.values[0]).toHaveLength(175_000);
    judge('InfluxDB 54 MiB', run);
    await stillAnswers();
  }, 180_000);

  it('a Graphite answer of 54 MiB (1,900,000 points)', async () => {
    expect(GRAPHITE_BODY.length).toBeGreaterThan(50 * 2 ** 20);
    const run = await probed(dsQueryBytes({ from: FROM, to: TO, queries: [{ refId: 'A', datasource: graphite, target: 'a.b.*' }] }));
    const reply = parsed(run.reply);
    expect(reply.status).toBe(200);
    expect(reply.body.results.A.frames).toHaveLength(10);
    expect(reply.body.results.A.frames[9].data.values[1]).toHaveLength(190_000);
    judge('Graphite 54 MiB', run);
    await stillAnswers();
  }, 180_000);
});

describe('[query] max_answer_bytes_in_flight', () => {
  it('refuses a request with 503 and Retry-After while earlier answers hold the room, and takes it once they are sent', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = await startUpstream((req, res) => {
      req.resume();
      void held.then(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"status":"success","data":{"resultType":"vector","result":[]}}');
      });
    });
    const small = await startTestServer({ overrides: { query: { max_answer_bytes_in_flight: '100000' } } });
    try {
      const ds = await call(small, 'POST', '/api/datasources', { body: { access: 'proxy', name: 'slow-prom', type: 'prometheus', url: slow.url } });
      const body = { from: FROM, to: TO, queries: [{ refId: 'A', datasource: { uid: ds.body.datasource.uid }, expr: 'up', instant: true }] };
      const first = call(small, 'POST', '/api/ds/query', { body });
      while (slow.requests.length === 0) await sleep(10);
      const refused = await call(small, 'POST', '/api/ds/query', { body });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(refused.body).toEqual({ message: M.answersBusy });
      const graph = await gql(small, 'query Q($queries: [JSONObject!]!) { dataQuery(from: "1700000000000", to: "1700003600000", queries: $queries) { status } }', { queries: body.queries });
      expect(graph.status).toBe(503);
      expect(graph.headers.get('retry-after')).toBe('2');
      expect(graph.body.errors?.[0]).toMatchObject({ message: M.answersBusy, extensions: { code: 'UNAVAILABLE' } });
      release();
      expect((await first).status).toBe(200);
      expect(small.app.queries.memory.used).toBe(0);
      expect((await call(small, 'POST', '/api/ds/query', { body })).status).toBe(200);
    } finally {
      release();
      await small.close();
      await slow.close();
    }
  }, 30_000);
});
