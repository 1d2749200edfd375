import { isUtf8 } from 'node:buffer';
import { writtenField, writtenTimeField, type Frame, type FrameMeta, type WrittenColumn } from '../../frames/frame.ts';
import { goString } from '../../frames/encode.ts';
import { ColumnWriter } from '../../frames/column-writer.ts';
import { goJsonStringMap, sortedLabels } from '../../go-text.ts';
import { readLabels } from '../../labels.ts';
import { LogRows, type RowSink } from './log-rows.ts';
import {
  BACKSLASH, CLOSE_BRACKET, COMMA, JsonBytes, NOT_PLAIN, OPEN_BRACE, OPEN_BRACKET, QUOTE, ZERO, readPlain, skipWs,
} from '../../json-bytes.ts';

/**
 * A Loki log query's answer as the original's one log frame (frame.go: `labels`, `Time`, `Line`,
 * `tsNs`, `id`), written column by column as bytes. Parsing 5,000 lines into strings only to
 * write them out again costs three times what the upstream answer's own parse and re-serialize
 * does, so `scanLogStreams` reads the answer's bytes: each line's JSON string is copied as it is
 * when it already reads as the SDK writes it (the common case), and hashed for its id over its
 * decoded bytes on the way. Lines it does not take as they are (escapes the SDK writes otherwise,
 * invalid UTF-8) go through `JSON.parse` one by one; a document it does not take at all answers
 * null, and the caller builds the same frame from the parsed answer with `LogFrameWriter`. Rows
 * are first offered to the vector reader (`log-rows.ts`), which takes the plain ones a window at a
 * time; the byte reader here reads the rest, one row each time it stops. Pure.
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

/**
 * FNV-1 continued over the same `bytes` from many states, without a pass over them per state.
 * A step is `h * P` then a XOR of one byte, which changes only the low 8 bits: it adds a number
 * that depends on those bits alone, and the low 8 bits of `h * P` depend only on those of `h`.
 * So from any state `s` the hash over `bytes` is `s * P^n + add[s & 255]`, the 256 additions
 * found once, side by side (a stream's rows all end their id's hash with its labels).
 */
export class FnvSuffix {
  readonly #power: number;
  /** A plain array: a typed one would be memory outside the heap made per stream (see `scratchInts`). */
  readonly #add: number[] = new Array<number>(256).fill(0);

