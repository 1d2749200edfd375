import { describe, expect, it } from '@jest/globals';
import { encodeResults } from '../../../../src/query/frames/encode.ts';
import type { DataQuery, KindContext } from '../../../../src/query/kinds/kind.ts';
import { dataFrameFromJSON } from '../../../support/grafana-data.ts';
import { countPoints } from '../../../../src/query/kinds/kind-results.ts';
import { estimate, loadCsvContent, seriesName, testDataKind } from '../../../../src/query/kinds/testdata/index.ts';
import { csvValuesToField, fnv1Hex, parseGoDuration, parseLabels, readCsv, seededRandom } from '../../../../src/query/kinds/testdata/support.ts';

// The TestData kind, pure: models in, frames out, checked against values worked out by hand from
// the original's scenario code.

function context(overrides: Partial<KindContext> = {}): KindContext {
  return {
    dataSource: { id: 1, uid: 'td', orgId: 1, name: 'TestData', type: 'grafana-testdata-datasource', url: '', database: '', jsonData: {} },
    call: () => Promise.reject(new Error('TestData never calls upstream')),
    signal: new AbortController().signal,
    maxPoints: 1_000_000,
    maxSeries: 100_000,
    ...overrides,
  };
}

function q(model: Record<string, unknown>, extra: Partial<DataQuery> = {}): DataQuery {
  return { refId: 'A', queryType: '', intervalMs: 1000, maxDataPoints: 100, range: { from: 0, to: 10_000 }, model, ...extra };
}

async function run(...queries: DataQuery[]) {
  return testDataKind.query(context(), queries);
}

describe('TestData helpers', () => {
  it.each([
    ['', 0, {}],
    ['{}', 0, {}],
    ['{job="foo", instance="bar"}', 0, { job: 'foo', instance: 'bar' }],
    ['{s="$seriesIndex",k=v}', 3, { s: '3', k: 'v' }],
    ['job=api', 1, { job: 'api' }],
    ['{novalue}', 0, {}],
  ])('parseLabels(%j, %d)', (text, index, expected) => {
    expect(parseLabels(text, index)).toEqual(expected);
  });

  it.each([
    ['', 0, 'A-series'],
    ['', 2, 'A-series2'],
    ['cpu', 1, 'cpu'],
    ['__server_names', 1, 'Backend-ops-02'],
    ['__house_locations', 0, 'Cellar'],
    ['__house_locations', 99, '__house_locations'],
  ])('series name for alias %j, index %d', (alias, index, expected) => {
    expect(seriesName('A', alias, index)).toBe(expected);
  });

  it.each([
    ['5s', 5000], ['300ms', 300], ['1h2m3.5s', 3_723_500], ['1.5m', 90_000], ['-2s', -2000], ['0', 0], ['1000us', 1],
    ['', null], ['5', null], ['5x', null], ['s', null],
  ])('parseGoDuration(%j)', (text, expected) => {
    expect(parseGoDuration(text)).toBe(expected);
  });

  it.each([
    [['1', '20', 'null', ''], 'int64', [1, 20, null, null]],
    [['1', '2.5'], 'float64', [1, 2.5]],
    [['1e3', '-4'], 'float64', [1000, -4]],
    [['T', 'false', 'NULL'], 'bool', [true, false, null]],
    [['a', '', '3'], 'string', ['a', null, '3']],
    [['', ''], 'string', [null, null]],
  ])('csvValuesToField(%j)', (parts, type, values) => {
    const field = csvValuesToField(parts);
    expect(field).toEqual({ name: '', type, nullable: true, values });
  });

  it('hashes with 32-bit FNV-1 as Go does', () => {
    expect(fnv1Hex('')).toBe('811c9dc5');
    expect(fnv1Hex('a')).toBe('50c5d7e');
    expect(fnv1Hex('foobar')).toBe('31f0b262');
  });

  it('reads CSV as encoding/csv does', () => {
    expect(readCsv('a,b\r\n1,"x, ""y"""\n\n2,3')).toEqual([['a', 'b'], ['1', 'x, "y"'], ['2', '3']]);
    expect(() => readCsv('a,b\n1')).toThrow('record on line 2: wrong number of fields');
  });

  it('a seeded random source repeats itself and stays in [0, 1)', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const first = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(first).size).toBe(1000);
  });
});

