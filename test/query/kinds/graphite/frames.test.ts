import { describe, expect, it } from '@jest/globals';
import { fixIntervalFormat, graphiteErrorMessage, graphiteFrames, graphiteRequest, graphiteTarget } from '../../../../src/query/kinds/graphite/frames.ts';
import type { DataQuery } from '../../../../src/query/kinds/kind.ts';

describe('Graphite target (query.go)', () => {
  it.each([
    ["summarize(a.b, '5m', 'sum')", "summarize(a.b, '5min', 'sum')"],
    ["hitcount(x, '1M')", "hitcount(x, '1mon')"],
    ["movingAverage(x, '10m'), timeShift(y, '12M')", "movingAverage(x, '10min'), timeShift(y, '12mon')"],
    ["keep(x, '5min', \"5m\", '5s')", "keep(x, '5min', \"5m\", '5s')"],
    ['a.m.b', 'a.m.b'],
  ])('%s -> %s', (target, fixed) => {
    expect(fixIntervalFormat(target)).toBe(fixed);
  });

  it('prefers targetFull, and has none for empty targets', () => {
    expect(graphiteTarget({ target: 'a', targetFull: "sum(a, '5m')" })).toBe("sum(a, '5min')");
    expect(graphiteTarget({ target: 'a', targetFull: '' })).toBe('a');
    expect(graphiteTarget({ target: '' })).toBeUndefined();
    expect(graphiteTarget({ target: 7 })).toBeUndefined();
  });

  it('posts the render form: seconds, json, maxDataPoints', () => {
    const query: DataQuery = { refId: 'A', queryType: '', intervalMs: 1000, maxDataPoints: 500, range: { from: 1700000000999, to: 1700003600000 }, model: {} };
    expect(graphiteRequest(query, 'sum(a.*)')).toEqual({
      method: 'POST', path: 'render', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'format=json&from=1700000000&maxDataPoints=500&target=sum%28a.%2A%29&until=1700003600',
    });
  });
});

describe('Graphite answers as frames', () => {
  it('makes one frame per series for the refId, tags as labels', () => {
    const body = JSON.stringify([
      { target: 'stats.web.hits', tags: { name: 'stats.web.hits', host: 'web1', rate: 99.5 }, datapoints: [[100, 1609459200], [null, 1609459260]] },
      { target: 'sumSeries(x;env=prod)', tags: { name: 'ignored', env: 'prod', flag: true }, datapoints: [] },
    ]);
    const frames = graphiteFrames(body, 'B');
    expect(frames[0]).toEqual({
      refId: 'B',
      meta: { type: 'timeseries-multi' },
      fields: [
        { name: 'time', type: 'time.Time', values: [1609459200000, 1609459260000] },
        { name: 'value', type: 'float64', nullable: true, labels: { host: 'web1', name: 'stats.web.hits', rate: '99.5' }, config: { displayNameFromDS: 'stats.web.hits' }, values: [100, null] },
      ],
    });
    expect(frames[1].fields[1].labels).toEqual({ env: 'prod', name: 'sumSeries(x' });
    expect(graphiteFrames('[]', 'A')).toEqual([]);
    expect(graphiteFrames('{"series":[{"target":"t","datapoints":[[1,2]]}]}', 'A')[0].fields[1].labels).toEqual({});
  });

  it.each([
    ['nope', 'failed to parse the Graphite response: '],
    ['{"a":1}', 'failed to parse the Graphite response: not a list of series'],
    ['[{"target":"t","datapoints":[[1,null]]}]', 'failed to parse data point timestamp'],
  ])('refuses %s', (body, message) => {
    expect(() => graphiteFrames(body, 'A')).toThrow(message);
  });

  it('keeps the text lines of graphite-web\'s HTML error pages', () => {
    const html = '<body><h1>Server Error</h1>\n<pre>Traceback\n  File &quot;x.py&quot;\nValueError: bad &lt;target&gt;</pre></body>';
    expect(graphiteErrorMessage(500, html)).toBe('Server Error\nTraceback\nFile "x.py"\nValueError: bad <target>');
    expect(graphiteErrorMessage(400, 'plain text')).toBe('plain text');
  });
});

describe('Graphite answers refused as the original refuses them', () => {
  const frames = (series: unknown) => graphiteFrames(JSON.stringify(series), 'A');
  const one = (datapoints: string, extra = '') => graphiteFrames(`[{"target":"t","datapoints":[${datapoints}]${extra}}]`, 'A');

  it.each([
    ['[1e400, 1]', 'failed to parse the Graphite response: a data point value is out of range'],
    ['["abc", 1]', 'failed to parse the Graphite response: a data point value is not a number'],
    ['[true, 1]', 'failed to parse the Graphite response: a data point value is not a number'],
    ['[[1], 1]', 'failed to parse the Graphite response: a data point value is not a number'],
    ['[1, "1"]', 'failed to parse the Graphite response: a data point timestamp is not a number'],
    ['[1, 1e306]', 'a data point timestamp is out of range'],
    ['[1, 1e400]', 'failed to parse the Graphite response: a data point timestamp is out of range'],
    ['[1, null]', 'failed to parse data point timestamp'],
    ['[1]', 'failed to parse data point timestamp'],
    ['null', 'failed to parse data point timestamp'],
    ['5', 'failed to parse the Graphite response: a data point is not a list'],
  ])('refuses the data point %s', (point, message) => {
    expect(() => one(point)).toThrow(message);
  });

  it('refuses a target, datapoints or tags of the wrong type and invalid JSON in fixed words', () => {
    expect(() => frames([{ target: 5 }])).toThrow('failed to parse the Graphite response: a target is not a string');
    expect(() => frames([{ target: 't', datapoints: 'abcdefghij' }])).toThrow('failed to parse the Graphite response: datapoints are not a list');
    expect(() => frames([{ target: 't', tags: [] }])).toThrow('failed to parse the Graphite response: tags are not an object');
    expect(() => graphiteFrames('[{"target":', 'A')).toThrow(/^failed to parse the Graphite response: invalid JSON$/);
  });

  it('reads values as null.Float does, keeps __proto__ tags, formats numeric tags without exponents', () => {
    const [frame] = one('[null, 10],[{"Float64": 2.5, "Valid": true}, 20],[{}, 30],[1.5, 40.9, "extra"]', ',"tags":{"__proto__":"p","big":1e21,"small":1e-7,"flag":true}');
    expect(frame!.fields[0]!.values).toEqual([10000, 20000, 30000, 40000]);
    expect(frame!.fields[1]!.values).toEqual([null, 2.5, 0, 1.5]);
    expect(JSON.stringify(frame!.fields[1]!.labels)).toBe('{"__proto__":"p","big":"1000000000000000000000","small":"0.0000001"}');
  });
});
