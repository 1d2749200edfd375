import { describe, expect, test } from '@jest/globals';
import { containsPattern, DEFAULT_PER_PAGE, escapeLike, pageWindow } from '../../src/services/paging.ts';

describe('listing search patterns', () => {
  test.each([
    ['', '%%'],
    ['ann', '%ann%'],
    ['50%_off', '%50\\%\\_off%'],
    ['back\\slash', '%back\\\\slash%'],
  ])('containsPattern(%j) is %j', (text, pattern) => {
    expect(containsPattern(text)).toBe(pattern);
  });

  test('escapeLike takes only the wildcards and the escape literally', () => {
    expect(escapeLike('a_b%c\\d*e?')).toBe('a\\_b\\%c\\\\d*e?');
  });
});

describe('pageWindow', () => {
  test.each([
    // paging, first page, expected
    [{}, 1, { page: 1, perPage: DEFAULT_PER_PAGE, offset: 0 }],
    [{ page: 3, perPage: 10 }, 1, { page: 3, perPage: 10, offset: 20 }],
    [{ page: 3, perPage: 10 }, 0, { page: 3, perPage: 10, offset: 30 }],
    [{ page: 0, perPage: 0 }, 1, { page: 1, perPage: DEFAULT_PER_PAGE, offset: 0 }],
    [{ page: -5, perPage: -1 }, 0, { page: 0, perPage: DEFAULT_PER_PAGE, offset: 0 }],
    [{ page: null, perPage: null }, 1, { page: 1, perPage: DEFAULT_PER_PAGE, offset: 0 }],
  ] as const)('%j from page %i', (paging, firstPage, expected) => {
    expect(pageWindow(paging, firstPage)).toEqual(expected);
  });

  test('a far page keeps the offset an exact integer', () => {
    expect(pageWindow({ page: 2 ** 52, perPage: 5000 }, 1).offset).toBe(Number.MAX_SAFE_INTEGER);
  });

  test('a listing may name its own default size', () => {
    expect(pageWindow({ page: 2 }, 1, 50)).toEqual({ page: 2, perPage: 50, offset: 50 });
  });
});