  constructor(bytes: Uint8Array) {
    let power = 1;
    for (let i = 0; i < bytes.length; i++) power = Math.imul(power, FNV_PRIME);
    this.#power = power;
    // Eight states at a time in locals: eight independent multiplications in flight.
    for (let low = 0; low < 256; low += 8) {
      let h0 = low, h1 = low + 1, h2 = low + 2, h3 = low + 3, h4 = low + 4, h5 = low + 5, h6 = low + 6, h7 = low + 7;
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i]!;
        h0 = Math.imul(h0, FNV_PRIME) ^ b;
        h1 = Math.imul(h1, FNV_PRIME) ^ b;
        h2 = Math.imul(h2, FNV_PRIME) ^ b;
        h3 = Math.imul(h3, FNV_PRIME) ^ b;
        h4 = Math.imul(h4, FNV_PRIME) ^ b;
        h5 = Math.imul(h5, FNV_PRIME) ^ b;
        h6 = Math.imul(h6, FNV_PRIME) ^ b;
        h7 = Math.imul(h7, FNV_PRIME) ^ b;
      }
      const add = this.#add;
      add[low] = (h0 - Math.imul(low, power)) | 0;
      add[low + 1] = (h1 - Math.imul(low + 1, power)) | 0;
      add[low + 2] = (h2 - Math.imul(low + 2, power)) | 0;
      add[low + 3] = (h3 - Math.imul(low + 3, power)) | 0;
      add[low + 4] = (h4 - Math.imul(low + 4, power)) | 0;
      add[low + 5] = (h5 - Math.imul(low + 5, power)) | 0;
      add[low + 6] = (h6 - Math.imul(low + 6, power)) | 0;
      add[low + 7] = (h7 - Math.imul(low + 7, power)) | 0;
    }
  }

  /** The hash continued from `state` over the bytes. */
  from(state: number): number {
    return (Math.imul(state, this.#power) + this.#add[state & 255]!) | 0;
  }
}

/** A stream's rows from this many on have their id's hash finished through an `FnvSuffix`. */
const SUFFIX_FROM_ROWS = 128;

/**
 * `FnvSuffix`es of recent labels: the same streams come back in every refresh of a panel, and
 * making one costs 256 passes over the labels. Kept for labels of at most `SUFFIX_KEY_BYTES`,
 * `SUFFIX_KEPT` of them (about 2 KiB each), forgotten all at once when full.
 */
const suffixes = new Map<string, FnvSuffix>();
const SUFFIX_KEPT = 512;
const SUFFIX_KEY_BYTES = 512;

function suffixOf(labels: Buffer): FnvSuffix {
  if (labels.length > SUFFIX_KEY_BYTES) return new FnvSuffix(labels);
  const key = labels.toString('latin1');
  let suffix = suffixes.get(key);
  if (!suffix) {
    if (suffixes.size >= SUFFIX_KEPT) suffixes.clear();
    suffixes.set(key, (suffix = new FnvSuffix(labels)));
  }
  return suffix;
}

/** Go's `%x` of a uint32, written at `at`; answers the position after it. */
function writeHex(out: Buffer, at: number, value: number): number {
  const digits = Math.max(1, 8 - (Math.clz32(value) >> 2));
  for (let d = digits - 1; d >= 0; d--) out[at++] = HEX[(value >>> (4 * d)) & 15]!;
  return at;
}

/** A row of `column`: the decimal digits `bytes[start..end]` as a JSON number (0 when there are none); false when it is 0. */
function writeNumber(column: ColumnWriter, bytes: Uint8Array, start: number, end: number): boolean {
  let first = start;
  while (first < end && bytes[first] === ZERO) first++;
  const out = column.row(Math.max(1, end - first));
  let o = column.at;
  if (first === end) out[o++] = ZERO;
  else for (let i = first; i < end; i++) out[o++] = bytes[i]!;
  column.at = o;
  return first !== end;
}

/** Whether one of a word's four bytes is `"` (the word XOR `""""` has a zero byte). */
function hasQuote(word: number): boolean {
  const x = word ^ 0x22222222;
  return ((x - 0x01010101) & ~x & 0x80808080) !== 0;
}

/** A 32-bit hash's bits spread over its low bits (the ids' table is indexed by those). */
function mixed(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const HEX = Buffer.from('0123456789abcdef');

/** The log frame's columns, a row at a time; rows carry the labels of the last `stream` call. */
export class LogFrameWriter implements RowSink {
  readonly #lines: ColumnWriter;
  /** `"<text>"` rows, the time as it came (digits, or a sign and digits): the other time columns and the ids are written from it at the end. */
  readonly #tsNs: ColumnWriter;
  /** Per row: its line's hash (the id's hash before `_` and the labels); a plain array, for the reason `scratchInts` gives. */
  readonly #lineHashes: number[] = [];
  /** Rows in order, as runs of rows of the same labels (the labels column and the ids' hashes are written from these at the end). */
  readonly #runs: Array<{ labels: Buffer; rows: number }> = [];
  #run: { labels: Buffer; rows: number } | undefined;
  #labelsJson: Buffer = Buffer.from('{}');

  constructor(sizeHint: number) {
    this.#lines = new ColumnWriter(sizeHint);
    this.#tsNs = new ColumnWriter(sizeHint / 4);
  }

  /** The stream whose rows follow: its labels as Go marshals the map (sorted, HTML-safe). */
  stream(labels: Readonly<Record<string, string>>): void {
    this.#labelsJson = Buffer.from(goJsonStringMap(sortedLabels(labels)));
    this.#run = undefined;
  }

  /**
   * A row's timestamp, from `length` decimal digits of nanoseconds at `at` in `bytes`: false,
   * and nothing written, when they are not (0 or over 19 digits, anything but digits). Up to 19
   * digits is every time the original reads as the number written (the 19-digit ones past int64
   * through its seconds-and-nanoseconds split); `signedTimestamp` takes the signed ones.
   */
  timestamp(bytes: Uint8Array, at: number, length: number): boolean {
    if (length === 0 || length > 19) return false;
    for (let i = at; i < at + length; i++) if (bytes[i]! - ZERO >>> 0 > 9) return false;
    const out = this.#tsNs.row(length + 2);
    let o = this.#tsNs.at;
    out[o++] = QUOTE;
    for (let i = at; i < at + length; i++) out[o++] = bytes[i]!;
    out[o++] = QUOTE;
    this.#tsNs.at = o;
    return true;
  }

  /**
   * `timestamp` from its JSON token at `at` (`"` and 1 to 19 digits, no escapes), checked as it is
   * copied: the position after the token, or -1 and nothing written for any other token.
   */
  timestampToken(bytes: Uint8Array, at: number): number {
    if (bytes[at] !== QUOTE) return -1;
    const tsNs = this.#tsNs;
    const writtenTo = tsNs.at;
    const out = tsNs.row(22);
    let o = tsNs.at;
    out[o++] = QUOTE;
    const start = at + 1;
    const limit = Math.min(bytes.length, start + 20);
    let i = start;
    for (; i < limit; i++) {
      const c = bytes[i]!;
      if (c - ZERO >>> 0 > 9) break;
      out[o++] = c;
    }
    if (bytes[i] !== QUOTE || i === start || i - start > 19) {
      tsNs.dropRow(writtenTo);
      return -1;
    }
    out[o++] = QUOTE;
    tsNs.at = o;
    return i + 1;
  }

  /**
   * A signed timestamp (`-5`, `+1700000000000000000`), which the original's `ParseInt` reads when
   * it has at most 18 characters (its time is found when the columns are written). The text is
   * kept as it came, for `tsNs` and the id.
   */
  signedTimestamp(text: string): boolean {
    if (!SIGNED_TIME.test(text)) return false;
    const out = this.#tsNs.row(text.length + 2);
    this.#tsNs.at += out.write(`"${text}"`, this.#tsNs.at, 'latin1');
    return true;
  }

  /** A row's line from its JSON token `bytes[start..end]` (quotes included), already as the SDK writes it; `hash` is FNV over its text. */
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

  /** Rows the vector reader (`log-rows.ts`) read: their lines' and times' JSON joined by commas, and their lines' hashes. */
  rowsFrom(lines: Uint8Array, times: Uint8Array, hashes: Int32Array, rows: number): void {
    this.#lines.joined(lines, rows);
    this.#tsNs.joined(times, rows);
    for (let k = 0; k < rows; k++) this.#lineHashes.push(hashes[k]!);
    if (this.#run) this.#run.rows += rows;
    else this.#runs.push((this.#run = { labels: this.#labelsJson, rows }));
  }

  /** A row with a time of the stream and a line, in the run of its labels. */
  #endRow(lineHash: number): void {
    this.#lineHashes.push(lineHash);
    if (this.#run) this.#run.rows++;
    else this.#runs.push((this.#run = { labels: this.#labelsJson, rows: 1 }));
  }

  /** The frame of the rows written (the caller answers no frame for an answer without streams, as the original). */
  frame(meta: FrameMeta): Frame {
    const { times, nanos, ids } = this.#fromTimes(this.#hashes());
    return {
      meta,
      fields: [
        writtenField('labels', 'json.RawMessage', this.#labelsColumn()),
        nanos ? writtenTimeField('Time', times, nanos) : writtenField('Time', 'time.Time', times),
        writtenField('Line', 'string', this.#lines.done()),
        writtenField('tsNs', 'string', this.#tsNs.done()),
        writtenField('id', 'string', ids),
      ],
    };
  }

  /** Each run's labels once per row: written once, then doubled by copies of what is written. */
  #labelsColumn(): WrittenColumn {
    let size = 2;
    for (const { labels, rows } of this.#runs) size += rows * (labels.length + 1);
    const column = new ColumnWriter(size);
    for (const { labels, rows } of this.#runs) column.repeat(labels, rows);
    return column.done();
  }

  /** Each row's id hash: FNV over its line, `_` and its labels JSON (the line's part already done). */
  #hashes(): Int32Array {
    const lineHashes = this.#lineHashes;
    const hashes = scratchInts(0, lineHashes.length);
    let row = 0;
    for (const { labels, rows } of this.#runs) {
      const end = row + rows;
      if (rows >= SUFFIX_FROM_ROWS) {
        const suffix = suffixOf(labels);
        for (; row < end; row++) hashes[row] = suffix.from(Math.imul(lineHashes[row]!, FNV_PRIME) ^ UNDERSCORE);
      } else {
        for (; row < end; row++) hashes[row] = fnvOver(Math.imul(lineHashes[row]!, FNV_PRIME) ^ UNDERSCORE, labels, 0, labels.length);
      }
    }
    return hashes;
  }

  /**
   * The columns read from each row's time text, in one pass over the tsNs column: `Time` (epoch
   * milliseconds) and its nanoseconds (undefined when all are 0), and the ids.
   *
   * frame.go `makeIdField`: `<tsNs>_<fnv32(line + "_" + labelsJSON) in hex>`, and `_N` on the
   * N-th repeat of the same id within the frame. Ids are kept in an open-addressed table keyed by
   * the hash and the tsNs together, one slot per distinct id holding its count so far: a row costs
   * one probe however often its id repeats (40,000 equal lines are 40,000 probes, not 800 million).
   */
  #fromTimes(hashes: Int32Array): { times: WrittenColumn; nanos: WrittenColumn | undefined; ids: WrittenColumn } {
    const rows = hashes.length;
    const ts = this.#tsNs.bytes;
    const times = new ColumnWriter(rows * 15);
    const nanos = new ColumnWriter(rows * 7);
    let anyNanos = false;
    // Each id is its tsNs row plus `_` and up to 8 hex digits; a repeat's count grows the buffer
    // (the word views below are made again when a buffer changes).
    const ids = new ColumnWriter(this.#tsNs.at + rows * 11);
    const tsWords = new DataView(ts.buffer, ts.byteOffset, ts.byteLength);
    let idBytes = ids.bytes;
    let idWords = new DataView(idBytes.buffer, idBytes.byteOffset, idBytes.byteLength);
    let timeBytes = times.bytes;
    let timeWords = new DataView(timeBytes.buffer, timeBytes.byteOffset, timeBytes.byteLength);
    const tableSize = 2 ** Math.ceil(Math.log2(rows * 2 + 2));
    const slots = scratchInts(rows, tableSize).fill(0);
    const counts = scratchInts(rows + tableSize, tableSize).fill(0);
    const tsAt = scratchInts(rows + 2 * tableSize, rows);
    const tsEnd = scratchInts(2 * rows + 2 * tableSize, rows);
    const mask = tableSize - 1;
    let at = 2; // past `["`
    for (let i = 0; i < rows; i++) {
      const hash = hashes[i]!;
      // `"`, at most 19 characters of time, `_`, 8 hex digits, `_` and a count, `"`.
      const out = ids.row(42);
      let o = ids.at;
      out[o++] = QUOTE;
      // The time's characters go to the id and, all of them for now, to the milliseconds' row.
      const timesTo = times.at;
      const msOut = times.row(20);
      let t = times.at;
      let key = FNV_OFFSET;
      let end = at;
      let w0 = 0, w1 = 0, w2 = 0, w3 = 0;
      if (ts[at + 19] === QUOTE && ts[at + 18] !== QUOTE && ts[at + 17] !== QUOTE && ts[at + 16] !== QUOTE
        && !hasQuote(w0 = tsWords.getUint32(at, true)) && !hasQuote(w1 = tsWords.getUint32(at + 4, true))
        && !hasQuote(w2 = tsWords.getUint32(at + 8, true)) && !hasQuote(w3 = tsWords.getUint32(at + 12, true))) {
        // 19 characters (the closing quote the first after them), the common time: copied and hashed four bytes at a time.
        if (out !== idBytes) idWords = new DataView((idBytes = out).buffer, out.byteOffset, out.byteLength);
        if (msOut !== timeBytes) timeWords = new DataView((timeBytes = msOut).buffer, msOut.byteOffset, msOut.byteLength);
        idWords.setUint32(o, w0, true);
        idWords.setUint32(o + 4, w1, true);
        idWords.setUint32(o + 8, w2, true);
        idWords.setUint32(o + 12, w3, true);
        timeWords.setUint32(t, w0, true);
        timeWords.setUint32(t + 4, w1, true);
        timeWords.setUint32(t + 8, w2, true);
        timeWords.setUint32(t + 12, w3, true);
        key = Math.imul(Math.imul(Math.imul(Math.imul(key ^ w0, FNV_PRIME) ^ w1, FNV_PRIME) ^ w2, FNV_PRIME) ^ w3, FNV_PRIME);
        const rest = ts[at + 16]! | (ts[at + 17]! << 8) | (ts[at + 18]! << 16);
        key = Math.imul(key ^ rest, FNV_PRIME);
        out[o + 16] = ts[at + 16]!;
        out[o + 17] = ts[at + 17]!;
        out[o + 18] = ts[at + 18]!;
        msOut[t + 16] = ts[at + 16]!;
        msOut[t + 17] = ts[at + 17]!;
        msOut[t + 18] = ts[at + 18]!;
        o += 19;
        t += 19;
        end = at + 19;
      } else {
        for (let c = ts[end]!; c !== QUOTE && end < ts.length; c = ts[++end]!) {
          out[o++] = c;
          msOut[t++] = c;
          key = Math.imul(key ^ c, FNV_PRIME);
        }
      }
      tsAt[i] = at;
      tsEnd[i] = end;
      out[o++] = UNDERSCORE;
      o = writeHex(out, o, hash >>> 0);
      let slot = mixed(hash ^ key) & mask;
      for (let row = slots[slot]!; row !== 0; row = slots[slot]!) {
        if (hashes[row - 1] === hash && sameBytes(ts, tsAt[row - 1]!, tsEnd[row - 1]!, at, end)) break;
        slot = (slot + 1) & mask;
      }
      if (slots[slot] === 0) slots[slot] = i + 1;
      const count = counts[slot]!++;
      if (count > 0) {
        out[o++] = UNDERSCORE;
        o += out.write(String(count), o, 'latin1');
      }
      out[o++] = QUOTE;
      ids.at = o;

      const first = ts[at]!;
      if (first > ZERO && first <= ZERO + 9 && end - at > 6) {
        // Milliseconds are the digits above the last six, nanoseconds those six.
        times.at = t - 6;
        if (writeNumber(nanos, ts, end - 6, end)) anyNanos = true;
      } else if (first - ZERO >>> 0 <= 9) {
        // Leading zeros, or no digits above the last six: the milliseconds' row written again.
        times.dropRow(timesTo);
        const msEnd = Math.max(at, end - 6);
        writeNumber(times, ts, at, msEnd);
        if (writeNumber(nanos, ts, msEnd, end)) anyNanos = true;
      } else {
        // Signed: epoch ms rounded down and the nanoseconds above them, as the SDK writes a time before 1970.
        const ns = BigInt(ts.toString('latin1', at, end));
        const ms = ns / 1_000_000n - (ns % 1_000_000n < 0n ? 1n : 0n);
        const sub = Number(ns - ms * 1_000_000n);
        times.dropRow(timesTo);
        times.text(String(ms));
        nanos.text(String(sub));
        if (sub !== 0) anyNanos = true;
      }
      at = end + 3; // past `","`
    }
    if (!anyNanos) nanos.discard();
    return { times: times.done(), nanos: anyNanos ? nanos.done() : undefined, ids: ids.done() };
  }
}

const SIGNED_TIME = /^[+-][0-9]{1,17}$/;

/**
 * Integers for one synchronous pass (a frame's ids table and the like), taken from one array kept
 * between answers: a typed array of its own per answer is memory outside the JS heap, and a few
 * per answer made the server's collector run several times as much (measured: 3.3x the CPU per
 * log query). Beyond `SCRATCH_KEPT` integers the array is made for that pass only.
 */
let scratch = new Int32Array(1 << 14);
const SCRATCH_KEPT = 1 << 20;

/** `length` integers from `start` of the scratch array (content undefined), valid until the next call's pass. */
function scratchInts(start: number, length: number): Int32Array {
  const end = start + length;
  if (end > scratch.length) {
    const grown = new Int32Array(2 ** Math.ceil(Math.log2(end)));
    if (grown.length > SCRATCH_KEPT) return grown.subarray(start, end);
    scratch = grown;
  }
  return scratch.subarray(start, end);
}

const ESCAPED_LT = Buffer.from('\\u003c');
const ESCAPED_GT = Buffer.from('\\u003e');
const ESCAPED_AMP = Buffer.from('\\u0026');

function sameBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let i = 0; a + i < aEnd; i++) if (bytes[a + i] !== bytes[b + i]) return false;
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
    let c = bytes[i]!;
    // Plain bytes in a loop of their own: the hash's multiplications are all it waits on.
    while (BYTE_CLASS[c] === PLAIN) {
      h = Math.imul(h, FNV_PRIME) ^ c;
      c = bytes[++i]!;
    }
    const kind = BYTE_CLASS[c];
    if (kind === IS_QUOTE) break;
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
export function scanLogStreams(body: Uint8Array, into?: LogFrameWriter, vectors = true): ScannedStreams | null {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // `vectors` false: every row read a byte at a time (tests compare the two readers).
  const rows = vectors ? LogRows.open() : null;
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
            readStream(r, bytes, scanned.writer, rows);
          });
        } else if (member === 'stats') scanned.stats = r.json();
        else r.json();
      });
    });
    if (!streams) throw NOT_PLAIN;
    return scanned;
  });
}

