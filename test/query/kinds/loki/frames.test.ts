import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { DataQuery } from '../../../../src/query/kinds/kind.ts';
import {
  interpolateLoki, lokiErrorMessage, lokiFrames, lokiRequest, lokiResourceAllowed, lokiSeriesName, lokiStep, parseLokiQuery,
} from '../../../../src/query/kinds/loki/frames.ts';
import { FnvSuffix, fnv32 } from '../../../../src/query/kinds/loki/log-frame.ts';
import { goJsonStringMap } from '../../../../src/query/go-text.ts';
import { encodeFrame, goString } from '../../../../src/query/frames/encode.ts';
import type { Field } from '../../../../src/query/frames/frame.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/loki/${name}`, import.meta.url));
const FROM = 1700000000000;

function query(model: Record<string, unknown>, over: Partial<DataQuery> = {}): DataQuery {
  return { refId: 'A', queryType: '', intervalMs: 1000, maxDataPoints: 100, range: { from: FROM, to: FROM + 3600000 }, model, ...over };
}

describe('Loki step (step.go)', () => {
  it.each([
    // [intervalMs, rangeMs, resolution, step, expected ms]
    [1000, 3600000, 1, undefined, 1000],
    [1000, 3600000, 5, undefined, 5000],
    [15000, 3600000, 2, '', 30000],
    // range / 11000 wins on long ranges, rounded up to the millisecond
    [1000, 30 * 86400000, 1, undefined, 235637],
    [1, 100000, 1, undefined, 10],
    [1000, 3600000, 1, '30s', 30000],
    [1000, 3600000, 3, '1m', 180000],
    [1000, 3600000, 1, '10', 10000],
  ])('interval %d, range %d, resolution %d, step %j -> %d ms', (interval, range, resolution, step, ms) => {
    expect(lokiStep(interval, range, resolution, step)).toBe(ms);
  });

  it('takes resolution 1-5 and 10, any other as 1', () => {
    expect(parseLokiQuery(query({ expr: 'x', resolution: 10 })).step).toBe(10000);
    expect(parseLokiQuery(query({ expr: 'x', resolution: 7 })).step).toBe(1000);
  });
});

describe('Loki model and request (parse_query.go, api.go)', () => {
  it('defaults to a backward range query without limit', () => {
    const q = parseLokiQuery(query({ expr: '{job="varlogs"}' }));
    expect(q).toMatchObject({ queryType: 'range', direction: 'backward', maxLines: 0, legendFormat: '' });
    expect(lokiRequest(q)).toEqual({
      method: 'GET',
      path: 'loki/api/v1/query_range',
      query: 'direction=backward&end=1700003600000000000&query=%7Bjob%3D%22varlogs%22%7D&start=1700000000000000000&step=1000ms',
    });
  });

  it('sends an instant query at the end of the range, with limit and direction', () => {
    const q = parseLokiQuery(query({ expr: 'count_over_time({a="b"}[5m])', queryType: 'instant', direction: 'forward', maxLines: 50 }));
    expect(lokiRequest(q)).toEqual({
      method: 'GET',
      path: 'loki/api/v1/query',
      query: 'direction=forward&limit=50&query=count_over_time%28%7Ba%3D%22b%22%7D%5B5m%5D%29&time=1700003600000000000',
    });
  });

  it('tags supporting queries as the original does', () => {
    const q = parseLokiQuery(query({ expr: 'x', supportingQueryType: 'logsVolume' }));
    expect(lokiRequest(q).headers).toEqual({ 'X-Query-Tags': 'Source=logvolhist' });
  });

  it.each([
    [{ expr: 'x', queryType: 'stream' }, 'invalid queryType: stream'],
    [{ expr: 'x', direction: 'sideways' }, 'invalid queryDirection: sideways'],
    [{ expr: 'x', step: 'soon' }, 'time: invalid duration "soon"'],
    [{ expr: 'x', maxLines: 'ten' }, 'invalid maxLines: "ten"'],
  ])('refuses %j', (model, message) => {
    expect(() => parseLokiQuery(query(model))).toThrow(message);
  });

  it('interpolates the built-in variables', () => {
    expect(interpolateLoki('rate({a="b"}[$__interval]) $__interval_ms $__range $__range_s $__range_ms $__auto ${__interval}', 15000, 3600000, 'range', 30000))
      .toBe('rate({a="b"}[15s]) 15000 3600s 3600 3600000 30s 15s');
    expect(interpolateLoki('sum_over_time([$__auto])', 1000, 7200000, 'instant', 1000)).toBe('sum_over_time([7200s])');
  });
});

