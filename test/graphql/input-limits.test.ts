import { describe, expect, it, jest } from '@jest/globals';
import { GraphQLID, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString } from 'graphql';
import { DEFAULT_MAX_CHARS, inputLimitViolation, jsonBytesOver, MAX_CHARS_BY_NAME, MAX_JSON_BYTES } from '../../src/graphql/input-limits.ts';
import { getSchema } from '../../src/graphql/schema/index.ts';

const JSONObject = getSchema().getType('JSONObject') as never;
const Input = new GraphQLInputObjectType({
  name: 'LimitsTestInput',
  fields: { name: { type: GraphQLString }, url: { type: GraphQLString }, jsonData: { type: JSONObject }, tags: { type: new GraphQLList(GraphQLString) }, n: { type: GraphQLInt } },
});
const args = [
  { name: 'uid', type: new GraphQLNonNull(GraphQLString) },
  { name: 'id', type: GraphQLID },
  { name: 'input', type: Input },
];
const long = (n: number) => 'x'.repeat(n);

describe('inputLimitViolation', () => {
  it.each([
    ['everything within bounds', { uid: long(DEFAULT_MAX_CHARS), id: long(DEFAULT_MAX_CHARS), input: { name: 'a', url: long(MAX_CHARS_BY_NAME.url!), tags: ['a'], n: 5 } }, null],
    ['absent and null values', { uid: 'u', input: { name: null } }, null],
    ['a top-level argument', { uid: long(DEFAULT_MAX_CHARS + 1) }, `uid is too long (at most ${DEFAULT_MAX_CHARS} characters)`],
    ['an ID argument', { uid: 'u', id: long(DEFAULT_MAX_CHARS + 1) }, `id is too long (at most ${DEFAULT_MAX_CHARS} characters)`],
    ['an input field, named by itself', { uid: 'u', input: { name: long(DEFAULT_MAX_CHARS + 1) } }, `name is too long (at most ${DEFAULT_MAX_CHARS} characters)`],
    ['a listed name has its own bound', { uid: 'u', input: { url: long(MAX_CHARS_BY_NAME.url! + 1) } }, `url is too long (at most ${MAX_CHARS_BY_NAME.url} characters)`],
    ['an item of a list', { uid: 'u', input: { tags: ['a', long(DEFAULT_MAX_CHARS + 1)] } }, `tags is too long (at most ${DEFAULT_MAX_CHARS} characters)`],
    ['a JSON document', { uid: 'u', input: { jsonData: { k: long(MAX_JSON_BYTES) } } }, `jsonData is too large (at most ${MAX_JSON_BYTES} bytes of JSON)`],
  ])('%s', (_name, values, message) => {
    const error = inputLimitViolation(args, values);
    expect(error?.message ?? null).toBe(message);
    if (error) expect(error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
  });
});

describe('jsonBytesOver', () => {
  it.each<[string, unknown]>([
    ['a string', 'héllo €'],
    ['an object', { a: 1, b: [true, null, 'x', 2.5], 'ké': { c: 'd' } }],
    ['an empty array', []],
    ['nested arrays', [[[1]], [], ['a', 'b']]],
  ])('agrees with the JSON text of %s at its exact size', (_name, value) => {
    const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    expect(jsonBytesOver(value, bytes)).toBe(false);
    expect(jsonBytesOver(value, bytes - 1)).toBe(true);
  });

  it('never measures a string longer than the room left', () => {
    const huge = 'x'.repeat(50_000_000);
    const measured: number[] = [];
    const byteLength = Buffer.byteLength;
    const spy = jest.spyOn(Buffer, 'byteLength').mockImplementation((text, encoding) => {
      measured.push(typeof text === 'string' ? text.length : -1);
      return byteLength(text, encoding);
    });
    try {
      expect(jsonBytesOver({ a: huge, b: [huge, huge] }, 1024)).toBe(true);
      expect(jsonBytesOver({ small: 'é'.repeat(10), a: huge }, 1024)).toBe(true);
    } finally {
      spy.mockRestore();
    }
    expect(measured.every((length) => length >= 0 && length <= 1024)).toBe(true);
    expect(measured.length).toBeGreaterThan(0);
  });
});
