import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE, skipWs } from './json-bytes.ts';
import { AnswerError } from './answer-error.ts';
import type { Steps } from './slices.ts';

/**
 * `JSON.parse` of a large upstream answer in pieces, stopping (`yield`) between them, so a 64 MiB
 * answer never holds the event loop for the whole parse. Runs of small elements of an array (or
 * members of an object) are found by their brackets and strings and parsed together by one
 * `JSON.parse` of about `PIECE_BYTES`; a container larger than that is opened and read the same
 * way, one level down. The value is the one `JSON.parse` answers (members in order, the last of a
 * repeated key kept, `__proto__` an own member); text that is not JSON throws the same
 * `AnswerError('invalid JSON')` as `parseAnswerJson`. Pure.
 */

/** Bytes of JSON text parsed at once. */
export const PIECE_BYTES = 256 * 1024;

export interface SlicedParseOptions {
  /** Bytes parsed at once (tests use a few to open every container). */
  pieceBytes?: number;
  /**
   * Arrays whose first element is a number that `odd` finds odd, from its literal text and value:
   * what only the text tells (InfluxDB's times are read as Go reads an int64 literal). Kept as a
   * set of the few odd ones, so the many plain ones cost nothing to remember.
   */
  oddFirstNumbers?: { odd: (literal: string, value: number) => boolean; arrays: WeakSet<object> };
}

/** An array or object being filled, with the key its next value goes to. */
interface Open {
  value: unknown[] | Record<string, unknown>;
  array: boolean;
}

const invalid = () => new AnswerError('invalid JSON');

export function* parseJsonSteps(body: Buffer, options: SlicedParseOptions = {}): Steps<unknown> {
  const piece = options.pieceBytes ?? PIECE_BYTES;
  const oddFirst = options.oddFirstNumbers;
  const reviver = oddFirst
    ? function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
      if (key === '0' && typeof value === 'number' && Array.isArray(this) && context?.source !== undefined && oddFirst.odd(context.source, value)) oddFirst.arrays.add(this);
      return value;
    } as (key: string, value: unknown) => unknown
    : undefined;
  const parse = (start: number, end: number, open = '', close = ''): unknown => {
    try {
      return JSON.parse(open + body.toString('utf8', start, end) + close, reviver);
    } catch {
      throw invalid();
    }
  };

  let at = skipWs(body, 0);
  // A small answer, or one that is no container (a long string): one piece.
  const rootEnd = body[at] === OPEN_BRACKET || body[at] === OPEN_BRACE ? valueEnd(body, at, piece) : body.length;
  if (rootEnd !== -1) return parse(0, body.length);
  const stack: Open[] = [];
  const openAt = (c: number) => {
    const open: Open = c === OPEN_BRACKET ? { value: [], array: true } : { value: Object.create(null) as Record<string, unknown>, array: false };
    stack.push(open);
    return open;
  };
  const root = openAt(body[at]!).value;
  at++;
  // After an opening bracket: its first element, or its close.
  let first = true;
  while (stack.length > 0) {
    yield;
    const top = stack[stack.length - 1]!;
    at = skipWs(body, at);
    const closer = top.array ? CLOSE_BRACKET : CLOSE_BRACE;
    if (body[at] === closer && first) {
      at++;
      closeTop();
      continue;
    }
    if (!first) {
      if (body[at] === closer) {
        at++;
        closeTop();
        continue;
      }
      if (body[at] !== COMMA) throw invalid();
      at = skipWs(body, at + 1);
    }
    first = false;
    // A run of small elements (or members) up to about one piece, parsed at once.
    const runStart = at;
    let runEnd = -1;
    let count = 0;
    let next = at;
    for (;;) {
      let valueStart = next;
      let key: string | undefined;
      if (!top.array) {
        if (body[next] !== QUOTE) throw invalid();
        const keyEnd = stringEnd(body, next);
        if (keyEnd === -1) throw invalid();
        if (count === 0) key = parse(next, keyEnd + 1) as string;
        valueStart = skipWs(body, keyEnd + 1);
        if (body[valueStart] !== COLON) throw invalid();
        valueStart = skipWs(body, valueStart + 1);
      }
      let end = valueEnd(body, valueStart, runEnd === -1 ? piece : piece - (next - runStart));
      if (end === valueStart) throw invalid();
      const c = body[valueStart];
      // A string (or other scalar) longer than a piece is one piece of its own.
      if (end === -1 && count === 0 && c !== OPEN_BRACKET && c !== OPEN_BRACE) end = valueEnd(body, valueStart, Infinity);
      if (end === -1) {
        if (count > 0) break;
        if (c !== OPEN_BRACKET && c !== OPEN_BRACE) throw invalid();
        // One element larger than a piece: opened, and read one level down.
        const child = openAt(c);
        if (top.array) (top.value as unknown[]).push(child.value);
        else defineMember(top.value as Record<string, unknown>, key!, child.value);
        at = valueStart + 1;
        first = true;
        break;
      }
      count++;
      runEnd = end;
      next = skipWs(body, end);
      if (body[next] !== COMMA || next - runStart >= piece) break;
      const after = skipWs(body, next + 1);
      if (body[after] === (top.array ? CLOSE_BRACKET : CLOSE_BRACE)) break;
      next = after;
    }
    if (count === 0) continue;
    at = runEnd;
    if (top.array) {
      const values = parse(runStart, runEnd, '[', ']') as unknown[];
      const target = top.value as unknown[];
      for (const v of values) target.push(v);
      // An opened array's first element was read in its first run, into that run's array.
      if (oddFirst && target.length === values.length && oddFirst.arrays.has(values)) oddFirst.arrays.add(target);
    } else {
      const members = parse(runStart, runEnd, '{', '}') as Record<string, unknown>;
      const target = top.value as Record<string, unknown>;
      for (const k of Object.keys(members)) defineMember(target, k, members[k]);
    }
  }
  if (skipWs(body, at) !== body.length) throw invalid();
  return root;

  function closeTop(): void {
    const closed = stack.pop()!;
    // Objects are built without a prototype (so `__proto__` stays a member); JSON.parse's have one.
    if (!closed.array) Object.setPrototypeOf(closed.value, Object.prototype);
    first = false;
  }
}

/** An own, enumerable member, as `JSON.parse` makes it (a repeated key keeps its first place and its last value). */
function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The closing quote of the string opening at `start`, or -1. */
function stringEnd(b: Buffer, start: number): number {
  let i = start + 1;
  while (i < b.length) {
    const c = b[i]!;
    if (c === QUOTE) return i;
    i += c === BACKSLASH ? 2 : 1;
  }
  return -1;
}

/**
 * Where the value starting at `start` ends (past its last byte), found within `limit` bytes by its
 * brackets and strings; -1 when it runs longer (or is cut off). Its text is checked by `JSON.parse`.
 */
function valueEnd(b: Buffer, start: number, limit: number): number {
  const stop = Math.min(b.length, start + Math.max(limit, 1));
  let depth = 0;
  let i = start;
  while (i < stop) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i);
      if (end === -1 || end >= stop) return -1;
      i = end + 1;
      if (depth === 0) return i;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return i;
    } else if (depth === 0 && (c === COMMA || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) return i;
    i++;
  }
  // A scalar that runs to the end of the body ends there.
  return depth === 0 && i === b.length && i > start ? i : -1;
}