describe('Loki answers as frames (frame.go)', () => {
  /** A streams answer of one stream whose lines are the given JSON string tokens, written as they are. */
  const streamsOf = (labels: Record<string, string>, rows: Array<[string, string]>) =>
    `{"status":"success","data":{"resultType":"streams","result":[{"stream":${JSON.stringify(labels)},"values":[${rows.map(([ts, token]) => `["${ts}",${token}]`).join(',')}]}]}}`;

  /**
   * What frame.go writes for these rows, built here from the parsed answer: each line as the SDK
   * writes a string, its id `<tsNs>_<fnv32(line + "_" + labels JSON)>`, repeats numbered.
   */
  function expectedColumns(body: string) {
    const stream = (JSON.parse(body) as { data: { result: Array<{ stream: Record<string, string>; values: string[][] }> } }).data.result[0];
    const labels = goJsonStringMap(stream.stream);
    const seen = new Map<string, number>();
    const ids = stream.values.map(([ts, line]) => {
      const id = `${ts}_${fnv32(Buffer.from(`${line}_${labels}`)).toString(16)}`;
      const count = seen.get(id) ?? 0;
      seen.set(id, count + 1);
      return count > 0 ? `${id}_${count}` : id;
    });
    return {
      labels: `[${stream.values.map(() => labels).join(',')}]`,
      line: `[${stream.values.map(([, line]) => goString(line)).join(',')}]`,
      tsNs: JSON.stringify(stream.values.map(([ts]) => ts)),
      id: JSON.stringify(ids),
    };
  }

  const writtenText = (field: Field) => Buffer.from(field.written!.json).toString('utf8');

  it('builds ids as the original: fnv32 of line_labels, repeats numbered', () => {
    // Rows and ids from the original's own streams test (testdata/streams_simple), one stream at a time.
    const one = streamsOf({ code: 'one",', location: 'moon🌙' }, [['1645030244810757120', '"log line error 1"']]);
    const two = streamsOf({ code: '",two', location: 'moon🌙' }, [
      ['1645030247027735040', '"log line info 1"'], ['1645030246277587968', '"log line info 2"'], ['1645030246277587968', '"log line info 2"'],
    ]);
    const q = parseLokiQuery(query({ expr: 'x' }));
    expect(lokiFrames(one, q)[0].fields[4].values).toEqual(['1645030244810757120_1d8c2178']);
    expect(lokiFrames(two, q)[0].fields[4].values).toEqual(['1645030247027735040_87a7aed2', '1645030246277587968_318d05c9', '1645030246277587968_318d05c9_1']);
    expect(fnv32(Buffer.from(''))).toBe(0x811c9dc5);
  });

  // Each line token as Loki may write it: lines taken as they are, `<>&` escaped on the copy, and
  // every form that has to be parsed first (other escapes, U+2028, invalid UTF-8).
  it.each([
    ['empty', '""'],
    ['plain', '"ascii line"'],
    ['short escapes', '"a \\" b \\\\ c \\n d \\t e \\r f \\b g \\f h"'],
    ['control escapes', '"\\u0000 \\u001f \\u007f"'],
    ['html raw', '"a <b> & c"'],
    ['html escaped', '"a \\u003cb\\u003e \\u0026 c"'],
    ['html escaped upper case', '"a \\u003Cb\\u003E"'],
    ['solidus escaped', '"a\\/b"'],
    ['letters escaped', '"\\u0041\\u00e9"'],
    ['raw UTF-8', '"moon🌙 é ü 漢字"'],
    ['surrogate pair escaped', '"\\ud83c\\udf19"'],
    ['lone surrogate escaped', '"lone \\ud800 one"'],
    ['line separators raw', '"a\u2028b\u2029c"'],
    ['line separators escaped', '"a\\u2028b\\u2029c"'],
    ['long', `"${'x'.repeat(5000)}"`],
  ])('writes and hashes a %s line as the original', (_name, token) => {
    const body = streamsOf({ job: 'é<>&', level: 'info' }, [['1700000000000000001', token], ['1700000000000000001', token], ['17', '"next"']]);
    const [frame] = lokiFrames(body, parseLokiQuery(query({ expr: 'x' })));
    const expected = expectedColumns(body);
    expect(writtenText(frame.fields[0])).toBe(expected.labels);
    expect(writtenText(frame.fields[2])).toBe(expected.line);
    expect(writtenText(frame.fields[3])).toBe(expected.tsNs);
    expect(writtenText(frame.fields[4])).toBe(expected.id);
    expect(frame.fields[1].values).toEqual([1700000000000, 1700000000000, 0]);
    expect(frame.fields[1].nanos).toEqual([1, 1, 17]);
  });

  it('reads times of every length between 19-digit ones, each up to its own closing quote', () => {
    // A short time's closing quote lies 19 characters before a later quote in the tsNs column:
    // the ids and times are still each row's own.
    const times = ['5', '123456789012345', '1700000000000000001', '12', '1234567890123456', '17000000000000000', '1700000000000000002', '0000000000000000003'];
    const body = streamsOf({ a: 'b' }, times.map((ts, i) => [ts, `"line ${i}"`]));
    const [frame] = lokiFrames(body, parseLokiQuery(query({ expr: 'x' })));
    expect(writtenText(frame.fields[4])).toBe(expectedColumns(body).id);
    expect(frame.fields[1].values).toEqual(times.map((ts) => Number(BigInt(ts) / 1_000_000n)));
    expect(frame.fields[1].nanos).toEqual(times.map((ts) => Number(BigInt(ts) % 1_000_000n)));
  });

  it('reads a timestamp\'s milliseconds and nanoseconds from its digits, leading zeros and all', () => {
    const body = streamsOf({ a: 'b' }, [['000012345678', '"x"'], ['0', '"y"'], ['1700000000000999999', '"z"']]);
    const [frame] = lokiFrames(body, parseLokiQuery(query({ expr: 'x' })));
    expect(writtenText(frame.fields[1])).toBe('[12,0,1700000000000]');
    expect(frame.fields[1].values).toEqual([12, 0, 1700000000000]);
    expect(frame.fields[1].nanos).toEqual([345678, 0, 999999]);
    expect(frame.fields[3].values).toEqual(['000012345678', '0', '1700000000000999999']);
  });

  it('hashes invalid UTF-8 as its replacement characters, as a string of the answer would', () => {
    const body = Buffer.concat([Buffer.from('{"data":{"resultType":"streams","result":[{"stream":{"a":"b"},"values":[["5","bad '), Buffer.from([0xff, 0xc3]), Buffer.from(' end"]]}]}}')]);
    const [frame] = lokiFrames(body, parseLokiQuery(query({ expr: 'x' })));
    expect(frame.fields[2].values).toEqual(['bad \ufffd\ufffd end']);
    expect(frame.fields[4].values).toEqual([`5_${fnv32(Buffer.from(`bad \ufffd\ufffd end_{"a":"b"}`)).toString(16)}`]);
  });

  it('builds the same frame from an answer it has to parse whole (result before its type, extra entry members)', () => {
    const q = parseLokiQuery(query({ expr: 'x' }));
    const usual = '{"status":"success","data":{"resultType":"streams","result":[{"stream":{"b":"2","a":"1"},"values":[["10","one <1>"],["20","two"]]}]}}';
    const unusual = '{"data":{"result":[{"stream":{"b":"2","a":"1"},"values":[["10","one <1>",{"structuredMetadata":{}}],["20","two"]]}],"resultType":"streams"},"status":"success"}';
    const encode = (body: string) => encodeFrame(lokiFrames(body, q)[0]);
    expect(encode(unusual)).toBe(encode(usual));
    expect(lokiFrames(usual, q)[0].fields[0].values).toEqual([{ a: '1', b: '2' }, { a: '1', b: '2' }]);
  });

  it('labels rows with the labels read before them, as the original reads a stream member by member', () => {
    const q = parseLokiQuery(query({ expr: 'x' }));
    const body = '{"data":{"resultType":"streams","result":[{"values":[["10","a"]],"stream":{"k":"1"}},{"values":[["20","b"]]},{"stream":{"k":"2"},"values":[["30","c"]]}]}}';
    expect(lokiFrames(body, q)[0].fields[0].values).toEqual([{}, { k: '1' }, { k: '2' }]);
  });

  it('turns streams into one log frame with nanosecond times, tsNs and ids', () => {
    const q = parseLokiQuery(query({ expr: '{job="varlogs"}' }));
    const frames = lokiFrames(fixture('streams.json'), q);
    expect(frames).toHaveLength(1);
    const [frame] = frames;
    expect(frame.meta?.custom).toEqual({ frameType: 'LabeledTimeValues' });
    expect(frame.meta?.executedQueryString).toBe('Expr: {job="varlogs"}');
    expect(frame.meta?.stats).toHaveLength(24);
    expect(frame.meta?.stats?.[0]).toEqual({ displayName: 'Summary: bytes processed per second', unit: 'Bps', value: 120933 });
    expect(frame.fields.map((f) => [f.name, f.type])).toEqual([
      ['labels', 'json.RawMessage'], ['Time', 'time.Time'], ['Line', 'string'], ['tsNs', 'string'], ['id', 'string'],
    ]);
    const [labels, time, line, tsNs, id] = frame.fields;
    expect(time.values).toEqual([1700000060123, 1700000030000, 1700000045000, 1700000045000, 1700000010000]);
    expect(time.nanos).toEqual([456789, 0, 1000, 1000, 0]);
    expect(tsNs.values[0]).toBe('1700000060123456789');
    expect(line.values[2]).toBe('level=info msg=started <ok> & ready');
    expect(Object.keys(labels.values[0] as object)).toEqual(['filename', 'job', 'level']);
    const ids = id.values as string[];
    expect(ids[3]).toBe(`${ids[2]}_1`);
    expect(new Set(ids).size).toBe(5);
    // The hash covers the labels as Go marshals them (`<`, `>`, `&` escaped in values).
    const json = goJsonStringMap({ job: 'varlogs', filename: '/var/log/app.log', level: 'info' });
    expect(ids[2]).toBe(`1700000045000001000_${fnv32(Buffer.from(`level=info msg=started <ok> & ready_${json}`)).toString(16)}`);
  });

  it('answers an empty stream result with no frames', () => {
    expect(lokiFrames(fixture('empty-streams.json'), parseLokiQuery(query({ expr: '{a="b"}' })))).toEqual([]);
  });

  it('turns a matrix into time series frames named like Prometheus', () => {
    const q = parseLokiQuery(query({ expr: 'rate({job="varlogs"}[1m])', step: '15s' }));
    const frames = lokiFrames(fixture('matrix.json'), q);
    expect(frames).toHaveLength(2);
    expect(frames[0].name).toBe('{job="varlogs", level="error"}');
    expect(frames[0].meta).toMatchObject({ type: 'timeseries-multi', executedQueryString: 'Expr: rate({job="varlogs"}[1m])\nStep: 15s' });
    expect(frames[0].meta?.stats).toHaveLength(5);
    expect(frames[0].fields[0]).toEqual({ name: 'Time', type: 'time.Time', config: { interval: 15000 }, values: [1700000000000, 1700000015000, 1700000030000] });
    expect(frames[0].fields[1]).toEqual({
      name: 'Value', type: 'float64', labels: { job: 'varlogs', level: 'error' },
      config: { displayNameFromDS: '{job="varlogs", level="error"}' }, values: [2, 0.5, NaN],
    });
    expect(frames[1].fields[0].values).toEqual([1700000000000, 1700000015500]);
    expect(frames[1].fields[1].values).toEqual([10, Infinity]);
  });

  it('names series by legendFormat, missing labels empty', () => {
    expect(lokiSeriesName({ level: 'error', job: 'x' }, '{{level}} of {{ job }} {{nope}}!')).toBe('error of x !');
    const frames = lokiFrames(fixture('vector.json'), parseLokiQuery(query({ expr: 'x', queryType: 'instant', legendFormat: 'L={{level}}' })));
    expect(frames.map((f) => f.name)).toEqual(['L=error', 'L=']);
    expect(frames[0].meta?.executedQueryString).toBe('Expr: x');
    expect(frames[0].fields[0].config).toBeUndefined();
    expect(lokiFrames(fixture('vector.json'), parseLokiQuery(query({ expr: 'x', queryType: 'instant' })))[1].name).toBe('{}');
  });

  it.each([
    ['not json', 'failed to parse the Loki response: '],
    ['{"status":"success"}', 'failed to parse the Loki response: no data'],
    ['{"data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"x"]]}]}}', 'failed to parse the Loki response: strconv.ParseFloat: parsing "x": invalid syntax'],
    ['{"data":{"resultType":"streams","result":[{"stream":{},"values":[["12a","l"]]}]}}', "failed to parse the Loki response: unexpected time format '12a' in response. response may have been truncated"],
    ['{"data":{"resultType":"weird","result":[]}}', 'failed to parse the Loki response: unknown result type: weird'],
  ])('refuses a malformed answer %s', (body, message) => {
    expect(() => lokiFrames(body, parseLokiQuery(query({ expr: 'x' })))).toThrow(message);
  });

  it('words Loki errors as the original: JSON message, else the body', () => {
    expect(lokiErrorMessage('{"message":"max entries limit per query exceeded"}')).toBe('max entries limit per query exceeded');
    expect(lokiErrorMessage(fixture('parse-error.txt'))).toBe('parse error at line 1, col 1: syntax error: unexpected IDENTIFIER\n');
    expect(lokiErrorMessage('{"message":""}')).toBe('{"message":""}');
  });
});

