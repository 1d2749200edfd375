import { ColumnWriter } from '../../frames/column-writer.ts';
import { goFloat } from '../../frames/encode.ts';
import type { ColumnEntities, WrittenColumn } from '../../frames/frame.ts';
import { CLOSE_BRACKET, COMMA, DOT, JsonBytes, MINUS, NOT_PLAIN, OPEN_BRACE, OPEN_BRACKET, ZERO, readPlain } from '../../json-bytes.ts';
import { AnswerError } from '../../answer-error.ts';
import { checkedMillis, parseGoFloat } from '../../go-numbers.ts';
import { readLabels, type Labels } from '../../labels.ts';

/**
 * A Prometheus API answer read straight from its bytes, without `JSON.parse`: a range answer of
 * 100 series of 1,000 points is 200,000 small arrays and strings as parsed JSON, built only to be
 * converted to numbers and dropped. This writes each series' times and values straight into the
 * JSON columns of its frame (`ColumnWriter`) as it reads them, and only the small parts (labels,
 * strings, warnings) go through `JSON.parse`. A value whose text is already what the SDK writes
 * for its double (nearly all of them) is copied; any other is parsed and written as the encoder
 * writes a number. Series that share their times (a range query's, nearly always) share one
 * time column. The answer's size in memory is then about that of the frames' JSON.
 *
 * It reads what Prometheus and its look-alikes write for `matrix` and `vector` results, with any
 * whitespace, unknown members skipped. Anything else (another result type, a malformed document,
 * a member it does not expect where samples are) answers `null`, and the caller parses the whole
 * document the general way. Values are what the original's reading accepts (frames.ts says which);
 * one it refuses fails the answer here as there. A differential test holds both paths to the same
 * frames or the same error. Pure.
 */

/**
 * One series: its labels and its samples, times in epoch ms (`time.UnixMilli(int64(f*1000))`),
 * values as `strconv.ParseFloat` finds them: a matrix's as the frame's written columns, a
 * vector's single sample (or any series the general path read) as numbers.
 */
export interface ScannedSeries {
  metric: Labels;
  time: WrittenColumn | number[];
  value: WrittenColumn | number[];
}

export interface ScannedDocument {
  status?: string;
  errorType?: string;
  error?: string;
  resultType?: string;
  series: ScannedSeries[];
  warnings?: string[];
  infos?: string[];
}

/** Reads the document, or answers null when it is not the plain shape this reader takes. */
export function scanPrometheus(body: Uint8Array): ScannedDocument | null {
  return readPlain(body, readDocument);
}

/** `strconv.ParseFloat` of a sample value: numbers, `NaN`, `+Inf`, `-Inf`, `Inf`; Go's error for anything else. */
export const parseSampleValue = parseGoFloat;

/**
 * A sample's time (float seconds, a JSON number) as `time.UnixMilli(int64(f*1000))`: one that
 * overflows a double fails as the original's `ReadFloat64` fails; one past int64 milliseconds,
 * which the original turns into an arbitrary time, fails here with a clear error.
 */
export function sampleMillis(seconds: number): number {
  if (!Number.isFinite(seconds)) throw new AnswerError('a sample time is out of range');
  return checkedMillis(Math.trunc(seconds * 1000), 'a sample time');
}

/** `warnings` and `infos`: strings when an array (anything else is none), as the original reads them. */
export function annotations(value: unknown, key: string): string[] {
  if (!Array.isArray(value)) return [];
  if (!value.every((v) => typeof v === 'string')) throw new AnswerError(`${key} are not strings`);
  return value as string[];
}

function readDocument(r: JsonBytes): ScannedDocument {
  const doc: ScannedDocument = { series: [] };
  r.expect(OPEN_BRACE);
  r.members((key) => {
    switch (key) {
      case 'status': doc.status = r.string(); break;
      case 'errorType': doc.errorType = r.string(); break;
      case 'error': doc.error = r.string(); break;
      case 'warnings': doc.warnings = annotations(r.json(), key); break;
      case 'infos': doc.infos = annotations(r.json(), key); break;
      case 'data': readData(r, doc); break;
      default: r.json();
    }
  });
  return doc;
}

function readData(r: JsonBytes, doc: ScannedDocument): void {
  r.expect(OPEN_BRACE);
  r.members((key) => {
    if (key === 'resultType') doc.resultType = r.string();
    else if (key === 'result') {
      // Only a matrix or vector whose type came first is read here.
      if (doc.resultType !== 'matrix' && doc.resultType !== 'vector') throw NOT_PLAIN;
      readResult(r, doc, doc.resultType === 'matrix');
    } else r.json();
  });
  if (doc.resultType === undefined) throw new AnswerError('no resultType found');
}

function readResult(r: JsonBytes, doc: ScannedDocument, matrix: boolean): void {
  let sizeHint = 256;
  let lastTime: WrittenColumn | undefined;
  r.expect(OPEN_BRACKET);
  r.elements(() => {
    let metric = readLabels(undefined, 'series labels');
    let samples: SampleWriter | undefined;
    let sample: [number, number] | undefined;
    r.expect(OPEN_BRACE);
    r.members((key) => {
      if (key === 'metric') metric = readLabels(r.json(), 'series labels');
      // A matrix's single sample or a vector's list: the general path appends them as the original does.
      else if ((matrix && key === 'value') || (!matrix && key === 'values')) throw NOT_PLAIN;
      else if (matrix && key === 'values') {
        if (samples) throw NOT_PLAIN;
        samples = new SampleWriter(sizeHint);
        r.expect(OPEN_BRACKET);
        r.elements(() => samples!.read(r));
      } else if (!matrix && key === 'value') {
        if (sample) throw NOT_PLAIN;
        sample = readSample(r);
      } else r.json();
    });
    if (!matrix) return void doc.series.push({ metric, time: sample ? [sample[0]] : [], value: sample ? [sample[1]] : [] });
    samples ??= new SampleWriter(sizeHint);
    // The next series likely has as many samples: its columns start at this one's size.
    sizeHint = Math.max(samples.times.at, samples.values.at);
    lastTime = samples.timeColumn(lastTime);
    doc.series.push({ metric, time: lastTime, value: samples.valueColumn() });
  });
}

