import { describe, expect, it } from '@jest/globals';
import { encodeFrame, encodeResults, goFloat, goString, plainNumbers } from '../../../src/query/frames/encode.ts';
import type { Frame } from '../../../src/query/frames/frame.ts';
import { dataFrameFromJSON } from '../../support/grafana-data.ts';

// The SDK's frame JSON (data/frame_json.go), byte for byte, and decoded by the original frontend's
// own decoder (@grafana/data's dataFrameFromJSON) back into the same values.


const CASES: Array<[string, Frame, string]> = [
  ['an empty frame carrying meta (Prometheus on an error or an empty result)',
    { meta: { executedQueryString: 'Expr: up\nStep: 15s' }, fields: [] },
    '{"schema":{"meta":{"typeVersion":[0,0],"executedQueryString":"Expr: up\\nStep: 15s"},"fields":[]},"data":{"values":[]}}'],
  ['a Prometheus series: key orders, labels sorted, config, typeVersion',
    {
      refId: 'A', meta: { type: 'timeseries-multi', typeVersion: [0, 1], custom: { resultType: 'matrix' } },
      fields: [
        { name: 'Time', type: 'time.Time', config: { interval: 15000 }, values: [1700000000000, 1700000015000] },
        { name: 'up', type: 'float64', labels: { job: 'prometheus', __name__: 'up' }, config: { displayNameFromDS: 'up{job="prometheus"}' }, values: [1, 0.5] },
      ],
    },
    '{"schema":{"refId":"A","meta":{"type":"timeseries-multi","typeVersion":[0,1],"custom":{"resultType":"matrix"}},"fields":['
    + '{"name":"Time","type":"time","typeInfo":{"frame":"time.Time"},"config":{"interval":15000}},'
    + '{"name":"up","type":"number","typeInfo":{"frame":"float64"},"labels":{"__name__":"up","job":"prometheus"},"config":{"displayNameFromDS":"up{job=\\"prometheus\\"}"}}]},'
    + '"data":{"values":[[1700000000000,1700000015000],[1,0.5]]}}'],
  ['NaN and infinities as null plus entities, one slot per field',
    { fields: [{ name: 'Time', type: 'time.Time', values: [1, 2, 3, 4] }, { name: 'Value', type: 'float64', values: [NaN, Infinity, -Infinity, 2] }] },
    '{"schema":{"fields":[{"name":"Time","type":"time","typeInfo":{"frame":"time.Time"}},{"name":"Value","type":"number","typeInfo":{"frame":"float64"}}]},'
    + '"data":{"values":[[1,2,3,4],[null,null,null,2]],"entities":[null,{"NaN":[0],"Inf":[1],"NegInf":[2]}]}}'],
  ['nullable fields, nanoseconds, empty labels, other types',
    {
      name: 'logs', fields: [
        { name: 'ts', type: 'time.Time', values: [1700000000000, 1700000000001], nanos: [123456, 0] },
        { name: 'line', type: 'string', nullable: true, labels: {}, values: ['a <b> & c', null] },
        { name: 'n', type: 'int64', nullable: true, values: [null, 42] },
        { name: 'ok', type: 'bool', values: [true, false] },
        { name: 'labels', type: 'json.RawMessage', values: [{ b: 1, a: '<' }, null] },
      ],
    },
    '{"schema":{"name":"logs","fields":[{"name":"ts","type":"time","typeInfo":{"frame":"time.Time"}},'
    + '{"name":"line","type":"string","typeInfo":{"frame":"string","nullable":true},"labels":{}},'
    + '{"name":"n","type":"number","typeInfo":{"frame":"int64","nullable":true}},'
    + '{"name":"ok","type":"boolean","typeInfo":{"frame":"bool"}},'
    + '{"name":"labels","type":"other","typeInfo":{"frame":"json.RawMessage"}}]},'
    + '"data":{"values":[[1700000000000,1700000000001],["a \\u003cb\\u003e \\u0026 c",null],[null,42],[true,false],[{"b":1,"a":"<"},null]],'
    + '"nanos":[[123456,0],null,null,null,null]}}'],
  ['notices, stats and a field without a name',
    { meta: { type: 'numeric-multi', notices: [{ severity: 'warning', text: 'PromQL info: x' }], preferredVisualisationType: 'graph' }, fields: [{ name: '', type: 'float64', values: [1e-7, 1e21] }] },
    '{"schema":{"meta":{"type":"numeric-multi","typeVersion":[0,0],"notices":[{"severity":"warning","text":"PromQL info: x"}],"preferredVisualisationType":"graph"},'
    + '"fields":[{"type":"number","typeInfo":{"frame":"float64"}}]},"data":{"values":[[1e-07,1e+21]]}}'],
];

