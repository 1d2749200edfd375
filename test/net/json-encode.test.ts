import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeJson, encodeList, jsonBody } from '../../src/net/json-encode.ts';

// Every encoding is JSON.stringify's text as UTF-8, byte for byte; only how it is made differs.

const bytesOf = (encoded: ReturnType<typeof encodeJson>) => ('text' in encoded ? Buffer.from(encoded.text) : Buffer.concat(encoded.chunks));

describe('encodeList', () => {
  it('encodes as JSON.stringify does: items without JSON as null, escapes, items larger than a chunk', () => {
    const items: unknown[] = [
      undefined, () => 1, Symbol('s'), null, 0, -1.5, 'text', '"quoted" \\ \n\u0001', '\ud800 lone surrogate', 'pair 😀',
      new Date(0), { toJSON: () => 'own JSON' }, [1, [2, { b: undefined }]], 'é'.repeat(70_000), 'x'.repeat(200_000),
    ];
    const list = Array.from({ length: 300 }, (_, i) => items[i % items.length]);
    const { chunks, byteLength } = encodeList(list);
    const bytes = Buffer.concat(chunks);
    expect(bytes.length).toBe(byteLength);
    expect(bytes.equals(Buffer.from(JSON.stringify(list)))).toBe(true);
    expect(Buffer.concat(encodeList([]).chunks).toString()).toBe('[]');
  });
});

describe('encodeJson', () => {
  const page = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `RGF0YVNvdXJjZTo${i}`, databaseId: i, name: `source ${i} ✓`, jsonData: { a: [i, null] } }));

  it.each<[string, unknown]>([
    ['a GraphQL answer with a long page below envelopes', { data: { viewer: { currentOrganization: { dataSources: { totalCount: 300, nodes: page(300), pageInfo: { hasNextPage: false, endCursor: null } } } } } }],
    ['members JSON leaves out, beside a long list', { a: undefined, f: () => 1, s: Symbol('s'), list: page(200), z: 'last', u: undefined }],
    ['a long list first and last, and numeric keys ordered as JSON orders them', { 2: page(130), b: 1, 1: page(128), a: 'x' }],
    ['an envelope without a prototype', Object.assign(Object.create(null) as object, { data: { nodes: page(150) } })],
    ['a long list inside an object with toJSON is its toJSON\'s', { data: { toJSON: () => ({ replaced: true }), nodes: page(200) }, other: page(128) }],
    ['a long list under an object of many keys is written with it', { entity: { k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: page(200) }, other: page(130) }],
    ['a long list of long lists', { data: Array.from({ length: 130 }, () => page(2)) }],
    ['a class instance is written as JSON writes it', { data: new (class { x = 1; list = page(200); })(), more: page(128) }],
    ['nested deeper than envelopes are followed', { a: { b: { c: { d: { e: { f: { g: { h: { i: { nodes: page(200) } } } } } } } } }, top: page(128) }],
  ])('%s', (_, value) => {
    const encoded = encodeJson(value);
    expect('chunks' in encoded).toBe(true);
    expect(bytesOf(encoded).equals(Buffer.from(JSON.stringify(value)))).toBe(true);
    if ('chunks' in encoded) expect(encoded.byteLength).toBe(Buffer.byteLength(JSON.stringify(value)));
  });

  it.each<[string, unknown]>([
    ['a short answer', { data: { dataSource: { id: 'x', name: 'y' } } }],
    ['a short list', page(127)],
    ['a long list only below an entity of many keys', { data: { k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: page(200) } }],
    ['null', null],
    ['a string', 'text'],
  ])('%s: its text, as JSON.stringify writes it', (_, value) => {
    expect(encodeJson(value)).toEqual({ text: JSON.stringify(value) });
  });

  it('any JSON value encodes to JSON.stringify\'s bytes', () => {
    const long = fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 128, maxLength: 160 });
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 2 }), long, fc.dictionary(fc.string(), tie('node'), { maxKeys: 4 })),
    })).node;
    fc.assert(fc.property(value, (v) => {
      expect(bytesOf(encodeJson(v)).equals(Buffer.from(JSON.stringify(v)))).toBe(true);
    }), { numRuns: 150 });
  });

  it('jsonBody: a short answer as text, a long one as bytes', () => {
    expect(jsonBody({ data: { a: 1 } })).toBe('{"data":{"a":1}}');
    const large = { data: 'x'.repeat(40_000) };
    const body = jsonBody(large);
    expect(Buffer.isBuffer(body) && body.equals(Buffer.from(JSON.stringify(large)))).toBe(true);
    const listing = { data: { nodes: page(150) } };
    const listed = jsonBody(listing);
    expect(Buffer.isBuffer(listed) && listed.equals(Buffer.from(JSON.stringify(listing)))).toBe(true);
  });
});
