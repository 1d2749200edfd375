import { describe, expect, it } from '@jest/globals';
import { influxFrameName, influxFrames } from '../../../../src/query/kinds/influxdb/frames.ts';
import { influxRequest } from '../../../../src/query/kinds/influxdb/index.ts';
import { parseInfluxQuery } from '../../../../src/query/kinds/influxdb/influxql.ts';
import type { DataSourceInfo } from '../../../../src/query/kinds/kind.ts';
import { encodeFrame } from '../../../../src/query/frames/encode.ts';
import type { Frame } from '../../../../src/query/frames/frame.ts';

const q = (model: Record<string, unknown> = {}) => parseInfluxQuery('A', model, 10000);

const CPU = JSON.stringify({
  results: [{
    statement_id: 0,
    series: [
      { name: 'cpu', tags: { host: 'a', dc: 'eu' }, columns: ['time', 'mean', 'max'], values: [[1000, 1.5, 2], [2000, null, 3]] },
      { name: 'cpu', tags: { host: 'b', dc: 'eu' }, columns: ['time', 'mean', 'max'], values: [[1000, 4, 5]] },
    ],
  }],
});

describe('InfluxDB frame names (influxql/util FormatFrameName)', () => {
  it.each([
    ['', 'cpu.load.mean { dc: eu, host: a }'],
    ['$m $measurement $col', 'cpu.load cpu.load mean'],
    ['[[m]]-[[col]]-[[tag_host]]', 'cpu.load-mean-a'],
    ['$tag_host on $tag_dc ($tag_missing)', 'a on eu ($tag_missing)'],
    ['$0/$1/$2', 'cpu/load/$2'],
    ['every $__interval ($__interval_ms ms)', 'every 10s (10000 ms)'],
    ['$unknown', '$unknown'],
  ])('alias %j -> %j', (alias, name) => {
    expect(influxFrameName('cpu.load', 'mean', { host: 'a', dc: 'eu' }, { ...q({ alias }), alias })).toBe(name);
  });

  it('leaves the measurement out in table format and the braces out without tags', () => {
    expect(influxFrameName('cpu', 'mean', {}, q({ resultFormat: 'table' }))).toBe('mean');
    expect(influxFrameName('cpu', 'mean', {}, q())).toBe('cpu.mean');
  });
});

