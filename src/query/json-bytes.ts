/**
 * A JSON reader over an upstream answer's bytes, for the kinds' readers of large answers
 * (kinds/prometheus/scan.ts, kinds/influxdb/scan.ts): they walk the shapes they expect member by member and
 * read numbers straight from their digits, so 100,000 samples never become 100,000 small arrays
 * and strings. Anything unexpected throws `NOT_PLAIN`, and `readPlain` answers null so the caller
 * falls back to `JSON.parse`; a value the original refuses (a kind's `AnswerError`) goes up as it
 * is. Small parts (labels, tags, strings) go through `JSON.parse`. Pure.
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const ZERO = 0x30;
export const DOT = 0x2e;
export const MINUS = 0x2d;
const NINE = 0x39;

/** A byte that can be part of a JSON number's text. */
const isNumberByte = (c: number) => (c >= ZERO && c <= NINE) || c === DOT || c === MINUS || c === 0x2b || c === 0x65 || c === 0x45;

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Powers of ten a double holds exactly: a mantissa below 2^53 divided by one is correctly rounded. */
const EXACT_POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** Thrown (never seen outside `readPlain`) where the document is not the shape a reader takes. */
export const NOT_PLAIN = new Error('not the plain shape');

/** `read` over `body`, or null when it meets anything it does not take. */
export function readPlain<T>(body: Uint8Array, read: (reader: JsonBytes) => T): T | null {
  try {
    const reader = new JsonBytes(body);
    const value = read(reader);
    reader.ws();
    if (reader.at !== body.length) return null;
    return value;
  } catch (error) {
    if (error === NOT_PLAIN || error instanceof SyntaxError) return null;
    throw error;
  }
}

/**
 * A plain decimal of at most 15 significant digits built from its digits: the mantissa and the
 * power of ten are exact doubles, so one division is correctly rounded, the same double
 * `Number()` finds. Answers undefined for anything else (exponents, longer mantissas, other text).
 */
function exactDecimal(b: Uint8Array, start: number, end: number): number | undefined {
  let i = start;
  const negative = b[i] === MINUS;
  if (negative) i++;
  let mantissa = 0;
  let significant = 0;
  let scale = 0;
  let seenDot = false;
  let digits = 0;
  for (; i < end; i++) {
    const c = b[i]!;
    if (c >= ZERO && c <= ZERO + 9) {
      digits++;
      if (seenDot) scale++;
      if (mantissa !== 0 || c !== ZERO) significant++;
      mantissa = mantissa * 10 + (c - ZERO);
    } else if (c === DOT && !seenDot) seenDot = true;
    else return undefined;
  }
  if (digits === 0 || significant > 15 || scale > 22 || (seenDot && b[end - 1] === DOT)) return undefined;
  const value = scale === 0 ? mantissa : mantissa / EXACT_POWERS[scale]!;
  return negative ? -value : value;
}

export class JsonBytes {
  readonly bytes: Uint8Array;
  /** The read position. */
  at = 0;
  readonly #buffer: Buffer;

  constructor(body: Uint8Array) {
    this.bytes = body;
    this.#buffer = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  }

  latin1(start: number, end: number): string {
    return this.#buffer.toString('latin1', start, end);
  }

  utf8(start: number, end: number): string {
    return this.#buffer.toString('utf8', start, end);
  }

  /** The next byte after whitespace, not consumed. */
  peek(): number | undefined {
    this.ws();
    return this.bytes[this.at];
  }

  expect(c: number): void {
    this.ws();
    if (this.bytes[this.at] !== c) throw NOT_PLAIN;
    this.at++;
  }

  /** `{ member (, member)* }`, the brace already read; calls `member` with each key. */
  members(member: (key: string) => void): void {
    this.ws();
    if (this.bytes[this.at] === CLOSE_BRACE) {
      this.at++;
      return;
    }
    for (;;) {
      const key = this.string();
      this.ws();
      if (this.bytes[this.at++] !== COLON) throw NOT_PLAIN;
      this.ws();
      member(key);
      this.ws();
      const c = this.bytes[this.at++];
      if (c === CLOSE_BRACE) return;
      if (c !== COMMA) throw NOT_PLAIN;
    }
  }

  /** `[ element (, element)* ]`, the bracket already read; calls `element` for each. */
  elements(element: () => void): void {
    this.ws();
    if (this.bytes[this.at] === CLOSE_BRACKET) {
      this.at++;
      return;
    }
    for (;;) {
      this.ws();
      element();
      this.ws();
      const c = this.bytes[this.at++];
      if (c === CLOSE_BRACKET) return;
      if (c !== COMMA) throw NOT_PLAIN;
    }
  }

  /** A JSON string; escapes through `JSON.parse`. */
  string(): string {
    this.ws();
    const b = this.bytes;
    if (b[this.at] !== QUOTE) throw NOT_PLAIN;
    const start = this.at;
    const end = this.#stringEnd(start);
    this.at = end + 1;
    return this.#escaped ? (JSON.parse(this.#buffer.toString('utf8', start, end + 1)) as string) : this.#buffer.toString('utf8', start + 1, end);
  }

  /** Whether the last string read had escapes. */
  #escaped = false;

  /** The closing quote of the string opening at `start`. */
  #stringEnd(start: number): number {
    const b = this.bytes;
    let i = start + 1;
    this.#escaped = false;
    while (i < b.length && b[i] !== QUOTE) {
      if (b[i] === BACKSLASH) {
        this.#escaped = true;
        i++;
      }
      i++;
    }
    if (i >= b.length) throw NOT_PLAIN;
    return i;
  }