describe('random_walk', () => {
  it('one point per interval from `from` while before `to`, labels and meta as the original', async () => {
    const results = await run(q({ scenarioId: 'random_walk', seed: 7, labels: '{host="h$seriesIndex"}', seriesCount: 2 }));
    const frames = results.get('A')!.frames!;
    expect(frames).toHaveLength(2);
    for (const [i, frame] of frames.entries()) {
      expect(frame.name).toBe('');
      expect(frame.meta).toEqual({ type: 'timeseries-multi', custom: { customStat: 10 } });
      expect(frame.fields[0]).toEqual({ name: 'time', type: 'time.Time', config: { interval: 1000 }, values: [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000] });
      expect(frame.fields[1]).toMatchObject({ name: i === 0 ? 'A-series' : 'A-series1', type: 'float64', nullable: true, labels: { host: `h${i}` } });
      expect(frame.fields[1].values).toHaveLength(10);
    }
  });

  it('a seed makes it reproducible, and another seed gives another walk', async () => {
    const model = { scenarioId: 'random_walk', seed: 42, noise: 3 };
    const one = (await run(q(model))).get('A')!.frames![0].fields[1].values;
    const two = (await run(q(model))).get('A')!.frames![0].fields[1].values;
    const other = (await run(q({ ...model, seed: 43 }))).get('A')!.frames![0].fields[1].values;
    expect(two).toEqual(one);
    expect(other).not.toEqual(one);
  });

  it('with no spread and no noise it stays at startValue; min and max clamp it', async () => {
    const flat = await run(q({ startValue: 5, spread: 0, seed: 1 }));
    expect(flat.get('A')!.frames![0].fields[1].values).toEqual(Array(10).fill(5));
    const clamped = await run(q({ startValue: 50, spread: 1000, min: 10, max: 20, seed: 3 }));
    const values = clamped.get('A')!.frames![0].fields[1].values as number[];
    expect(values[0]).toBe(20);
    expect(values.every((v) => v >= 10 && v <= 20)).toBe(true);
  });

  it('dropPercent 100 drops every point; alias names the series', async () => {
    const frame = (await run(q({ dropPercent: 100, alias: 'gone', seed: 1 }))).get('A')!.frames![0];
    expect(frame.fields[0].values).toEqual([]);
    expect(frame.fields[1].name).toBe('gone');
  });

  it('stops at 10000 points, and fails the refId past the context point limit', async () => {
    const many = await run(q({ seed: 1 }, { intervalMs: 1, range: { from: 0, to: 1_000_000 } }));
    expect(many.get('A')!.frames![0].fields[0].values).toHaveLength(10000);
    const limited = await testDataKind.query(context({ maxPoints: 15000 }), [q({ seed: 1, seriesCount: 2 }, { intervalMs: 1, range: { from: 0, to: 1_000_000 } })]);
    expect(limited.get('A')).toEqual({ error: expect.stringContaining('more than 15000 data points'), errorSource: 'plugin', status: 400 });
  });

  it('a huge seriesCount over an empty range is bounded too', async () => {
    const results = await testDataKind.query(context({ maxPoints: 1000 }), [q({ seriesCount: 1e9 }, { range: { from: 0, to: 0 } })]);
    expect(results.get('A')!.error).toContain('more than 1000 data points');
  });

  it('queryType naming a scenario wins over scenarioId; the default scenario is random_walk', async () => {
    const results = await run(q({ scenarioId: 'table_static' }, { queryType: 'random_walk' }), q({}, { refId: 'B' }));
    expect(results.get('A')!.frames![0].meta?.type).toBe('timeseries-multi');
    expect(results.get('B')!.frames![0].meta?.type).toBe('timeseries-multi');
  });
});