describe('Loki resources allow-list (loki.go callResource)', () => {
  it.each([
    ['labels?start=1&end=2', true],
    ['label/job/values?start=1', true],
    ['label/job/values', true],
    ['series?match[]={a="b"}', true],
    ['index/stats?query={a="b"}', true],
    ['labels', false],
    ['query_range?query=x', false],
    ['push', false],
    ['label/../../../config', false],
    ['label/%2e%2e/%2e%2e/x', false],
    ['', false],
  ])('%s -> %s', (url, allowed) => {
    expect(lokiResourceAllowed(url)).toBe(allowed);
  });
});

describe('Loki line ids (frame.go makeIdField)', () => {
  const q = parseLokiQuery(query({ expr: 'x' }));
  const body = (entries: string) => `{"data":{"resultType":"streams","result":[{"stream":{"a":"b"},"values":[${entries}]}]}}`;

  it('hashes the line with its labels and numbers repeats of the same time and hash', () => {
    const [frame] = lokiFrames(body('["5","same"],["5","same"],["6","same"],["5","same"],["5","other"]'), q);
    const hash = fnv32(Buffer.from('same_{"a":"b"}')).toString(16);
    const other = fnv32(Buffer.from('other_{"a":"b"}')).toString(16);
    expect(frame.fields[4].values).toEqual([`5_${hash}`, `5_${hash}_1`, `6_${hash}`, `5_${hash}_2`, `5_${other}`]);
  });

  it('continues FNV over a suffix from any state as a pass over its bytes does', () => {
    // Random prefixes and suffixes: every low byte of the state is met, each compared with the hash of the whole.
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const bytes = (length: number) => Buffer.from(Array.from({ length }, () => random() & 255));
    for (const suffixLength of [0, 1, 2, 55, 300]) {
      const suffix = bytes(suffixLength);
      const continued = new FnvSuffix(suffix);
      for (let i = 0; i < 600; i++) {
        const prefix = bytes(random() % 40);
        expect(continued.from(fnv32(prefix) | 0) >>> 0).toBe(fnv32(Buffer.concat([prefix, suffix])));
      }
    }
  });

  it('gives the rows of long streams the same ids as a pass over each line and its labels', () => {
    // Streams past the length from which ids are finished through `FnvSuffix`, repeats and all.
    const labels: Array<Record<string, string>> = [{ a: 'b', job: 'x<y>' }, { instance: '10.0.0.1:3100' }];
    const rows = (s: number) => Array.from({ length: 700 }, (_, i) => [String(1700000000000000000n + BigInt((i % 600) * 1000)), `line ${i % 600} of ${s}`]);
    const answer = { data: { resultType: 'streams', result: labels.map((stream, s) => ({ stream, values: rows(s) })) } };
    const [frame] = lokiFrames(JSON.stringify(answer), q);
    const seen = new Map<string, number>();
    const expected = answer.data.result.flatMap(({ stream, values }) => values.map(([ts, line]) => {
      const id = `${ts}_${fnv32(Buffer.from(`${line}_${goJsonStringMap(stream)}`)).toString(16)}`;
      const count = seen.get(id) ?? 0;
      seen.set(id, count + 1);
      return count > 0 ? `${id}_${count}` : id;
    }));
    expect(frame.fields[4].values).toEqual(expected);
    expect(expected.filter((id) => /_[0-9a-f]+_1$/.test(id))).toHaveLength(2 * 100);
  });

  it('gives 40,000 equal lines their ids in linear time', () => {
    const lines = (ts: (i: number) => string) => body(Array.from({ length: 40_000 }, (_, i) => `["${ts(i)}","the same line"]`).join(','));
    const equal = lines((i) => (i % 2 ? '1700000000000000000' : '1700000000000001000'));
    const distinct = lines((i) => String(1700000000000000000n + BigInt(i) * 1000n));
    const time = (text: string) => {
      const started = performance.now();
      const [frame] = lokiFrames(text, q);
      return { elapsed: performance.now() - started, ids: frame.fields[4].values as string[] };
    };
    time(distinct);
    const base = time(distinct);
    const same = time(equal);
    expect(new Set(same.ids).size).toBe(40_000);
    expect(same.ids[39_999]).toMatch(/_19999$/);
    // Probing past every earlier duplicate made this about 100 times slower than distinct lines.
    expect(same.elapsed).toBeLessThan(base.elapsed * 10 + 200);
  });

  it('keeps a __proto__ label and refuses a label that is not a string', () => {
    const [frame] = lokiFrames('{"data":{"resultType":"streams","result":[{"stream":{"__proto__":"p","z":null},"values":[["5","l"]]}]}}', q);
    expect(JSON.stringify(frame.fields[0].values[0])).toBe('{"__proto__":"p","z":""}');
    expect(() => lokiFrames('{"data":{"resultType":"streams","result":[{"stream":{"job":5},"values":[["5","l"]]}]}}', q))
      .toThrow('failed to parse the Loki response: stream labels: the value of "job" is not a string');
    expect(() => lokiFrames('{"data":{"resultType":"matrix","result":[{"metric":{"job":{"x":1}},"values":[[1,"1"]]}]}}', q))
      .toThrow('failed to parse the Loki response: series labels: the value of "job" is not a string');
  });

  it('reads timestamps as the original does and refuses the ones it would misread', () => {
    const [frame] = lokiFrames(body('["9999999999999999999","late"],["+5","signed"],["-1500000","before 1970"]'), q);
    expect(frame.fields[1].values).toEqual([9999999999999, 0, -2]);
    expect(frame.fields[1].nanos).toEqual([999999, 5, 500000]);
    expect(frame.fields[3].values).toEqual(['9999999999999999999', '+5', '-1500000']);
    for (const ts of ['99999999999999999999', '', '12a', '-1234567890123456789']) {
      expect(() => lokiFrames(body(`["${ts}","l"]`), q)).toThrow(`unexpected time format '${ts}' in response. response may have been truncated`);
    }
  });

  it('fills legends from own labels only', () => {
    const metric = '{"data":{"resultType":"vector","result":[{"metric":{"job":"a"},"value":[1,"1"]}]}}';
    expect(lokiFrames(metric, parseLokiQuery(query({ expr: 'x', legendFormat: '{{constructor}}-{{job}}', queryType: 'instant' })))[0].name).toBe('-a');
  });
});
