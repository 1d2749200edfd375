import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../../../src/errors/messages.ts';
import { influxDbKind } from '../../../../src/query/kinds/influxdb/index.ts';
import { dataQuery, directContext } from '../../../support/kind-context.ts';
import { startInfluxDb, type InfluxDb } from '../../../support/influxdb.ts';

// InfluxQL through the InfluxDB kind against Debian's InfluxDB 1.x, with data the test writes.
const T0 = Date.UTC(2026, 0, 1);
const RANGE = { from: T0, to: T0 + 600_000 };
let influx: InfluxDb | undefined;

beforeAll(async () => {
  influx = await startInfluxDb();
  if (!influx) return;
  await influx.query('CREATE DATABASE metrics');
  await influx.query('CREATE RETENTION POLICY "short" ON "metrics" DURATION 30d REPLICATION 1');
  const lines: string[] = [];
  for (let i = 0; i < 10; i++) {
    lines.push(`cpu,host=a,dc=eu usage=${i},idle=${100 - i} ${T0 + i * 60_000}`);
    lines.push(`cpu,host=b,dc=us usage=${i * 2},idle=${100 - 2 * i} ${T0 + i * 60_000}`);
  }
  lines.push(`events,host=a msg="deploy \\"v2\\"",ok=true ${T0 + 30_000}`);
  await influx.write('metrics', lines.join('\n'));
  await influx.query('CREATE DATABASE other');
}, 60_000);

afterAll(async () => {
  await influx?.close();
});

const whenInstalled = (name: string, fn: () => Promise<void>) => it(name, async () => {
  if (influx) await fn();
});

