import { describe, expect, it } from '@jest/globals';
import { encodeValues, goJsonStringMap, goQuote } from '../../src/query/go-text.ts';

describe('Go text forms the kinds put on the wire', () => {
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
