import { isUtf8 } from 'node:buffer';
import { writtenField, type Frame, type FrameMeta, type WrittenColumn } from '../../frames/frame.ts';
import { goString } from '../../frames/encode.ts';
import { ColumnWriter } from '../../frames/column-writer.ts';
import { goJsonStringMap, sortedLabels } from '../../go-text.ts';
import { readLabels } from '../../labels.ts';
import {
  BACKSLASH, CLOSE_BRACKET, COMMA, JsonBytes, NOT_PLAIN, OPEN_BRACE, OPEN_BRACKET, QUOTE, ZERO, readPlain,
} from '../../json-bytes.ts';

/**
 * A Loki log query's answer as the original's one log frame (frame.go: `labels`, `Time`, `Line`,
 * `tsNs`, `id`), written column by column as bytes. Parsing 5,000 lines into strings only to
 * write them out again costs three times what the upstream answer's own parse and re-serialize
 * does, so `scanLogStreams` reads the answer's bytes: each line's JSON string is copied as it is
 * when it already reads as the SDK writes it (the common case), and hashed for its id over its
 * decoded bytes on the way. Lines it does not take as they are (escapes the SDK writes otherwise,
 * invalid UTF-8) go through `JSON.parse` one by one; a document it does not take at all answers
 * null, and the caller builds the same frame from the parsed answer with `LogFrameWriter`. Pure.
 */