describe('other scenarios', () => {
  it('csv_metric_values spreads the values evenly over the range as nullable int64', async () => {
    const results = await run(q({ scenarioId: 'csv_metric_values', stringInput: '1,20, 90,30,5,0' }, { range: { from: 0, to: 1000 } }));
    expect(results.get('A')).toEqual({
      frames: [{
        name: '',
        fields: [
          { name: 'time', type: 'time.Time', values: [0, 200, 400, 600, 800, 1000] },
          { name: 'A-series', type: 'int64', nullable: true, values: [1, 20, 90, 30, 5, 0] },
        ],
      }],
    });
    const floats = await run(q({ scenarioId: 'csv_metric_values', stringInput: '1.5,null,3' }, { range: { from: 0, to: 999 } }));
    expect(floats.get('A')!.frames![0].fields).toEqual([
      { name: 'time', type: 'time.Time', values: [0, 499, 998] },
      { name: 'A-series', type: 'float64', nullable: true, values: [1.5, null, 3] },
    ]);
  });

  it('csv_metric_values with empty input answers nothing for it and the queries after it', async () => {
    const results = await run(q({ scenarioId: 'csv_metric_values', stringInput: '1' }), q({ scenarioId: 'csv_metric_values', stringInput: ' ' }, { refId: 'B' }), q({ scenarioId: 'csv_metric_values', stringInput: '2' }, { refId: 'C' }));
    expect([...results.keys()]).toEqual(['A']);
  });

  it('predictable_pulse follows absolute time', async () => {
    const model = { scenarioId: 'predictable_pulse', labels: 'a=b', pulseWave: { timeStep: 60, onCount: 1, offCount: 2, onValue: 1, offValue: 'null' } };
    const results = await run(q(model, { range: { from: 30_000, to: 300_000 } }));
    expect(results.get('A')).toEqual({
      frames: [{
        name: 'A-series',
        meta: { type: 'timeseries-multi', typeVersion: [0, 0] },
        fields: [
          { name: 'time', type: 'time.Time', values: [0, 60000, 120000, 180000, 240000] },
          { name: 'value', type: 'float64', nullable: true, labels: { a: 'b' }, values: [1, null, null, 1, null] },
        ],
      }],
    });
    // A value that is no number, "null" or "nan" skips the query, as the original does.
    expect((await run(q({ ...model, pulseWave: { ...model.pulseWave, onValue: 'x' } }))).has('A')).toBe(false);
  });

  it('predictable_csv_wave: one frame per wave, named by the wave', async () => {
    const model = { scenarioId: 'predictable_csv_wave', csvWave: [{ timeStep: 10, valuesCSV: '0,1,nan,', labels: 'w=1', name: 'wave' }, { timeStep: 20, valuesCSV: '7' }] };
    const frames = (await run(q(model, { range: { from: 5000, to: 40_000 } }))).get('A')!.frames!;
    expect(frames.map((f) => f.name)).toEqual(['wave', 'A-series']);
    expect(frames[0].fields[0].values).toEqual([0, 10000, 20000, 30000]);
    expect(frames[0].fields[1]).toEqual({ name: 'value', type: 'float64', nullable: true, labels: { w: '1' }, values: [0, 1, NaN, 0] });
    expect(frames[1].fields[1].values).toEqual([7, 7]);
    const bad = await run(q({ scenarioId: 'predictable_csv_wave', csvWave: [{ timeStep: 10, valuesCSV: '1,x' }] }));
    expect(bad.get('A')).toEqual({ error: `failed to parse value 'x' into nullable float: strconv.ParseFloat: parsing "x": invalid syntax`, errorSource: 'plugin', status: 400 });
  });

  it('table_static, datapoints_outside_range, no_data_points and an unknown scenario', async () => {
    const results = await run(
      q({ scenarioId: 'table_static' }, { range: { from: 0, to: 2500 } }),
      q({ scenarioId: 'datapoints_outside_range' }, { refId: 'B', range: { from: 7_200_000, to: 7_300_000 } }),
      q({ scenarioId: 'no_data_points' }, { refId: 'C' }),
      q({ scenarioId: 'nope' }, { refId: 'D' }),
    );
    expect(results.get('A')!.frames![0]).toEqual({
      name: 'A',
      fields: [
        { name: 'Time', type: 'time.Time', values: [0, 1000, 2000] },
        { name: 'Message', type: 'string', values: ['This is a message', 'This is a message', 'This is a message'] },
        { name: 'Description', type: 'string', values: ['Description', 'Description', 'Description'] },
        { name: 'Value', type: 'float64', values: [23.1, 23.1, 23.1] },
      ],
    });
    expect(results.get('B')!.frames![0]).toEqual({ name: 'B-series', fields: [{ name: 'time', type: 'time.Time', values: [3_600_000] }, { name: 'value', type: 'float64', values: [10] }] });
    expect(results.has('C')).toBe(false);
    expect(results.has('D')).toBe(false);
  });

  it('random_walk_with_error carries frames and the error; server_error_500 fails on empty input', async () => {
    const results = await run(q({ scenarioId: 'random_walk_with_error', seed: 1 }));
    expect(results.get('A')).toMatchObject({ error: 'this is an error and it can include URLs http://grafana.com/', errorSource: 'plugin', status: 500 });
    expect(results.get('A')!.frames).toHaveLength(1);
    expect((await run(q({ scenarioId: 'server_error_500' }))).get('A')).toEqual({ error: 'Test Data Panic!', errorSource: 'plugin', status: 500 });
    expect((await run(q({ scenarioId: 'server_error_500', stringInput: '1,2' }))).get('A')!.frames![0].fields[1].values).toEqual([1, 2]);
  });

  it('random_walk_table: six columns, one row per interval, up to maxDataPoints', async () => {
    const frame = (await run(q({ scenarioId: 'random_walk_table', seed: 5, startValue: 10 }, { maxDataPoints: 4 }))).get('A')!.frames![0];
    expect(frame.name).toBe('A');
    expect(frame.fields.map((f) => [f.name, f.type, f.nullable ?? false])).toEqual([
      ['Time', 'time.Time', true], ['Value', 'float64', true], ['Min', 'float64', true], ['Max', 'float64', true], ['Info', 'string', true], ['State', 'enum', false],
    ]);
    expect(frame.fields[0].values).toEqual([0, 1000, 2000, 3000]);
    expect(frame.fields[5].config).toEqual({ type: { enum: { text: ['Unknown', 'Up', 'Down'] } } });
    const [value, min, max, info, state] = frame.fields.slice(1).map((f) => f.values);
    for (let i = 0; i < 4; i++) {
      expect(min[i] as number).toBeLessThan(value[i] as number);
      expect(max[i] as number).toBeGreaterThan(value[i] as number);
      expect(state[i]).toBe(String(info[i]).startsWith('up') ? 1 : 2);
    }
  });

  it('logs: newest line first, one id per line, the data plane logs frame', async () => {
    const frame = (await run(q({ scenarioId: 'logs', lines: 3, seed: 9 }, { range: { from: 0, to: 1_700_000_000_000 }, intervalMs: 1000 }))).get('A')!.frames![0];
    expect(frame.name).toBe('A');
    expect(frame.meta).toEqual({ type: 'log-lines', preferredVisualisationType: 'logs' });
    expect(frame.fields.map((f) => [f.name, f.type])).toEqual([['labels', 'json.RawMessage'], ['timestamp', 'time.Time'], ['body', 'string'], ['id', 'string'], ['labelTypes', 'json.RawMessage']]);
    expect(frame.fields[0].labels).toEqual({});
    expect(frame.fields[1].values).toEqual([1_700_000_000_000, 1_699_999_999_000, 1_699_999_998_000]);
    const body = frame.fields[2].values[0] as string;
    expect(body).toMatch(/^t=2023-11-14T22:13:20Z lvl=\w* msg="Request Completed" logger=context /);
    const labels = frame.fields[0].values[0];
    expect(frame.fields[3].values[0]).toBe(`1700000000000000000_${fnv1Hex(`${body}_${JSON.stringify(labels)}`)}`);
    expect(frame.fields[4]).toMatchObject({ config: { custom: { hidden: true } } });
    expect(frame.fields[4].values[0]).toEqual({ container_id: 'Indexed label', hostname: 'Parsed field' });
  });

  it('csv_content: typed columns, a time column, labels in a header', async () => {
    expect(loadCsvContent('time, value{a=b}, name\n1000, 1, x\n2000, 2.5,', 'mine')).toEqual({
      name: 'mine',
      fields: [
        { name: 'time', type: 'time.Time', nullable: true, values: [1000, 2000] },
        { name: 'value', type: 'float64', nullable: true, labels: { a: 'b' }, values: [1, 2.5] },
        { name: 'name', type: 'string', nullable: true, values: ['x', null] },
      ],
    });
    const results = await run(q({ scenarioId: 'csv_content', csvContent: 'a,b\n1' }));
    expect(results.get('A')).toEqual({ error: 'failed to read line: record on line 2: wrong number of fields', errorSource: 'plugin', status: 400 });
    expect((await run(q({ scenarioId: 'csv_content' }))).size).toBe(0);
  });

  it('slow_query waits for stringInput, and gives up when the request is cancelled', async () => {
    const started = Date.now();
    const done = await run(q({ scenarioId: 'slow_query', stringInput: '150ms', seed: 1 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(done.get('A')!.frames).toHaveLength(1);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    const before = Date.now();
    const cancelled = await testDataKind.query(context({ signal: abort.signal }), [q({ scenarioId: 'slow_query', stringInput: '1h' })]);
    expect(Date.now() - before).toBeLessThan(5000);
    expect(cancelled.get('A')).toEqual({ error: 'context canceled', errorSource: 'downstream', status: 504 });
  });
});

describe('TestData resources', () => {
  const call = (method: string, path: string, body = '', headers: Record<string, string> = {}, query = '') =>
    testDataKind.resource!(context(), { method, path, query, headers, body: Buffer.from(body) });

  it('scenarios: sorted by id, keys in Go map order', async () => {
    const answer = await call('GET', 'scenarios');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    const list = JSON.parse(String(answer.body)) as Record<string, string>[];
    const ids = list.map((s) => s.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(['random_walk', 'csv_metric_values', 'logs', 'table_static', 'server_error_500']));
    expect(Object.keys(list[0])).toEqual(['description', 'id', 'name', 'stringInput']);
    expect(list.find((s) => s.id === 'csv_metric_values')).toEqual({ description: '', id: 'csv_metric_values', name: 'CSV Metric Values', stringInput: '1,20,90,30,5,0' });
  });

  it('the root and every unknown path say hello to a GET, as Go\'s mux routes them', async () => {
    for (const path of ['', 'anything/else', 'scenarios/']) {
      const answer = await call('GET', path);
      expect([answer.status, String(answer.body)]).toEqual([200, 'Hello world from test datasource!']);
    }
    expect(String((await call('POST', '')).body)).toBe('');
    expect((await call('GET', 'stream')).status).toBe(404);
  });

  it('test and test/json echo the request, without the caller\'s credentials', async () => {
    const answer = await call('POST', 'test/json', '{"x":1}', { 'content-type': 'application/json', authorization: 'Bearer secret', 'x-custom': 'v' }, 'a=1');
    const echoed = JSON.parse(String(answer.body));
    expect(Object.keys(echoed)).toEqual(['message', 'request']);
    expect(echoed.message).toBe('Hello world from test datasource!');
    expect(echoed.request).toEqual({
      body: { x: 1 },
      headers: { 'Content-Type': ['application/json'], 'X-Custom': ['v'] },
      method: 'POST',
      url: { Scheme: '', Opaque: '', User: null, Host: '', Path: '/test/json', RawPath: '', OmitHost: false, ForceQuery: false, RawQuery: 'a=1', Fragment: '', RawFragment: '' },
    });
    expect(String(answer.body)).not.toContain('secret');
    expect(JSON.parse(String((await call('GET', 'test', 'not json')).body)).request.body).toBeNull();
  });
});

describe('TestData frames on the wire', () => {
  it('every scenario\'s frames decode with the original frontend\'s decoder', async () => {
    const models: [string, Record<string, unknown>][] = [
      ['random_walk', { seed: 1, labels: 'a=b', withNil: true }],
      ['random_walk_table', { seed: 1, withNil: true }],
      ['csv_metric_values', { stringInput: '1,null,3' }],
      ['csv_content', { csvContent: 'time,value,ok\n1000,1.5,true\n2000,,false' }],
      ['predictable_pulse', { pulseWave: { timeStep: 1, onCount: 1, offCount: 1, onValue: 'nan', offValue: 'null' } }],
      ['predictable_csv_wave', { csvWave: [{ timeStep: 1, valuesCSV: '1,nan,null' }] }],
      ['table_static', {}],
      ['logs', { seed: 1, levelColumn: true, lines: 3 }],
      ['datapoints_outside_range', {}],
      ['random_walk_with_error', { seed: 2 }],
    ];
    const queries = models.map(([scenarioId, model], i) => q({ scenarioId, ...model }, { refId: `R${i}` }));
    const results = await run(...queries);
    expect(results.size).toBe(models.length);
    const wire = JSON.parse(encodeResults(results)) as { results: Record<string, { frames?: unknown[] }> };
    for (const [i, [scenarioId]] of models.entries()) {
      const frames = wire.results[`R${i}`].frames ?? [];
      expect([scenarioId, frames.length > 0]).toEqual([scenarioId, true]);
      for (const [f, json] of frames.entries()) {
        const decoded = dataFrameFromJSON(json);
        const original = results.get(`R${i}`)!.frames![f];
        expect(decoded.fields.map((field) => field.name)).toEqual(original.fields.map((field) => field.name));
        for (const [k, field] of decoded.fields.entries()) expect([scenarioId, field.name, field.values]).toEqual([scenarioId, field.name, original.fields[k].values]);
      }
    }
    // NaN written as an entity comes back as NaN; the enum keeps its texts.
    const pulse = dataFrameFromJSON(wire.results.R4.frames![0]);
    expect(pulse.fields[1].values).toEqual([NaN, null, NaN, null, NaN, null, NaN, null, NaN, null]);
    const table = dataFrameFromJSON(wire.results.R1.frames![0]);
    expect(table.fields[5]).toMatchObject({ name: 'State', type: 'enum', config: { type: { enum: { text: ['Unknown', 'Up', 'Down'] } } } });
    expect(dataFrameFromJSON(wire.results.R7.frames![0]).meta).toMatchObject({ type: 'log-lines', preferredVisualisationType: 'logs' });
  });
});

describe('estimate: what a query builds, known before it runs', () => {
  const hour = { from: 1_700_000_000_000, to: 1_700_003_600_000 };
  it.each<[string, Record<string, unknown>, Partial<DataQuery>]>([
    ['random_walk, 3 series', { scenarioId: 'random_walk', seriesCount: 3, seed: 1 }, { intervalMs: 60_000 }],
    ['random_walk, 10,000 points a series at most', { scenarioId: 'random_walk', seriesCount: 2, seed: 1 }, { intervalMs: 1 }],
    ['random_walk over an empty range: empty series, still series', { scenarioId: 'random_walk', seriesCount: 5 }, { range: { from: 5000, to: 5000 } }],
    ['random_walk, an interval of 0', { scenarioId: 'random_walk', seed: 1 }, { intervalMs: 0 }],
    ['random_walk by queryType', { queryType: 'random_walk', scenarioId: 'logs', seriesCount: 2, seed: 1 }, { queryType: 'random_walk', intervalMs: 30_000 }],
    ['random_walk with drops', { scenarioId: 'random_walk', dropPercent: 50, seed: 3 }, { intervalMs: 10_000 }],
    ['random_walk_table', { scenarioId: 'random_walk_table', seed: 1 }, { intervalMs: 10_000, maxDataPoints: 50 }],
    ['slow_query', { scenarioId: 'slow_query', stringInput: '0s', seed: 1 }, { intervalMs: 60_000 }],
    ['random_walk_with_error', { scenarioId: 'random_walk_with_error', seed: 1 }, { intervalMs: 60_000 }],
    ['predictable_pulse', { scenarioId: 'predictable_pulse', pulseWave: { timeStep: 60, onCount: 2, offCount: 3, onValue: 1, offValue: 0 } }, {}],
    ['predictable_csv_wave, two waves', { scenarioId: 'predictable_csv_wave', csvWave: [{ timeStep: 30, valuesCSV: '1,2,3' }, { timeStep: 7, valuesCSV: '4,5' }] }, {}],
    ['csv_metric_values', { scenarioId: 'csv_metric_values', stringInput: '1,20,90,30,5,0' }, {}],
    ['csv_content', { scenarioId: 'csv_content', csvContent: 'time,value,ok\n1000,1.5,true\n2000,,false' }, {}],
    ['logs', { scenarioId: 'logs', lines: 40, seed: 1 }, { intervalMs: 1000 }],
    ['logs, interval 0', { scenarioId: 'logs', lines: 40, seed: 1 }, { intervalMs: 0 }],
    ['table_static', { scenarioId: 'table_static' }, { intervalMs: 100 }],
    ['datapoints_outside_range', { scenarioId: 'datapoints_outside_range' }, {}],
    ['no_data_points', { scenarioId: 'no_data_points' }, {}],
  ])('%s: at least what it builds', async (_name, model, extra) => {
    const query = q(model, { range: hour, ...extra });
    const frames = (await run(query)).get('A')?.frames ?? [];
    const expected = estimate(query);
    expect(expected.series).toBeGreaterThanOrEqual(frames.length);
    expect(expected.points).toBeGreaterThanOrEqual(countPoints(frames));
    // Exact where nothing random drops rows.
    if (model.scenarioId === 'random_walk' && !model.dropPercent) expect(expected).toEqual({ series: frames.length, points: countPoints(frames) });
  });

  it('sizes the hostile ones without building them', () => {
    const walk = (seriesCount: number, range = hour, intervalMs = 1) => estimate(q({ scenarioId: 'random_walk', seriesCount }, { range, intervalMs }));
    expect(walk(500)).toEqual({ series: 500, points: 500 * 10_000 * 2 });
    expect(walk(1_000_000, { from: 5000, to: 5000 })).toEqual({ series: 1_000_000, points: 0 });
    expect(walk(-3)).toEqual({ series: 0, points: 0 });
    const waves = Array.from({ length: 1000 }, () => ({ timeStep: 1, valuesCSV: '1' }));
    expect(estimate(q({ scenarioId: 'predictable_csv_wave', csvWave: waves }, { range: hour }))).toEqual({ series: 1000, points: 1000 * 3601 * 2 });
  });
});