/** A vector's `[<seconds>, "<value>"]` as numbers. */
function readSample(r: JsonBytes): [number, number] {
  r.expect(OPEN_BRACKET);
  r.ws();
  const ms = sampleMillis(r.number());
  r.expect(COMMA);
  r.ws();
  // The sample's end is read before its value, as the original reads them.
  const start = r.plainStringStart();
  const end = r.at - 1;
  r.expect(CLOSE_BRACKET);
  return [ms, r.numberIn(start, end, parseSampleValue)];
}

/** A series' two columns, a sample at a time. */
class SampleWriter {
  readonly times: ColumnWriter;
  readonly values: ColumnWriter;
  #entities: ColumnEntities | undefined;

  constructor(size: number) {
    this.times = new ColumnWriter(size);
    this.values = new ColumnWriter(size);
  }

  /** `[<seconds>, "<value>"]`. */
  read(r: JsonBytes): void {
    r.expect(OPEN_BRACKET);
    r.ws();
    this.#time(r);
    r.expect(COMMA);
    r.ws();
    const start = r.plainStringStart();
    const end = r.at - 1;
    // The sample's end is read before its value, as the original reads them.
    r.expect(CLOSE_BRACKET);
    this.#value(r, start, end);
  }

  /** The time column, or `previous` when it holds the same times (its own buffer then goes back). */
  timeColumn(previous: WrittenColumn | undefined): WrittenColumn {
    const column = this.times.done();
    if (previous && previous.rows === column.rows && Buffer.compare(previous.json, column.json) === 0) {
      this.times.discard();
      return previous;
    }
    return column;
  }

  valueColumn(): WrittenColumn {
    const column = this.values.done();
    if (this.#entities) column.entities = this.#entities;
    return column;
  }

  /**
   * Whole seconds (`1700000000`, nearly every answer's) are their digits and `000`; any other
   * number is `Math.trunc(f * 1000)`, as Go's `int64(f*1000)` truncates.
   */
  #time(r: JsonBytes): void {
    const b = r.bytes;
    const start = r.at;
    let end = start;
    if (b[end]! > ZERO && b[end]! <= ZERO + 9) {
      while (end - start < 13 && b[end]! >= ZERO && b[end]! <= ZERO + 9) end++;
      const next = b[end];
      if (end - start < 13 && next !== DOT && next !== 0x65 && next !== 0x45 && !(next! >= ZERO && next! <= ZERO + 9)) {
        const out = this.times.row(end - start + 3);
        let at = this.times.at;
        for (let i = start; i < end; i++) out[at++] = b[i]!;
        out[at++] = ZERO;
        out[at++] = ZERO;
        out[at++] = ZERO;
        this.times.at = at;
        r.at = end;
        return;
      }
    }
    this.times.text(String(sampleMillis(r.number())));
  }

  /** The value's text as it is when that is what the SDK writes for it, else its double written. */
  #value(r: JsonBytes, start: number, end: number): void {
    if (writtenAsIs(r.bytes, start, end)) return this.values.copy(r.bytes, start, end);
    const value = parseSampleValue(r.utf8(start, end));
    if (Number.isFinite(value)) return this.values.text(goFloat(value));
    const row = this.values.rows;
    this.values.text('null');
    const entities = (this.#entities ??= {});
    (entities[value !== value ? 'NaN' : value > 0 ? 'Inf' : 'NegInf'] ??= []).push(row);
  }
}

const isDigit = (c: number | undefined) => c !== undefined && c >= ZERO && c <= ZERO + 9;

/**
 * Whether a value's text is exactly what the SDK (and JavaScript) writes for the double it reads
 * as: a plain decimal without leading or trailing zeros, not `-0`, of at most 15 significant
 * digits (a double holds any such decimal exactly enough to print it back the same, and nothing
 * shorter reads as the same double), at least 1e-6 (below, the SDK writes an exponent).
 */
export function writtenAsIs(b: Uint8Array, start: number, end: number): boolean {
  let i = start;
  if (b[i] === MINUS) i++;
  const integer = i;
  while (i < end && isDigit(b[i])) i++;
  const integerDigits = i - integer;
  if (integerDigits === 0 || integerDigits > 15) return false;
  const zero = b[integer] === ZERO;
  if (zero && integerDigits > 1) return false;
  if (i === end) return !(zero && integer > start);
  if (b[i++] !== DOT) return false;
  const fraction = i;
  while (i < end && isDigit(b[i])) i++;
  if (i !== end || i === fraction || b[end - 1] === ZERO) return false;
  if (!zero) return integerDigits + (end - fraction) <= 15;
  let first = fraction;
  while (b[first] === ZERO) first++;
  return first - fraction <= 5 && end - first <= 15;
}