const UNDERSCORE = 0x5f;

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1 (Go's `hash/fnv.New32`, not FNV-1a) over UTF-8 bytes. */
export function fnv32(bytes: Uint8Array): number {
  return fnvOver(FNV_OFFSET, bytes, 0, bytes.length) >>> 0;
}

function fnvOver(state: number, bytes: Uint8Array, start: number, end: number): number {
  let h = state;
  for (let i = start; i < end; i++) h = Math.imul(h, FNV_PRIME) ^ bytes[i]!;
  return h;
}

/** Go's `%x` of a uint32, written at `at`; answers the position after it. */
function writeHex(out: Buffer, at: number, value: number): number {
  let digits = 1;
  while (digits < 8 && value >>> (4 * digits) !== 0) digits++;
  for (let d = digits - 1; d >= 0; d--) out[at++] = HEX[(value >>> (4 * d)) & 15]!;
  return at;
}

const HEX = Buffer.from('0123456789abcdef');

/** The log frame's columns, a row at a time; rows carry the labels of the last `stream` call. */
export class LogFrameWriter {
  readonly #labels: ColumnWriter;
  readonly #lines: ColumnWriter;
  readonly #tsNs: ColumnWriter;
  /** Epoch milliseconds, written from the timestamps' digits. */
  readonly #times: ColumnWriter;
  readonly #nanos: number[] = [];
  #anyNanos = false;
  /** Per row: its id's hash, and where its tsNs digits start in the tsNs column and how many. */
  readonly #hashes: number[] = [];
  readonly #tsAt: number[] = [];
  readonly #tsLength: number[] = [];
  #labelsJson: Buffer = Buffer.from('{}');

  constructor(sizeHint: number) {
    this.#labels = new ColumnWriter(sizeHint / 2);
    this.#lines = new ColumnWriter(sizeHint);
    this.#tsNs = new ColumnWriter(sizeHint / 4);
    this.#times = new ColumnWriter(sizeHint / 5);
  }

  /** The stream whose rows follow: its labels as Go marshals the map (sorted, HTML-safe). */
  stream(labels: Readonly<Record<string, string>>): void {
    this.#labelsJson = Buffer.from(goJsonStringMap(sortedLabels(labels)));
  }

  /**
   * A row's timestamp, from `length` decimal digits of nanoseconds at `at` in `bytes`: false,
   * and nothing written, when they are not (0 or over 19 digits, anything but digits). Up to 19
   * digits is every time the original reads as the number written (the 19-digit ones past int64
   * through its seconds-and-nanoseconds split); `signedTimestamp` takes the signed ones.
   */
  timestamp(bytes: Uint8Array, at: number, length: number): boolean {
    if (length === 0 || length > 19) return false;
    let ns = 0;
    for (let i = 0; i < length; i++) {
      const digit = bytes[at + i]! - ZERO;
      if (digit < 0 || digit > 9) return false;
      if (i >= length - 6) ns = ns * 10 + digit;
    }
    // The milliseconds are the digits above the last six, as a JSON number: no leading zeros.
    let first = at;
    const msEnd = at + length - 6;
    while (first < msEnd && bytes[first] === ZERO) first++;
    const times = this.#times.row(Math.max(1, msEnd - first));
    if (first >= msEnd) times[this.#times.at++] = ZERO;
    else for (let i = first; i < msEnd; i++) times[this.#times.at++] = bytes[i]!;
    this.#nanos.push(ns);
    if (ns !== 0) this.#anyNanos = true;
    const out = this.#tsNs.row(length + 2);
    let o = this.#tsNs.at;
    out[o++] = QUOTE;
    this.#tsAt.push(o);
    this.#tsLength.push(length);
    for (let i = 0; i < length; i++) out[o++] = bytes[at + i]!;
    out[o++] = QUOTE;
    this.#tsNs.at = o;
    return true;
  }

  /**
   * A signed timestamp (`-5`, `+1700000000000000000`), which the original's `ParseInt` reads when
   * it has at most 18 characters: epoch ms rounded down and the nanoseconds above them, as the SDK
   * writes a time before 1970. The text is kept as it came, for `tsNs` and the id.
   */
  signedTimestamp(text: string): boolean {
    if (!/^[+-][0-9]{1,17}$/.test(text)) return false;
    const ns = BigInt(text);
    const ms = ns / 1_000_000n - (ns % 1_000_000n < 0n ? 1n : 0n);
    const nanos = Number(ns - ms * 1_000_000n);
    this.#times.text(String(ms));
    this.#nanos.push(nanos);
    if (nanos !== 0) this.#anyNanos = true;
    const json = Buffer.from(`"${text}"`, 'latin1');
    const out = this.#tsNs.row(json.length);
    this.#tsAt.push(this.#tsNs.at + 1);
    this.#tsLength.push(text.length);
    this.#tsNs.at += json.copy(out, this.#tsNs.at);
    return true;
  }

  /** A row's line from its JSON token `bytes[start..end]` (quotes included), already as the SDK writes it; `hash` is FNV over its text so far. */
  lineToken(bytes: Buffer, start: number, end: number, html: boolean, hash: number): void {
    const size = end - start;
    const out = this.#lines.row(html ? size * 6 : size);
    let o = this.#lines.at;
    if (!html) o += bytes.copy(out, o, start, end);
    else {
      for (let i = start; i < end; i++) {
        const c = bytes[i]!;
        const escaped = c === 0x3c ? ESCAPED_LT : c === 0x3e ? ESCAPED_GT : c === 0x26 ? ESCAPED_AMP : undefined;
        if (escaped === undefined) out[o++] = c;
        else o += escaped.copy(out, o);
      }
    }
    this.#lines.at = o;
    this.#endRow(hash);
  }

  /** A row's line as text: written as the SDK writes a string, hashed over its UTF-8 bytes. */
  line(text: string): void {
    const json = goString(text);
    this.#lines.row(json.length * 3);
    this.#lines.at += this.#lines.bytes.write(json, this.#lines.at);
    const bytes = Buffer.from(text);
    this.#endRow(fnvOver(FNV_OFFSET, bytes, 0, bytes.length));
  }

  /** A row with a time of the stream and a line: its labels, and its id's hash finished with `_` and them. */
  #endRow(lineHash: number): void {
    const labels = this.#labelsJson;
    this.#labels.copy(labels, 0, labels.length);
    const h = Math.imul(lineHash, FNV_PRIME) ^ UNDERSCORE;
    this.#hashes.push(fnvOver(h, labels, 0, labels.length) >>> 0);
  }

  /** The frame of the rows written (the caller answers no frame for an answer without streams, as the original). */
  frame(meta: FrameMeta): Frame {
    const time = writtenField('Time', 'time.Time', this.#times.done());
    if (this.#anyNanos) time.nanos = this.#nanos;
    return {
      meta,
      fields: [
        writtenField('labels', 'json.RawMessage', this.#labels.done()),
        time,
        writtenField('Line', 'string', this.#lines.done()),
        writtenField('tsNs', 'string', this.#tsNs.done()),
        writtenField('id', 'string', this.#ids()),
      ],
    };
  }

  /**
   * frame.go `makeIdField`: `<tsNs>_<fnv32(line + "_" + labelsJSON) in hex>`, and `_N` on the
   * N-th repeat of the same id within the frame. Ids are kept in an open-addressed table keyed by
   * the hash and the tsNs together, one slot per distinct id holding its count so far: a row costs
   * one probe however often its id repeats (40,000 equal lines are 40,000 probes, not 800 million).
   */
  #ids(): WrittenColumn {
    const rows = this.#hashes.length;
    const ts = this.#tsNs.bytes;
    const column = new ColumnWriter(this.#tsNs.at + rows * 12);
    const slots = new Int32Array(2 ** Math.ceil(Math.log2(rows * 2 + 2)));
    const counts = new Int32Array(slots.length);
    const mask = slots.length - 1;
    for (let i = 0; i < rows; i++) {
      const hash = this.#hashes[i]!;
      const at = this.#tsAt[i]!;
      const length = this.#tsLength[i]!;
      let slot = (fnvOver(hash, ts, at, at + length) >>> 0) & mask;
      for (let row = slots[slot]!; row !== 0; row = slots[slot]!) {
        if (this.#hashes[row - 1] === hash && sameBytes(ts, this.#tsAt[row - 1]!, this.#tsLength[row - 1]!, at, length)) break;
        slot = (slot + 1) & mask;
      }
      if (slots[slot] === 0) slots[slot] = i + 1;
      const count = counts[slot]!++;
      const out = column.row(length + 24);
      let o = column.at;
      out[o++] = QUOTE;
      o += ts.copy(out, o, at, at + length);
      out[o++] = UNDERSCORE;
      o = writeHex(out, o, hash);
      if (count > 0) {
        out[o++] = UNDERSCORE;
        o += out.write(String(count), o, 'latin1');
      }
      out[o++] = QUOTE;
      column.at = o;
    }
    return column.done();
  }
}

const ESCAPED_LT = Buffer.from('\\u003c');
const ESCAPED_GT = Buffer.from('\\u003e');
const ESCAPED_AMP = Buffer.from('\\u0026');

function sameBytes(bytes: Uint8Array, a: number, aLength: number, b: number, bLength: number): boolean {
  if (aLength !== bLength) return false;
  for (let i = 0; i < aLength; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/** How the line scan treats each byte: 0 copied and hashed as it is. */
const PLAIN = 0;
const IS_QUOTE = 1;
const IS_BACKSLASH = 2;
const IS_CONTROL = 3;
const IS_HTML = 4;
const IS_HIGH = 5;
const BYTE_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) BYTE_CLASS[c] = IS_CONTROL;
for (let c = 0x80; c < 0x100; c++) BYTE_CLASS[c] = IS_HIGH;
BYTE_CLASS[QUOTE] = IS_QUOTE;
BYTE_CLASS[BACKSLASH] = IS_BACKSLASH;
BYTE_CLASS[0x3c] = IS_HTML;
BYTE_CLASS[0x3e] = IS_HTML;
BYTE_CLASS[0x26] = IS_HTML;

/** What the short escapes stand for (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`: the ones the SDK writes); -1 for the rest. */
const SHORT_ESCAPE = new Int16Array(256).fill(-1);
SHORT_ESCAPE[QUOTE] = QUOTE;
SHORT_ESCAPE[BACKSLASH] = BACKSLASH;
SHORT_ESCAPE[0x62] = 0x08;
SHORT_ESCAPE[0x66] = 0x0c;
SHORT_ESCAPE[0x6e] = 0x0a;
SHORT_ESCAPE[0x72] = 0x0d;
SHORT_ESCAPE[0x74] = 0x09;

/** A lowercase hex digit's value, -1 for anything else (the SDK writes `\u` escapes in lowercase). */
const HEX_VALUE = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) HEX_VALUE['0123456789abcdef'.charCodeAt(d)] = d;

/** Control characters the SDK writes as `\u00xx` (the others have short escapes). */
const isUnicodeEscapedControl = (code: number) => code < 0x20 && code !== 0x08 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d;

/**
 * The line whose JSON string opens at `start`: copied and hashed when it already reads as the SDK
 * writes it (`<`, `>`, `&` escaped on the copy), else parsed and written as text. Answers the
 * position after its closing quote.
 */
function scanLine(bytes: Buffer, start: number, writer: LogFrameWriter): number {
  let i = start + 1;
  let h = FNV_OFFSET;
  let html = false;
  let high = false;
  for (;;) {
    const c = bytes[i]!;
    const kind = BYTE_CLASS[c];
    if (kind === PLAIN) {
      h = Math.imul(h, FNV_PRIME) ^ c;
      i++;
    } else if (kind === IS_QUOTE) break;
    else if (kind === IS_BACKSLASH) {
      const e = bytes[i + 1]!;
      const short = SHORT_ESCAPE[e]!;
      if (short >= 0) {
        h = Math.imul(h, FNV_PRIME) ^ short;
        i += 2;
        continue;
      }
      if (e !== 0x75) return lineAsText(bytes, start, writer);
      const code = (HEX_VALUE[bytes[i + 2]!]! << 12) | (HEX_VALUE[bytes[i + 3]!]! << 8) | (HEX_VALUE[bytes[i + 4]!]! << 4) | HEX_VALUE[bytes[i + 5]!]!;
      if (code < 0) return lineAsText(bytes, start, writer);
      if (isUnicodeEscapedControl(code) || code === 0x3c || code === 0x3e || code === 0x26) h = Math.imul(h, FNV_PRIME) ^ code;
      else if (code === 0x2028 || code === 0x2029) {
        h = Math.imul(h, FNV_PRIME) ^ 0xe2;
        h = Math.imul(h, FNV_PRIME) ^ 0x80;
        h = Math.imul(h, FNV_PRIME) ^ (code === 0x2028 ? 0xa8 : 0xa9);
      } else return lineAsText(bytes, start, writer);
      i += 6;
    } else if (kind === IS_HTML) {
      html = true;
      h = Math.imul(h, FNV_PRIME) ^ c;
      i++;
    } else if (kind === IS_HIGH) {
      // U+2028 and U+2029 are escaped by the SDK.
      if (c === 0xe2 && bytes[i + 1] === 0x80 && (bytes[i + 2] === 0xa8 || bytes[i + 2] === 0xa9)) return lineAsText(bytes, start, writer);
      high = true;
      h = Math.imul(h, FNV_PRIME) ^ c;
      i++;
    } else throw NOT_PLAIN; // a raw control character, or the end of the document
  }
  // Invalid UTF-8 becomes U+FFFD as a string: the text path does that.
  if (high && !isUtf8(bytes.subarray(start + 1, i))) return lineAsText(bytes, start, writer);
  writer.lineToken(bytes, start, i + 1, html, h);
  return i + 1;
}

/** The line opening at `start` parsed to text and written as the SDK writes it. */
function lineAsText(bytes: Buffer, start: number, writer: LogFrameWriter): number {
  let i = start + 1;
  while (i < bytes.length && bytes[i] !== QUOTE) i += bytes[i] === BACKSLASH ? 2 : 1;
  if (i >= bytes.length) throw NOT_PLAIN;
  writer.line(JSON.parse(bytes.toString('utf8', start, i + 1)) as string);
  return i + 1;
}

/** A Loki streams answer read from its bytes, or null when it is not the plain shape this reader takes. */
export interface ScannedStreams {
  writer: LogFrameWriter;
  /** Streams in `result`: none means no frame. */
  streams: number;
  stats: unknown;
}

/**
 * `{"status":..., "data":{"resultType":"streams","result":[{"stream":{...},"values":[["<ns>","<line>"],...]}],"stats":{...}}}`,
 * members in any order but `resultType` before `result` and a stream's labels before its values;
 * anything else answers null.
 */
export function scanLogStreams(body: Uint8Array, into?: LogFrameWriter): ScannedStreams | null {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return readPlain(bytes, (r) => {
    // `into`: a large answer read in chunks writes every chunk's rows into one frame.
    const scanned: ScannedStreams = { writer: into ?? new LogFrameWriter(bytes.length), streams: 0, stats: undefined };
    let streams = false;
    r.expect(OPEN_BRACE);
    r.members((key) => {
      if (key !== 'data') {
        r.json();
        return;
      }
      r.expect(OPEN_BRACE);
      r.members((member) => {
        if (member === 'resultType') streams = r.string() === 'streams';
        else if (member === 'result') {
          if (!streams) throw NOT_PLAIN;
          r.expect(OPEN_BRACKET);
          r.elements(() => {
            scanned.streams++;
            readStream(r, bytes, scanned.writer);
          });
        } else if (member === 'stats') scanned.stats = r.json();
        else r.json();
      });
    });
    if (!streams) throw NOT_PLAIN;
    return scanned;
  });
}

function readStream(r: JsonBytes, bytes: Buffer, writer: LogFrameWriter): void {
  let labelled = false;
  let valued = false;
  r.expect(OPEN_BRACE);
  r.members((key) => {
    if (key === 'stream') {
      // Labels after the values (or twice) would label rows already written.
      if (labelled || valued) throw NOT_PLAIN;
      labelled = true;
      writer.stream(readLabels(r.json(), 'stream labels'));
    } else if (key === 'values') {
      if (!labelled || valued) throw NOT_PLAIN;
      valued = true;
      r.expect(OPEN_BRACKET);
      r.elements(() => readEntry(r, bytes, writer));
    } else r.json();
  });
}

/** `["<nanoseconds>", "<line>"(, anything)*]`. */
function readEntry(r: JsonBytes, bytes: Buffer, writer: LogFrameWriter): void {
  r.expect(OPEN_BRACKET);
  r.ws();
  if (bytes[r.at] !== QUOTE) throw NOT_PLAIN;
  const digits = r.at + 1;
  const close = bytes.indexOf(QUOTE, digits);
  if (close < 0) throw NOT_PLAIN;
  // Anything but 1 to 19 digits (a sign, an escape, other text) is read the general way.
  if (!writer.timestamp(bytes, digits, close - digits)) throw NOT_PLAIN;
  r.at = close + 1;
  r.expect(COMMA);
  r.ws();
  if (bytes[r.at] !== QUOTE) throw NOT_PLAIN;
  r.at = scanLine(bytes, r.at, writer);
  r.ws();
  while (bytes[r.at] === COMMA) {
    r.at++;
    r.json();
    r.ws();
  }
  r.expect(CLOSE_BRACKET);
}
