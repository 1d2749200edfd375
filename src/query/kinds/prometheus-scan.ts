/**
 * A Prometheus API answer read straight from its bytes, without `JSON.parse`: a range answer of
 * 100 series of 1,000 points is 200,000 small arrays and strings as parsed JSON, built only to be
 * converted to numbers and dropped. This reads each sample's time and value into two number
 * arrays as it goes, and only the small parts (labels, strings, warnings) through `JSON.parse`.
 *
 * It reads what Prometheus and its look-alikes write for `matrix` and `vector` results, with any
 * whitespace, unknown members skipped. Anything else (another result type, a malformed document,
 * a member it does not expect where samples are) answers `null`, and the caller parses the whole
 * document the general way. A table test holds both paths to the same frames. Pure.
 */

/** One series: its labels and its samples (times in epoch ms, values as `strconv.ParseFloat`). */
export interface ScannedSeries {
  metric: Record<string, string>;
  times: number[];
  values: number[];
}

export interface ScannedDocument {
  status?: string;
  errorType?: string;
  error?: string;
  resultType?: string;
  series: ScannedSeries[];
  warnings?: unknown[];
  infos?: unknown[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ZERO = 0x30;
const DOT = 0x2e;
const MINUS = 0x2d;

/** Powers of ten a double holds exactly: a mantissa below 2^53 divided by one is correctly rounded. */
const EXACT_POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

class NotPlain extends Error {}
const notPlain = new NotPlain();

/** Reads the document, or answers null when it is not the plain shape this reader takes. */
export function scanPrometheus(body: Uint8Array): ScannedDocument | null {
  try {
    return new Reader(body).document();
  } catch (error) {
    if (error === notPlain || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** `strconv.ParseFloat` of a sample value: numbers, `NaN`, `+Inf`, `-Inf`, `Inf`. */
export function parseSampleValue(text: string): number {
  switch (text) {
    case 'NaN': return NaN;
    case '+Inf': case 'Inf': case '+inf': case 'inf': return Infinity;
    case '-Inf': case '-inf': return -Infinity;
    default: return Number(text);
  }
}

class Reader {
  readonly #b: Uint8Array;
  #i = 0;
  readonly #latin1: (start: number, end: number) => string;
  readonly #utf8: (start: number, end: number) => string;

  constructor(body: Uint8Array) {
    this.#b = body;
    const buffer = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    this.#latin1 = (start, end) => buffer.latin1Slice(start, end);
    this.#utf8 = (start, end) => buffer.utf8Slice(start, end);
  }

  document(): ScannedDocument {
    const doc: ScannedDocument = { series: [] };
    this.#expect(OPEN_BRACE);
    this.#members(() => {
      const key = this.#key();
      switch (key) {
        case 'status': doc.status = this.#stringValue(); break;
        case 'errorType': doc.errorType = this.#stringValue(); break;
        case 'error': doc.error = this.#stringValue(); break;
        case 'warnings': doc.warnings = this.#json() as unknown[]; break;
        case 'infos': doc.infos = this.#json() as unknown[]; break;
        case 'data': this.#data(doc); break;
        default: this.#json();
      }
    });
    this.#ws();
    if (this.#i !== this.#b.length) throw notPlain;
    if (doc.warnings !== undefined && !Array.isArray(doc.warnings)) throw notPlain;
    if (doc.infos !== undefined && !Array.isArray(doc.infos)) throw notPlain;
    return doc;
  }

  #data(doc: ScannedDocument): void {
    this.#ws();
    if (this.#b[this.#i] !== OPEN_BRACE) throw notPlain;
    this.#i++;
    this.#members(() => {
      const key = this.#key();
      if (key === 'resultType') doc.resultType = this.#stringValue();
      else if (key === 'result') {
        // Only a matrix or vector whose type came first is read here.
        if (doc.resultType !== 'matrix' && doc.resultType !== 'vector') throw notPlain;
        this.#result(doc, doc.resultType === 'matrix');
      } else this.#json();
    });
  }

  #result(doc: ScannedDocument, matrix: boolean): void {
    this.#expect(OPEN_BRACKET);
    this.#elements(() => {
      const series: ScannedSeries = { metric: {}, times: [], values: [] };
      let sampled = false;
      this.#expect(OPEN_BRACE);
      this.#members(() => {
        const key = this.#key();
        if (key === 'metric') {
          const metric = this.#json();
          if (typeof metric !== 'object' || metric === null || Array.isArray(metric)) throw notPlain;
          series.metric = metric as Record<string, string>;
        } else if (matrix && key === 'values') {
          if (sampled) throw notPlain;
          sampled = true;
          this.#expect(OPEN_BRACKET);
          this.#elements(() => this.#sample(series));
        } else if (!matrix && key === 'value') {
          if (sampled) throw notPlain;
          sampled = true;
          this.#sample(series);
        } else this.#json();
      });
      doc.series.push(series);
    });
  }

  /** `[<seconds>, "<value>"]`. */
  #sample(series: ScannedSeries): void {
    this.#expect(OPEN_BRACKET);
    this.#ws();
    series.times.push(this.#timeMs());
    this.#ws();
    if (this.#b[this.#i++] !== COMMA) throw notPlain;
    this.#ws();
    series.values.push(this.#sampleValue());
    this.#ws();
    if (this.#b[this.#i++] !== CLOSE_BRACKET) throw notPlain;
  }

  /** Seconds as a JSON number to epoch ms, as `time.UnixMilli(int64(f*1000))`. */
  #timeMs(): number {
    const b = this.#b;
    const start = this.#i;
    let i = start;
    let whole = 0;
    while (i < b.length) {
      const c = b[i]! - ZERO;
      if (c < 0 || c > 9) break;
      whole = whole * 10 + c;
      i++;
    }
    const digits = i - start;
    const next = b[i];
    // Whole seconds of up to 15 digits are exact: the common case of a step in whole seconds.
    if (digits > 0 && digits <= 15 && next !== DOT && next !== 0x65 && next !== 0x45 && !(digits > 1 && b[start] === ZERO)) {
      this.#i = i;
      return whole * 1000;
    }
    const end = this.#numberEnd(start);
    const text = this.#latin1(start, end);
    if (!JSON_NUMBER.test(text)) throw notPlain;
    const seconds = Number(text);
    this.#i = end;
    return Math.trunc(seconds * 1000);
  }

  #numberEnd(start: number): number {
    const b = this.#b;
    let i = start;
    while (i < b.length) {
      const c = b[i]!;
      if ((c >= ZERO && c <= ZERO + 9) || c === DOT || c === MINUS || c === 0x2b || c === 0x65 || c === 0x45) i++;
      else break;
    }
    return i;
  }

  /**
   * A sample value string. A plain decimal of at most 15 significant digits is built from its
   * digits: the mantissa and the power of ten are exact doubles, so one division is correctly
   * rounded, the same double `Number()` finds. Everything else goes through `Number()`.
   */
  #sampleValue(): number {
    const b = this.#b;
    if (b[this.#i] !== QUOTE) throw notPlain;
    const start = this.#i + 1;
    let i = start;
    const negative = b[i] === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let significant = 0;
    let scale = 0;
    let seenDot = false;
    let digits = 0;
    for (; i < b.length; i++) {
      const c = b[i]!;
      if (c >= ZERO && c <= ZERO + 9) {
        digits++;
        if (seenDot) scale++;
        if (mantissa !== 0 || c !== ZERO) significant++;
        mantissa = mantissa * 10 + (c - ZERO);
      } else if (c === DOT && !seenDot) seenDot = true;
      else break;
    }
    if (b[i] === QUOTE && digits > 0 && significant <= 15 && scale <= 22 && !(seenDot && b[i - 1] === DOT)) {
      this.#i = i + 1;
      const value = scale === 0 ? mantissa : mantissa / EXACT_POWERS[scale]!;
      return negative ? -value : value;
    }
    // NaN, ±Inf, exponents, long mantissas, escapes: the general parse of the string's text.
    let end = start;
    while (end < b.length && b[end] !== QUOTE) {
      if (b[end] === BACKSLASH) throw notPlain;
      end++;
    }
    if (end >= b.length) throw notPlain;
    this.#i = end + 1;
    return parseSampleValue(this.#latin1(start, end));
  }

  /** `{ member (, member)* }` after the brace; calls `member` for each. */
  #members(member: () => void): void {
    this.#ws();
    if (this.#b[this.#i] === CLOSE_BRACE) {
      this.#i++;
      return;
    }
    for (;;) {
      member();
      this.#ws();
      const c = this.#b[this.#i++];
      if (c === CLOSE_BRACE) return;
      if (c !== COMMA) throw notPlain;
    }
  }

  /** `[ element (, element)* ]` after the bracket; calls `element` for each. */
  #elements(element: () => void): void {
    this.#ws();
    if (this.#b[this.#i] === CLOSE_BRACKET) {
      this.#i++;
      return;
    }
    for (;;) {
      this.#ws();
      element();
      this.#ws();
      const c = this.#b[this.#i++];
      if (c === CLOSE_BRACKET) return;
      if (c !== COMMA) throw notPlain;
    }
  }

  /** A member's key and its colon. */
  #key(): string {
    this.#ws();
    const key = this.#stringValue();
    this.#ws();
    if (this.#b[this.#i++] !== COLON) throw notPlain;
    this.#ws();
    return key;
  }

  /** A JSON string; escapes through `JSON.parse`. */
  #stringValue(): string {
    this.#ws();
    const b = this.#b;
    if (b[this.#i] !== QUOTE) throw notPlain;
    const start = this.#i;
    let i = start + 1;
    let escaped = false;
    while (i < b.length && b[i] !== QUOTE) {
      if (b[i] === BACKSLASH) {
        escaped = true;
        i++;
      }
      i++;
    }
    if (i >= b.length) throw notPlain;
    this.#i = i + 1;
    return escaped ? (JSON.parse(this.#utf8(start, i + 1)) as string) : this.#utf8(start + 1, i);
  }

  /** Any JSON value, parsed (used for the small parts only). */
  #json(): unknown {
    const start = this.#i;
    this.#skip();
    return JSON.parse(this.#utf8(start, this.#i));
  }

  /** Past any JSON value, found by its brackets and strings (`#json` then checks it). */
  #skip(): void {
    this.#ws();
    const b = this.#b;
    let depth = 0;
    for (;;) {
      if (this.#i >= b.length) throw notPlain;
      const c = b[this.#i]!;
      if (c === QUOTE) this.#stringValue();
      else {
        if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
        else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
        else if (depth === 0 && c === COMMA) return;
        if (depth < 0) throw notPlain;
        this.#i++;
      }
      if (depth === 0) {
        // A scalar at depth 0 ends at a delimiter; a container ends at its close.
        const next = b[this.#i];
        if (c === CLOSE_BRACE || c === CLOSE_BRACKET || c === QUOTE) return;
        if (next === COMMA || next === CLOSE_BRACE || next === CLOSE_BRACKET || next === undefined || next <= 0x20) return;
      }
    }
  }

  #expect(c: number): void {
    this.#ws();
    if (this.#b[this.#i] !== c) throw notPlain;
    this.#i++;
  }

  #ws(): void {
    const b = this.#b;
    let c = b[this.#i];
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++this.#i];
  }
}