  /**
   * Past a string that must hold no escapes (a sample value); answers where its text starts, and
   * leaves `at` after the closing quote, so the text ends at `at - 1`.
   */
  plainStringStart(): number {
    if (this.bytes[this.at] !== QUOTE) throw NOT_PLAIN;
    const start = this.at + 1;
    const end = this.#stringEnd(this.at);
    if (this.#escaped) throw NOT_PLAIN;
    this.at = end + 1;
    return start;
  }

  /**
   * A sample value string (`"12.5"`, `"NaN"`): plain decimals from their digits, anything else
   * through `parse` of the string's text.
   */
  quotedNumber(parse: (text: string) => number): number {
    const start = this.plainStringStart();
    return this.numberIn(start, this.at - 1, parse);
  }

  /** The number the text from `start` to `end` holds: plain decimals from their digits, anything else through `parse`. */
  numberIn(start: number, end: number, parse: (text: string) => number): number {
    return exactDecimal(this.bytes, start, end) ?? parse(this.utf8(start, end));
  }

  /** Whether the last number `number` read was a plain integer literal of at most 15 digits (so within int64). */
  integral = false;

  /**
   * A JSON number: ±Infinity where its digits overflow a double (Go's decoders refuse those).
   * A plain decimal of at most 15 significant digits is read in one pass over its digits (the
   * same double `exactDecimal` makes); anything else the general way.
   */
  number(): number {
    const b = this.bytes;
    const start = this.at;
    let i = start;
    let c = b[i];
    const negative = c === MINUS;
    if (negative) c = b[++i];
    let mantissa = 0;
    let significant = 0;
    if (c === ZERO) c = b[++i];
    else if (c !== undefined && c > ZERO && c <= NINE) {
      do {
        mantissa = mantissa * 10 + (c - ZERO);
        significant++;
        c = b[++i];
      } while (c !== undefined && c >= ZERO && c <= NINE);
    } else return this.#generalNumber(start);
    let scale = 0;
    if (c === DOT) {
      c = b[++i];
      if (c === undefined || c < ZERO || c > NINE) return this.#generalNumber(start);
      do {
        if (mantissa !== 0 || c !== ZERO) significant++;
        mantissa = mantissa * 10 + (c - ZERO);
        scale++;
        c = b[++i];
      } while (c !== undefined && c >= ZERO && c <= NINE);
    }
    // Anything else of a number (`01`, an exponent, a second dot or sign) or too many digits for one exact division.
    if (significant > 15 || scale > 22 || (c !== undefined && isNumberByte(c))) return this.#generalNumber(start);
    this.at = i;
    this.integral = scale === 0;
    const value = scale === 0 ? mantissa : mantissa / EXACT_POWERS[scale]!;
    return negative ? -value : value;
  }

  /** Any other number text, checked against JSON's grammar (the one-pass reading takes every plain decimal it could read exactly). */
  #generalNumber(start: number): number {
    this.integral = false;
    const end = this.#numberEnd(start);
    this.at = end;
    const text = this.latin1(start, end);
    if (!JSON_NUMBER.test(text)) throw NOT_PLAIN;
    return Number(text);
  }

  #numberEnd(start: number): number {
    const b = this.bytes;
    let i = start;
    while (i < b.length && isNumberByte(b[i]!)) i++;
    return i;
  }

  /** Any JSON value, parsed (for the small parts). */
  json(): unknown {
    this.ws();
    const start = this.at;
    this.#skip();
    return JSON.parse(this.#buffer.toString('utf8', start, this.at));
  }

  /** Past any JSON value, found by its brackets and strings (`json` then checks it). */
  #skip(): void {
    const b = this.bytes;
    let depth = 0;
    for (;;) {
      if (this.at >= b.length) throw NOT_PLAIN;
      const c = b[this.at]!;
      if (c === QUOTE) this.at = this.#stringEnd(this.at) + 1;
      else {
        if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
        else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
        else if (depth === 0 && c === COMMA) return;
        if (depth < 0) throw NOT_PLAIN;
        this.at++;
      }
      if (depth === 0) {
        // A container or string ends at its close; a scalar at the next delimiter.
        if (c === CLOSE_BRACE || c === CLOSE_BRACKET || c === QUOTE) return;
        const next = b[this.at];
        if (next === COMMA || next === CLOSE_BRACE || next === CLOSE_BRACKET || next === undefined || next <= 0x20) return;
      }
    }
  }

  ws(): void {
    this.at = skipWs(this.bytes, this.at);
  }
}

/** The position of the first byte from `at` that is not JSON whitespace. */
export function skipWs(bytes: Uint8Array, at: number): number {
  let c = bytes[at];
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = bytes[++at];
  return at;
}
