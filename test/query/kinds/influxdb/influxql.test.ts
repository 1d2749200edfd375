import { describe, expect, it } from '@jest/globals';
import { buildInfluxQL, parseInfluxQuery } from '../../../../src/query/kinds/influxdb/influxql.ts';

// The range and expected texts of the original's builder tests (models/query_test.go).
const RANGE = { from: Date.UTC(2020, 7, 1, 0, 0, 0), to: Date.UTC(2020, 7, 1, 0, 5, 0) };
const FILTER = 'time >= 1596240000000ms and time <= 1596240300000ms';
const MEAN_VALUE = [[{ type: 'field', params: ['value'] }, { type: 'mean', params: [] }]];

function build(model: Record<string, unknown>, intervalMs = 10000): string {
  return buildInfluxQL(parseInfluxQuery('A', model, intervalMs), RANGE);
}

describe('InfluxQL builder (models/query.go)', () => {
  it.each([
    ['simple query with policy and fill', { select: MEAN_VALUE, measurement: 'cpu', policy: 'policy', groupBy: [{ type: 'time', params: ['$__interval'] }, { type: 'fill', params: ['null'] }] }, 10000,
      `SELECT mean("value") FROM "policy"."cpu" WHERE ${FILTER} GROUP BY time(10s) fill(null)`],
    ['tz', { select: MEAN_VALUE, measurement: 'cpu', groupBy: [{ type: 'time', params: ['$__interval'] }], tz: 'Europe/Paris' }, 5000,
      `SELECT mean("value") FROM "cpu" WHERE ${FILTER} GROUP BY time(5s) tz('Europe/Paris')`],
    ['order, limit, slimit, tz in order', { select: MEAN_VALUE, measurement: 'cpu', groupBy: [{ type: 'time', params: ['$__interval'] }], tz: 'Europe/Paris', limit: '1', slimit: '1', orderByTime: 'ASC' }, 5000,
      `SELECT mean("value") FROM "cpu" WHERE ${FILTER} GROUP BY time(5s) ORDER BY time ASC limit 1 slimit 1 tz('Europe/Paris')`],
    ['tags and group bys', {
      select: MEAN_VALUE, measurement: 'cpu',
      groupBy: [{ type: 'time', params: ['$__interval'] }, { type: 'tag', params: ['datacenter'] }, { type: 'fill', params: ['null'] }],
      tags: [{ key: 'hostname', value: 'server1', operator: '=' }, { key: 'hostname', value: 'server2', operator: '=', condition: 'OR' }],
    }, 5000, `SELECT mean("value") FROM "cpu" WHERE ("hostname" = 'server1' OR "hostname" = 'server2') AND ${FILTER} GROUP BY time(5s), "datacenter" fill(null)`],
    ['math', { select: [[...MEAN_VALUE[0], { type: 'math', params: ['/ 100'] }]], measurement: 'cpu' }, 5000, `SELECT mean("value") / 100 FROM "cpu" WHERE ${FILTER}`],
    ['math with $__interval_ms', { select: [[...MEAN_VALUE[0], { type: 'math', params: ['/ $__interval_ms'] }]], measurement: 'cpu' }, 5000, `SELECT mean("value") / 5000 FROM "cpu" WHERE ${FILTER}`],
    ['old $interval', { select: MEAN_VALUE, measurement: 'cpu', policy: '', groupBy: [{ type: 'time', params: ['$interval'] }] }, 200, `SELECT mean("value") FROM "cpu" WHERE ${FILTER} GROUP BY time(200ms)`],
    ['auto time and alias, several selects', {
      select: [[{ type: 'field', params: ['value'] }, { type: 'max', params: [] }, { type: 'alias', params: ['top'] }], [{ type: 'field', params: ['idle::field'] }, { type: 'percentile', params: [95] }]],
      measurement: '/cpu.*/', groupBy: [{ type: 'time', params: ['auto'] }, { type: 'tag', params: ['host::tag'] }],
    }, 60000, `SELECT max("value") AS "top", percentile("idle"::field, 95) FROM /cpu.*/ WHERE ${FILTER} GROUP BY time(1m), "host"::tag`],
    ['raw query with macros', { rawQuery: true, query: 'SELECT mean("v") FROM "m" WHERE $timeFilter GROUP BY time($__interval), time($interval) LIMIT $__interval_ms' }, 30000,
      `SELECT mean("v") FROM "m" WHERE ${FILTER} GROUP BY time(30s), time(30s) LIMIT 30000`],
    ['rawQuery with empty text uses the builder', { rawQuery: true, query: '', select: MEAN_VALUE, measurement: 'cpu' }, 1000, `SELECT mean("value") FROM "cpu" WHERE ${FILTER}`],
  ])('%s', (_name, model, intervalMs, expected) => {
    expect(build(model as Record<string, unknown>, intervalMs)).toBe(expected);
  });

  it.each([
    [{ operator: '', value: 'value' }, `"key" = 'value'`],
    [{ operator: '', value: '/value/' }, `"key" =~ /value/`],
    [{ operator: '=~', value: '/value/' }, `"key" =~ /value/`],
    [{ operator: '=', value: '10001' }, `"key" = '10001'`],
    [{ operator: '<', value: '10001' }, `"key" < 10001`],
    [{ operator: '>=', value: '10001' }, `"key" >= 10001`],
    [{ operator: 'Is', value: 'False' }, `"key" = false`],
    [{ operator: 'Is Not', value: 'true' }, `"key" != true`],
    [{ operator: 'Is', value: 'A string' }, `"key" = 'A string'`],
    [{ operator: 'Is', value: '-1.23' }, `"key" = -1.23`],
    [{ operator: '=', value: 'C:\\test\\' }, `"key" = 'C:\\\\test\\\\'`],
    [{ operator: '>', value: '/^12.2$/' }, `"key" > '12.2'`],
  ])('renders the tag %j', (tag, condition) => {
    expect(build({ select: MEAN_VALUE, measurement: 'cpu', tags: [{ key: 'key', ...tag }] })).toBe(`SELECT mean("value") FROM "cpu" WHERE ${condition} AND ${FILTER}`);
  });

  it.each([
    [{ select: [[{ type: 'nope', params: [] }]] }, 'missing query definition for "nope"'],
    [{ groupBy: [{ params: [] }] }, 'type is not a string'],
    [{ tags: [{ key: 'k' }] }, 'tag value is not a string'],
    [{ select: [[{ type: 'field', params: [{}] }]] }, 'invalid param {} in field'],
  ])('refuses %j', (model, message) => {
    expect(() => parseInfluxQuery('A', model, 1000)).toThrow(message);
  });

  it('reads the defaults of model_parser.go', () => {
    expect(parseInfluxQuery('A', { limit: 5 }, 0)).toMatchObject({ policy: 'default', limit: '', resultFormat: '', intervalMs: 1, rawQuery: false });
  });
});
