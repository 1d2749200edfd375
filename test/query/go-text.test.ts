import { describe, expect, it } from '@jest/globals';
import { encodeValues, formatInterval, goDuration, goJsonStringMap, goQuote, parseInterval } from '../../src/query/kinds/go-text.ts';

describe('Go text forms the kinds put on the wire', () => {
  it.each([
    [0, '0s'], [1, '1ms'], [200, '200ms'], [1000, '1s'], [1500, '1.5s'], [15000, '15s'], [42000, '42s'],
    [60000, '1m0s'], [90000, '1m30s'], [3600000, '1h0m0s'], [3661001, '1h1m1.001s'], [86400000, '24h0m0s'],
  ])('Duration.String(%d ms) = %s', (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });

  it.each([
    [0, '1ms'], [1, '1ms'], [999, '999ms'], [1000, '1s'], [59999, '59s'], [60000, '1m'], [5400000, '1h'],
    [86400000, '1d'], [365 * 86400000, '1y'],
  ])('FormatInterval(%d ms) = %s', (ms, text) => {
    expect(formatInterval(ms)).toBe(text);
  });

  it.each([
    ['15s', 15000], ['30', 30000], ['1m', 60000], ['1m30s', 90000], ['1.5s', 1500], ['200ms', 200], ['<10s>', 10000],
    ['1d', 86400000], ['1w', 604800000], ['2h', 7200000],
  ])('parses the interval %s', (text, ms) => {
    expect(parseInterval(text)).toBe(ms);
  });

  it.each(['', 'abc', '5x', '1m abc'])('refuses the interval %j as Go words it', (text) => {
    expect(() => parseInterval(text)).toThrow(`time: invalid duration ${JSON.stringify(text)}`);
  });

  it('encodes url.Values as Go: keys sorted, QueryEscape', () => {
    expect(encodeValues({ query: '{job="a b"} |= "x!"', direction: 'backward', limit: undefined, step: '15000ms' }))
      .toBe('direction=backward&query=%7Bjob%3D%22a+b%22%7D+%7C%3D+%22x%21%22&step=15000ms');
    expect(encodeValues({ q: "SELECT * FROM \"cpu\" WHERE a='(b)*'" })).toBe('q=SELECT+%2A+FROM+%22cpu%22+WHERE+a%3D%27%28b%29%2A%27');
  });

  it.each([
    ['plain', '"plain"'], ['a"b', '"a\\"b"'], ['back\\slash', '"back\\\\slash"'], ['tab\there', '"tab\\there"'],
    ['nul\u0000', '"nul\\x00"'], ['moon🌙', '"moon🌙"'],
  ])('%%q of %j', (value, quoted) => {
    expect(goQuote(value)).toBe(quoted);
  });

  it('marshals a label map as Go: sorted keys, HTML-safe', () => {
    expect(goJsonStringMap({ location: 'moon🌙', code: 'one",' })).toBe('{"code":"one\\",","location":"moon🌙"}');
    expect(goJsonStringMap({ b: '<a&b>', a: 'line\nbreak\u2028' })).toBe('{"a":"line\\nbreak\\u2028","b":"\\u003ca\\u0026b\\u003e"}');
    expect(goJsonStringMap({})).toBe('{}');
  });
});