describe('InfluxDB kind against a real InfluxDB 1.x', () => {
  const ctx = (jsonData: Record<string, unknown> = { dbName: 'metrics' }, database = '') =>
    directContext(influx!.url, { type: 'influxdb', jsonData, database });

  whenInstalled('runs the query builder model, names frames from measurement, column and tags', async () => {
    const model = {
      measurement: 'cpu', policy: 'default', resultFormat: 'time_series',
      select: [[{ type: 'field', params: ['usage'] }, { type: 'mean', params: [] }]],
      groupBy: [{ type: 'time', params: ['$__interval'] }, { type: 'tag', params: ['host'] }, { type: 'fill', params: ['null'] }],
      tags: [{ key: 'dc', operator: '=~', value: '/^(eu|us)$/' }],
    };
    const results = await influxDbKind.query(ctx(), [dataQuery('A', model, RANGE, { intervalMs: 120_000 })]);
    const a = results.get('A');
    expect(a?.error).toBeUndefined();
    expect(a?.frames?.map((f) => f.name)).toEqual(['cpu.mean { host: a }', 'cpu.mean { host: b }']);
    const executed = `SELECT mean("usage") FROM "cpu" WHERE "dc" =~ /^(eu|us)$/ AND time >= ${RANGE.from}ms and time <= ${RANGE.to}ms GROUP BY time(2m), "host" fill(null)`;
    expect(a?.frames?.[0].meta).toEqual({ executedQueryString: executed, preferredVisualisationType: 'graph' });
    const [time, value] = a!.frames![0].fields;
    expect(time.values.slice(0, 5)).toEqual([T0, T0 + 120_000, T0 + 240_000, T0 + 360_000, T0 + 480_000]);
    expect(value.values.slice(0, 5)).toEqual([0.5, 2.5, 4.5, 6.5, 8.5]);
    expect(value.labels).toEqual({ host: 'a' });
  });

  whenInstalled('runs raw InfluxQL with macros over GET and POST, alias naming, database from the data source', async () => {
    const raw = { rawQuery: true, query: 'SELECT max("idle") FROM "cpu" WHERE $timeFilter GROUP BY time($__interval), * LIMIT $__interval_ms', alias: '$m $col [[tag_host]]/$tag_dc' };
    for (const c of [ctx({ httpMode: 'GET', dbName: 'metrics' }), ctx({ httpMode: 'POST' }, 'metrics')]) {
      const results = await influxDbKind.query(c, [dataQuery('A', raw, RANGE, { intervalMs: 300_000 })]);
      expect(results.get('A')?.frames?.map((f) => f.name)).toEqual(['cpu max a/eu', 'cpu max b/us']);
      expect(results.get('A')?.frames?.[0].fields[1].config).toEqual({ displayNameFromDS: 'cpu max a/eu' });
    }
  });

  whenInstalled('answers table and logs formats and SHOW statements', async () => {
    const results = await influxDbKind.query(ctx(), [
      dataQuery('T', { rawQuery: true, query: 'SELECT "usage", "idle" FROM "cpu" WHERE $timeFilter GROUP BY "host" LIMIT 2', resultFormat: 'table' }, RANGE),
      dataQuery('L', { rawQuery: true, query: 'SELECT "msg", "ok" FROM "events" WHERE $timeFilter', resultFormat: 'logs' }, RANGE),
      dataQuery('S', { rawQuery: true, query: 'SHOW MEASUREMENTS' }, RANGE),
      dataQuery('V', { rawQuery: true, query: 'SHOW TAG VALUES FROM "cpu" WITH KEY = "host"' }, RANGE),
    ]);
    const table = results.get('T')!.frames![0];
    expect(table.fields.map((f) => f.name)).toEqual(['Time', 'host', 'usage', 'idle']);
    expect(table.fields[1].values).toEqual(['a', 'a', 'b', 'b']);
    expect(table.fields[3].values).toEqual([100, 99, 100, 98]);
    const logs = results.get('L')!.frames!;
    expect(logs[0].meta?.preferredVisualisationType).toBe('logs');
    expect(logs.map((f) => f.fields[1].values)).toEqual([['deploy "v2"'], [true]]);
    expect(results.get('S')!.frames![0].fields[0].values).toEqual(['cpu', 'events']);
    expect(results.get('V')!.frames![0].fields[0].values).toEqual(['a', 'b']);
  });

  whenInstalled('reads a retention policy from the model', async () => {
    const model = { measurement: 'cpu', policy: 'short', select: [[{ type: 'field', params: ['usage'] }]] };
    const results = await influxDbKind.query(ctx(), [dataQuery('A', model, RANGE)]);
    expect(results.get('A')).toEqual({ frames: [] });
  });

  whenInstalled('says InfluxDB\'s errors on the refId, the other refIds answered', async () => {
    const results = await influxDbKind.query(ctx({ dbName: 'nope' }), [
      dataQuery('P', { rawQuery: true, query: 'SELEC nonsense' }, RANGE),
      dataQuery('D', { rawQuery: true, query: 'SELECT * FROM "cpu"' }, RANGE),
    ]);
    expect(results.get('P')).toEqual({
      error: 'InfluxDB returned error: error parsing query: found SELEC, expected SELECT, DELETE, SHOW, CREATE, DROP, EXPLAIN, GRANT, REVOKE, ALTER, SET, KILL at line 1, char 1',
      errorSource: 'downstream', status: 400,
    });
    expect(results.get('D')).toEqual({ error: 'database not found: nope', errorSource: 'downstream', status: 400 });
    const mixed = await influxDbKind.query(ctx(), [
      dataQuery('A', { rawQuery: true, query: 'SELECT "usage" FROM "cpu" WHERE $timeFilter' }, RANGE),
      dataQuery('B', { select: [[{ type: 'bogus', params: [] }]], measurement: 'cpu' }, RANGE),
    ]);
    expect(mixed.get('A')?.frames?.[0].fields[1].values).toHaveLength(20);
    expect(mixed.get('B')).toEqual({ error: 'missing query definition for "bogus"', errorSource: 'plugin', status: 400 });
  });

  whenInstalled('fails a refId past the point limit', async () => {
    const results = await influxDbKind.query(directContext(influx!.url, { jsonData: { dbName: 'metrics' } }, 15), [
      dataQuery('A', { rawQuery: true, query: 'SELECT "usage" FROM "cpu" WHERE $timeFilter' }, RANGE),
    ]);
    expect(results.get('A')?.error).toBe(MESSAGES.query.tooManyPoints(15));
  });
});

describe('InfluxDB kind without a reachable InfluxDB', () => {
  it('answers each refId with the call\'s failure', async () => {
    const results = await influxDbKind.query(directContext('http://127.0.0.1:1', { jsonData: { dbName: 'x' } }), [dataQuery('A', { rawQuery: true, query: 'SHOW DATABASES' }, RANGE)]);
    expect(results.get('A')).toMatchObject({ errorSource: 'downstream', status: 502 });
  });

  it('refuses Flux and SQL data sources per refId', async () => {
    const results = await influxDbKind.query(directContext('http://127.0.0.1:1', { jsonData: { version: 'Flux' } }), [dataQuery('A', { query: 'from(bucket:"x")' }, RANGE)]);
    expect(results.get('A')).toEqual({ error: 'InfluxDB Flux queries are not supported; use InfluxQL', errorSource: 'plugin', status: 501 });
  });
});