describe('the frame encoder', () => {
  it.each(CASES)('%s', (_title, frame, json) => {
    expect(encodeFrame(frame)).toBe(json);
    // Valid JSON, and the frontend decodes it to the same values.
    const decoded = dataFrameFromJSON(JSON.parse(json));
    expect(decoded.fields.map((f) => f.name ?? '')).toEqual(frame.fields.map((f) => f.name));
    frame.fields.forEach((field, i) => {
      const values = decoded.fields[i]!.values;
      expect(values).toHaveLength(field.values.length);
      field.values.forEach((v, row) => {
        if (typeof v === 'number' && Number.isNaN(v)) expect(Number.isNaN(values[row])).toBe(true);
        else expect(values[row]).toEqual(v);
      });
    });
    if (frame.meta) expect(decoded.meta).toMatchObject({ typeVersion: frame.meta.typeVersion ?? [0, 0] });
  });

  it('gives the frontend the time field nanoseconds and the decoded field types', () => {
    const decoded = dataFrameFromJSON(JSON.parse(CASES[3]![2]));
    expect(decoded.fields[0]!.nanos).toEqual([123456, 0]);
    expect(decoded.fields.map((f) => f.type)).toEqual(['time', 'string', 'number', 'boolean', 'other']);
  });

  it.each([
    [1, '1'], [0.1, '0.1'], [1e-7, '1e-07'], [-2.5e-8, '-2.5e-08'], [1e21, '1e+21'], [1.5e300, '1.5e+300'], [123456789012, '123456789012'],
  ])('floats as Go writes them: %p -> %s', (value, text) => {
    expect(goFloat(value)).toBe(text);
  });

  it('escapes strings as Go does', () => {
    expect(goString('a<b>&\u2028"')).toBe('"a\\u003cb\\u003e\\u0026\\u2028\\""');
  });
});

describe('number columns written natively', () => {
  /** The `data.values` text of a one-field frame. */
  const valuesText = (type: 'float64' | 'int64' | 'time.Time', values: unknown[]) => {
    const json = encodeFrame({ fields: [{ name: 'v', type, nullable: true, values }] });
    return json.slice(json.indexOf('"values":[[') + '"values":['.length, json.indexOf(']]') + 1);
  };

  it.each([
    ['float64', [0, -0, 1, -1.5, 0.1 + 0.2, 1e-6, -1e-6, 123456789.125, 1e20, -9.99e20, 2 ** 53 + 2, 42]],
    ['int64', [0, -0, 1, -7, 2 ** 53, -(2 ** 53), 1e20]],
    ['time.Time', [1700000000000, 1700000015000, 0, -1000]],
  ] as const)('%s: what the per-value path writes for the same numbers', (type, values) => {
    expect(plainNumbers(values, type !== 'float64')).toBe(true);
    // A null in the column takes the per-value path; the numbers before it must read the same.
    const native = valuesText(type, [...values]);
    const perValue = valuesText(type, [...values, null]);
    expect(perValue).toBe(`${native.slice(0, -1)},null]`);
  });

  it.each([
    ['a NaN', [1, NaN], false], ['an infinity', [1, -Infinity], false], ['a null', [1, null], false],
    ['an exponent below 1e-6', [1, 1e-7], false], ['an exponent from 1e21', [1e21], false], ['a string', ['1'], false],
    ['a fraction in an integer column', [1.5], true],
  ])('leaves %s to the per-value path', (_what, values, integers) => {
    expect(plainNumbers(values, integers)).toBe(false);
  });
});

describe('the /api/ds/query envelope', () => {
  it('sorts refIds and writes error, errorSource, status, frames in that order', () => {
    const text = encodeResults(new Map([
      ['B', { error: 'bad_data: parse error', errorSource: 'downstream' as const, status: 400, frames: [{ fields: [], meta: {} }] }],
      ['A', { frames: [] }],
      ['a', { status: 200 }],
    ]));
    expect(text).toBe('{"results":{"A":{"status":200,"frames":[]},'
      + '"B":{"error":"bad_data: parse error","errorSource":"downstream","status":400,"frames":[{"schema":{"meta":{"typeVersion":[0,0]},"fields":[]},"data":{"values":[]}}]},'
      + '"a":{"status":200}}}');
  });
});

describe('the encoder never writes what JSON cannot hold', () => {
  it('writes non-finite floats as null plus entities, and any non-finite time or integer as null', () => {
    const json = encodeFrame({
      fields: [
        { name: 'Time', type: 'time.Time', values: [Infinity, NaN, -Infinity, 1e22, 5] },
        { name: 'n', type: 'int64', values: [NaN, 1] },
        { name: 'v', type: 'float64', values: [NaN, Infinity, -Infinity, 1, 2], config: { min: NaN, max: Infinity } },
      ],
    });
    const parsed = JSON.parse(json) as { schema: { fields: Array<{ config?: unknown }> }; data: { values: unknown[][]; entities: unknown[] } };
    expect(parsed.data.values).toEqual([[null, null, null, 10000000000000000000000, 5], [null, 1], [null, null, null, 1, 2]]);
    expect(json).toContain('10000000000000000000000');
    expect(parsed.data.entities).toEqual([null, null, { NaN: [0], Inf: [1], NegInf: [2] }]);
    expect(parsed.schema.fields[2]!.config).toEqual({ min: null, max: null });
  });
});
