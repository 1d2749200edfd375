/**
 * A large answer of Prometheus's API shape (`{"data":{"resultType":...,"result":[...]}}`, Loki's
 * too) read in chunks of its `data.result` elements, so that reading 100,000 series gives the
 * event loop turns in between: where the elements lie is found by a quick pass over the bytes
 * (strings and brackets only, nothing parsed), then each chunk of elements is read by the kind's
 * byte reader as a document of its own, and the rest of the answer (status, warnings, the result
 * type) as one whose result is empty. The reader sees the same bytes as in one pass, so it takes
 * and refuses the same; anything this pass does not find simply (escaped keys, a result before
 * its type, a member twice) answers null, and the caller reads the whole answer at once. Pure.
 */

import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../json-bytes.ts';
import { drain, type Steps } from '../slices.ts';

export interface ResultLayout {
  /** The `resultType` value's bytes, quotes included. */
  resultType: [start: number, end: number];
  /** The result array's brackets. */
  open: number;
  close: number;
  /** Each element's bytes. */
  elements: Array<[start: number, end: number]>;
}

class NotSimple extends Error {}
const NOT_SIMPLE = new NotSimple();

/** Ends the pass: what it met is not what it takes (`simply` answers null). */
export function notSimple(): never {
  throw NOT_SIMPLE;
}

/** `steps`' answer, or null where it met what this pass does not take. */
export function* simply<T>(steps: Steps<T>): Steps<T | null> {
  try {
    return yield* steps;
  } catch (error) {
    if (error === NOT_SIMPLE) return null;
    throw error;
  }
}

export function ws(b: Uint8Array, i: number): number {
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  return i;
}

/** The index after the string opening at `i`. */
function stringEnd(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    if (b[i] === BACKSLASH) i++;
    else if (b[i] === QUOTE) return i + 1;
  }
  throw NOT_SIMPLE;
}

/** The index after the value starting at `i` (found by its brackets and strings, not checked). */
export function valueEnd(b: Uint8Array, i: number): number {
  const first = b[i];
  if (first === QUOTE) return stringEnd(b, i);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    while (i < b.length && b[i] !== COMMA && b[i] !== CLOSE_BRACE && b[i] !== CLOSE_BRACKET && b[i]! > 0x20) i++;
    return i;
  }
  let depth = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c === QUOTE) {
      i = stringEnd(b, i);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  throw NOT_SIMPLE;
}

/** A plain key (no escapes) at `i`, and the index after it. */
function key(b: Uint8Array, i: number): [string, number] {
  if (b[i] !== QUOTE) throw NOT_SIMPLE;
  const end = stringEnd(b, i);
  let text = '';
  for (let k = i + 1; k < end - 1; k++) {
    if (b[k] === BACKSLASH) throw NOT_SIMPLE;
    text += String.fromCharCode(b[k]!);
  }
  return [text, end];
}

/** The members of the object opening at `i`, each given its key and value start; answers the index after the object. */
export function* members(b: Uint8Array, i: number, member: (name: string, at: number) => Steps<number>): Steps<number> {
  if (b[i] !== OPEN_BRACE) throw NOT_SIMPLE;
  i = ws(b, i + 1);
  if (b[i] === CLOSE_BRACE) return i + 1;
  for (;;) {
    const [name, after] = key(b, i);
    i = ws(b, after);
    if (b[i] !== COLON) throw NOT_SIMPLE;
    i = ws(b, yield* member(name, ws(b, i + 1)));
    if (b[i] === CLOSE_BRACE) return i + 1;
    if (b[i] !== COMMA) throw NOT_SIMPLE;
    i = ws(b, i + 1);
  }
}

/** Where `data.resultType` and the elements of `data.result` lie, or null. */
export function resultLayout(body: Uint8Array): ResultLayout | null {
  return drain(resultLayoutSteps(body));
}

/** The same, stopping every few thousand elements. */
export function* resultLayoutSteps(body: Uint8Array): Steps<ResultLayout | null> {
  try {
    let resultType: [number, number] | undefined;
    let layout: ResultLayout | undefined;
    let seenData = false;
    yield* members(body, ws(body, 0), function* (name, at) {
      if (name !== 'data') return valueEnd(body, at);
      if (seenData) throw NOT_SIMPLE;
      seenData = true;
      return yield* members(body, at, function* (inner, from) {
        if (inner === 'result') {
          if (!resultType || layout || body[from] !== OPEN_BRACKET) throw NOT_SIMPLE;
          const elements: Array<[number, number]> = [];
          const close = yield* elementsOf(body, from, elements);
          layout = { resultType, open: from, close, elements };
          return close + 1;
        }
        const end = valueEnd(body, from);
        if (inner === 'resultType') {
          if (resultType || layout) throw NOT_SIMPLE;
          resultType = [from, end];
        }
        return end;
      });
    });
    return layout ?? null;
  } catch (error) {
    if (error === NOT_SIMPLE) return null;
    throw error;
  }
}

/** Elements found per stop. */
const ELEMENTS_PER_STEP = 4096;

/** The array's elements into `elements`; answers where its closing bracket is. */
export function* elementsOf(b: Uint8Array, open: number, elements: Array<[number, number]>): Steps<number> {
  let i = ws(b, open + 1);
  if (b[i] === CLOSE_BRACKET) return i;
  for (;;) {
    const end = valueEnd(b, i);
    elements.push([i, end]);
    if (elements.length % ELEMENTS_PER_STEP === 0) yield;
    i = ws(b, end);
    if (b[i] === CLOSE_BRACKET) return i;
    if (b[i] !== COMMA) throw NOT_SIMPLE;
    i = ws(b, i + 1);
  }
}

const PREFIX = Buffer.from('{"data":{"resultType":');
const RESULT = Buffer.from(',"result":[');
const SUFFIX = Buffer.from(']}}');

/** Documents of at most about `chunkBytes` of elements each, holding the layout's elements in order. */
export function* chunkDocuments(body: Uint8Array, layout: ResultLayout, chunkBytes: number): Generator<Buffer> {
  const type = body.subarray(layout.resultType[0], layout.resultType[1]);
  const elements = layout.elements;
  for (let first = 0; first < elements.length;) {
    let last = first;
    while (last + 1 < elements.length && elements[last + 1]![1] - elements[first]![0] <= chunkBytes) last++;
    yield Buffer.concat([PREFIX, type, RESULT, body.subarray(elements[first]![0], elements[last]![1]), SUFFIX]);
    first = last + 1;
  }
}

/** The answer with its result emptied: everything else in it, as it was. */
export function withoutResult(body: Uint8Array, layout: ResultLayout): Buffer {
  return Buffer.concat([body.subarray(0, layout.open + 1), body.subarray(layout.close)]);
}
