import { describe, expect, it } from '@jest/globals';
import { AnswerError, checkDepth, isEngineError, MAX_VALUE_DEPTH, ownMessage, parseAnswerJson } from '../../src/query/answer-error.ts';

/** The message a call threw, or null. */
function thrown(run: () => unknown): { type: string; message: string } | null {
  try {
    run();
    return null;
  } catch (error) {
    return { type: (error as Error).constructor.name, message: (error as Error).message };
  }
}

describe('upstream answers refused with our own words', () => {
  it('parses JSON, and says invalid JSON in a fixed message rather than the engine\'s', () => {
    expect(parseAnswerJson('{"a":[1,null]}')).toEqual({ a: [1, null] });
    expect(thrown(() => parseAnswerJson('{"a":'))).toEqual({ type: 'AnswerError', message: 'invalid JSON' });
  });

  it('refuses values nesting deeper than the limit, at any depth without recursion', () => {
    const nest = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`) as unknown;
    expect(thrown(() => checkDepth(nest(MAX_VALUE_DEPTH), 'the tag'))).toBeNull();
    expect(thrown(() => checkDepth(nest(MAX_VALUE_DEPTH + 1), 'the tag'))).toEqual({ type: 'AnswerError', message: 'the tag nests deeper than 64 levels' });
    expect(thrown(() => checkDepth(nest(200_000), 'the answer'))).toEqual({ type: 'AnswerError', message: 'the answer nests deeper than 64 levels' });
    expect(thrown(() => checkDepth({ a: { b: 'deep enough' } }, 'x'))).toBeNull();
  });
});

describe('ownMessage', () => {
  it('gives the message of an error raised on purpose', () => {
    expect(ownMessage(new AnswerError('bad answer'))).toBe('bad answer');
    expect(ownMessage(new Error('plain'))).toBe('plain');
  });

  it.each([new TypeError('x is undefined'), new RangeError('Maximum call stack size exceeded'), new SyntaxError('Unexpected token'), new ReferenceError('y'), new URIError('URI malformed'), new EvalError('e')])(
    'throws an engine error on: %s', (error) => {
      expect(isEngineError(error)).toBe(true);
      expect(() => ownMessage(error)).toThrow(error);
    },
  );

  it('throws on what is no Error at all', () => {
    expect(isEngineError('text')).toBe(false);
    expect(() => ownMessage('text')).toThrow();
  });
});