function readStream(r: JsonBytes, bytes: Buffer, writer: LogFrameWriter, rows: LogRows | null): void {
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
      r.at = readEntries(r, bytes, r.at, writer, rows);
    } else r.json();
  });
}

/**
 * `["<nanoseconds>", "<line>"(, anything)*]` rows up to the values' closing bracket (the opening
 * one read), from `at` with a position of its own: a row is a few hundred bytes' work, and every
 * step through the reader's members shows. Answers the position after the bracket.
 */
function readEntries(r: JsonBytes, bytes: Buffer, at: number, writer: LogFrameWriter, rows: LogRows | null): number {
  at = skipWs(bytes, at);
  if (bytes[at] === CLOSE_BRACKET) return at + 1;
  for (;;) {
    // The rows the vector reader takes, then one row here, and again.
    if (rows) {
      at = rows.read(bytes, at, writer);
      if (rows.done) return at;
    }
    if (bytes[at] !== OPEN_BRACKET) throw NOT_PLAIN;
    at = skipWs(bytes, at + 1);
    // Anything but 1 to 19 digits (a sign, an escape, other text) is read the general way.
    const afterTime = writer.timestampToken(bytes, at);
    if (afterTime < 0) throw NOT_PLAIN;
    at = skipWs(bytes, afterTime);
    if (bytes[at] !== COMMA) throw NOT_PLAIN;
    at = skipWs(bytes, at + 1);
    if (bytes[at] !== QUOTE) throw NOT_PLAIN;
    at = skipWs(bytes, scanLine(bytes, at, writer));
    while (bytes[at] === COMMA) {
      r.at = at + 1;
      r.json();
      at = skipWs(bytes, r.at);
    }
    if (bytes[at] !== CLOSE_BRACKET) throw NOT_PLAIN;
    at = skipWs(bytes, at + 1);
    const c = bytes[at++];
    if (c === CLOSE_BRACKET) return at;
    if (c !== COMMA) throw NOT_PLAIN;
    at = skipWs(bytes, at);
  }
}