describe('InfluxDB answers as frames (buffered/response_parser.go)', () => {
  it('makes one time series frame per series and column, meta on the first', () => {
    const result = influxFrames(200, CPU, q(), 'SELECT ...');
    if (!('frames' in result)) throw new Error(result.error);
    expect(result.frames.map((f) => f.name)).toEqual(['cpu.mean { dc: eu, host: a }', 'cpu.max { dc: eu, host: a }', 'cpu.mean { dc: eu, host: b }', 'cpu.max { dc: eu, host: b }']);
    expect(result.frames[0].meta).toEqual({ executedQueryString: 'SELECT ...', preferredVisualisationType: 'graph' });
    expect(result.frames[1].meta).toBeUndefined();
    expect(result.frames[0].fields).toEqual([
      { name: 'Time', type: 'time.Time', values: [1000, 2000] },
      { name: 'Value', type: 'float64', nullable: true, labels: { dc: 'eu', host: 'a' }, config: { displayNameFromDS: 'cpu.mean { dc: eu, host: a }' }, values: [1.5, null] },
    ]);
  });

  it('keeps string and bool columns typed, and says logs for the logs format', () => {
    const body = JSON.stringify({ results: [{ series: [{ name: 'ev', columns: ['time', 'msg', 'ok'], values: [[1, null, true], [2, 'hi', null]] }] }] });
    const result = influxFrames(200, body, q({ resultFormat: 'logs' }), 'q');
    if (!('frames' in result)) throw new Error(result.error);
    expect(result.frames[0].meta?.preferredVisualisationType).toBe('logs');
    expect(result.frames[0].fields[1]).toMatchObject({ type: 'string', values: [null, 'hi'] });
    expect(result.frames[1].fields[1]).toMatchObject({ type: 'bool', values: [true, null] });
    expect(result.frames[1].fields[1].labels).toEqual({});
  });

  it('answers SHOW results without a time column as one Value frame per series', () => {
    const measurements = JSON.stringify({ results: [{ series: [{ name: 'measurements', columns: ['name'], values: [['cpu'], ['mem']] }] }] });
    const shown = influxFrames(200, measurements, q({ rawQuery: true }), 'SHOW MEASUREMENTS');
    expect(shown).toEqual({ frames: [{ name: 'measurements', meta: { executedQueryString: 'SHOW MEASUREMENTS', preferredVisualisationType: 'graph' }, fields: [{ name: 'Value', type: 'string', nullable: true, values: ['cpu', 'mem'] }] }] });
    const tagValues = JSON.stringify({ results: [{ series: [{ name: 'cpu', columns: ['key', 'value'], values: [['host', 'a'], ['host', 'b']] }] }] });
    const values = influxFrames(200, tagValues, q(), 'SHOW TAG VALUES WITH KEY = "host"');
    expect('frames' in values && values.frames[0].fields[0].values).toEqual(['a', 'b']);
  });

  it('builds the table format: Time, tags, then values', () => {
    const result = influxFrames(200, CPU, q({ resultFormat: 'table' }), 'q');
    if (!('frames' in result)) throw new Error(result.error);
    expect(result.frames).toHaveLength(1);
    expect(result.frames[0].name).toBe('cpu');
    expect(result.frames[0].meta?.preferredVisualisationType).toBe('table');
    expect(result.frames[0].fields.map((f) => [f.name, f.values])).toEqual([
      ['Time', [1000, 2000, 1000]], ['dc', ['eu', 'eu', 'eu']], ['host', ['a', 'a', 'b']], ['mean', [1.5, null, 4]], ['max', [2, 3, 5]],
    ]);
  });

  it('reads numbers as json.Number does: an overflowing value is null, a row whose time is not an int64 literal is left out', () => {
    const body = '{"results":[{"series":[{"name":"m","tags":{"__proto__":"p"},"columns":["time","v"],"values":[[1000,1e400],[2000,-1e400],[3e3,1],[4000.0,2],[5000,5]]}]}]}';
    const result = influxFrames(200, body, q(), 'q') as { frames: Frame[] };
    expect(result.frames[0]!.fields[0]!.values).toEqual([1000, 2000, 5000]);
    expect(result.frames[0]!.fields[1]!.values).toEqual([null, null, 5]);
    expect(JSON.stringify(result.frames[0]!.fields[1]!.labels)).toBe('{"__proto__":"p"}');
    // The general reading (values before columns) reads the same.
    const reordered = body.replace('"columns":["time","v"],"values":', '"values":').replace(']]}]}]}', ']],"columns":["time","v"]}]}]}');
    expect(encodeFrame((influxFrames(200, reordered, q(), 'q') as { frames: Frame[] }).frames[0]!)).toBe(encodeFrame(result.frames[0]!));
  });

  it('answers no series with no frames', () => {
    expect(influxFrames(200, '{"results":[{"statement_id":0}]}', q(), 'q')).toEqual({ frames: [] });
  });

  it.each([
    [400, '{"error":"error parsing query: found EOF, expected FROM at line 1, char 9"}', 'InfluxDB returned error: error parsing query: found EOF, expected FROM at line 1, char 9'],
    [502, '<html>bad gateway</html>', 'InfluxDB returned error: '],
    [200, '{"results":[{"statement_id":0,"error":"database not found: nope"}]}', 'database not found: nope'],
    [200, '{"error":"top level"}', 'top level'],
    [200, 'not json', 'failed to parse the InfluxDB response: '],
    [200, 'not json at all', 'failed to parse the InfluxDB response: invalid JSON'],
    [200, '{"results":[{"series":[{"name":"x","columns":["time","v"],"values":[[1]]}]}]}', 'failed to parse the InfluxDB response: a series row has fewer values than columns'],
    [200, '{"results":[{"series":[{"name":"x","tags":{"host":5},"columns":["time","v"],"values":[[1,2]]}]}]}', 'failed to parse the InfluxDB response: series tags: the value of "host" is not a string'],
    [200, '{"results":[{"series":[{"name":7,"columns":["time","v"],"values":[[1,2]]}]}]}', 'failed to parse the InfluxDB response: a series name is not a string'],
    [200, '{"results":[{"series":[{"name":"x","columns":["time","v"],"values":[[1,{"a":[[[]]]}]]}]}]}', 'failed to parse the InfluxDB response: column "v" holds a value that is not a number, string or boolean'],
  ])('says InfluxDB\'s error (%d %s)', (status, body, message) => {
    const result = influxFrames(status, body, q(), 'q');
    expect('error' in result && result.error).toContain(message);
  });
});

describe('InfluxDB request (influxql.go createRequest)', () => {
  const ds = (jsonData: Record<string, unknown>, database = ''): DataSourceInfo =>
    ({ id: 1, uid: 'u', orgId: 1, name: 'i', type: 'influxdb', url: 'http://x', database, jsonData });

  it('sends GET with q in the query string by default, dbName before database', () => {
    expect(influxRequest(ds({ dbName: 'metrics' }, 'other'), 'SELECT 1', 'default')).toEqual({ method: 'GET', path: 'query', query: 'db=metrics&epoch=ms&q=SELECT+1' });
    expect(influxRequest(ds({}, 'legacy'), 'SELECT 1', 'autogen')).toEqual({ method: 'GET', path: 'query', query: 'db=legacy&epoch=ms&q=SELECT+1&rp=autogen' });
  });

  it('sends POST with q as a form body', () => {
    expect(influxRequest(ds({ httpMode: 'POST', dbName: 'm' }), 'SELECT "a" FROM "b"', '')).toEqual({
      method: 'POST', path: 'query', query: 'db=m&epoch=ms', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'q=SELECT+%22a%22+FROM+%22b%22',
    });
  });

  it('refuses another httpMode as the original words it', () => {
    expect(influxRequest(ds({ httpMode: 'PUT' }), 'q', '')).toEqual({ error: "'httpMode' should be either 'GET' or 'POST'" });
  });
});
