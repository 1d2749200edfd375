import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { AnswerError } from '../../src/query/answer-error.ts';
import { parseJsonSteps } from '../../src/query/json-sliced.ts';
import { drain } from '../../src/query/slices.ts';

// A large answer parsed in pieces is the value JSON.parse answers, or the same refusal; pieces of a
// few bytes open every container, so the pieces' seams are everywhere.

function sliced(text: string, pieceBytes: number, oddFirstNumbers?: { odd: (literal: string, value: number) => boolean; arrays: WeakSet<object> }): unknown {
  try {
    return drain(parseJsonSteps(Buffer.from(text), { pieceBytes, oddFirstNumbers }));
  } catch (error) {
    if (error instanceof AnswerError) return `error: ${error.message}`;
    throw error;
  }
}
function whole(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return 'error: invalid JSON';
  }
}
/** The value as JSON with each object's own keys and prototype said, so a lost `__proto__` or a null prototype shows. */
function shape(value: unknown): string {
  return JSON.stringify(value, function (_key, v: unknown) {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return { proto: Object.getPrototypeOf(v) === Object.prototype, members: Object.getOwnPropertyNames(v).map((k) => [k, (v as Record<string, unknown>)[k]]) };
    }
    return v;
  });
}

describe('parseJsonSteps', () => {
  it.each([
    ['an array of pairs', '[[1,1700000000],[null,1700000001],[2.5e3,1700000002]]'],
    ['objects in an array', '[{"target":"a","datapoints":[[1,2]]},{"target":"b","tags":{"x":"y"},"datapoints":[]}]'],
    ['repeated keys keep their first place, their last value', '{"a":1,"b":2,"a":3,"c":{"d":1,"d":[2]}}'],
    ['__proto__ as a member', '{"__proto__":{"x":1},"a":{"__proto__":[1]}}'],
    ['integer-like keys', '{"b":1,"2":2,"a":3,"1":4}'],
    ['whitespace everywhere', ' \n[ 1 , { "a" : [ true , false , null ] } , "s" ] \t'],
    ['strings with brackets and escapes', '["[", "]", "{\\"}", "\\\\", "\\u005d", "é"]'],
    ['a long string', `["${'x'.repeat(100)}", 1]`],
    ['a scalar root', '12'],
    ['a string root', '"abc"'],
    ['empty containers', '[[],{},[[]],{"a":{}}]'],
    ['a trailing comma', '[1,2,]'],
    ['a leading comma', '[,1]'],
    ['a trailing comma in an object', '{"a":1,}'],
    ['a missing colon', '{"a" 1}'],
    ['an unclosed array', '[1,[2,3]'],
    ['an unclosed string', '["abc]'],
    ['text after the value', '[1,2] x'],
    ['two values', '[1] [2]'],
    ['a bare word', '[1,nul]'],
    ['an empty body', ''],
    ['a key that is no string', '{1:2}'],
  ])('%s: as JSON.parse, whatever the piece size', (_name, text) => {
    for (const piece of [1, 3, 8, 1 << 20]) expect([piece, shape(sliced(text, piece))]).toEqual([piece, shape(whole(text))]);
  });

  it('answers as JSON.parse on any JSON text, and refuses what it refuses (property)', () => {
    const texts = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v, null, Math.random() < 0.5 ? 1 : 0)),
      // Broken texts: a JSON text with a character dropped or added.
      fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat(), fc.constantFrom('', ',', ']', '}', '[', '{', '"', ':', ' '))
        .map(([v, at, c]) => {
          const t = JSON.stringify(v);
          const i = at % (t.length + 1);
          return t.slice(0, i) + c + t.slice(i + (c === '' ? 1 : 0));
        }),
    );
    fc.assert(fc.property(texts, fc.integer({ min: 1, max: 64 }), (text, piece) => {
      expect(shape(sliced(text, piece))).toBe(shape(whole(text)));
    }), { numRuns: 2000 });
  });

  it("tells the arrays whose first number's literal is odd, the opened ones too", () => {
    const odd = (literal: string) => literal.includes('.');
    const text = '{"values":[[1700000000000000000,1],[12.50,"x"],["t",3],[-0,2.5]]}';
    for (const piece of [4, 1 << 20]) {
      const arrays = new WeakSet<object>();
      const value = sliced(text, piece, { odd, arrays }) as { values: unknown[][] };
      expect(value.values.map((row) => arrays.has(row))).toEqual([false, true, false, false]);
    }
    const arrays = new WeakSet<object>();
    const opened = sliced('[5.0,1,2,3,4,5,6,7,8,9]', 2, { odd, arrays }) as unknown[];
    expect(arrays.has(opened)).toBe(true);
    expect(arrays.has(sliced('[5,1.5,2,3,4,5,6,7,8,9]', 2, { odd, arrays }) as unknown[])).toBe(false);
  });

  it('stops between pieces: a large answer is many steps', () => {
    const text = JSON.stringify([{ target: 'a', datapoints: Array.from({ length: 50_000 }, (_, i) => [i / 7, 1_700_000_000 + i]) }]);
    const steps = parseJsonSteps(Buffer.from(text), { pieceBytes: 16 * 1024 });
    let stops = 0;
    let step = steps.next();
    while (!step.done) {
      stops++;
      step = steps.next();
    }
    expect(stops).toBeGreaterThan(text.length / (16 * 1024));
    expect(step.value).toEqual(JSON.parse(text));
  });
});
