import { CLOSE_BRACKET, COMMA, JsonBytes, MINUS, NOT_PLAIN, OPEN_BRACE, OPEN_BRACKET, QUOTE, ZERO, readPlain, skipWs } from '../../json-bytes.ts';
import { AnswerError } from '../../answer-error.ts';
import { readLabels, type Labels } from '../../labels.ts';

/**
 * An InfluxDB 1.x `/query` answer read straight from its bytes into columns: 100 series of 1,000
 * rows are 100,000 small arrays as parsed JSON, built only to be taken apart again. Reads the
 * plain shape (columns before values, every row as long as its columns); anything else answers
 * null and the caller parses the general way. Members are typed as the original's decode types
 * them (`models.Response`): a name, tags, columns or error of another type fail the answer.
 * Each row's first value is also read as the original reads a time (`json.Number.Int64()`: an
 * integer literal within int64), which only the literal's text can tell. Pure.
 */

/** A series as columns: `cols[k]` holds column k's value of every row. */
export interface SeriesColumns {
  name: string;
  tags: Labels;
  columns: string[];
  cols: unknown[][];
  /** Per row, its first value as epoch ms when it is a time the original reads, else null (the row is left out). */
  times: Array<number | null>;
  rows: number;
  /** The rows as the answer held them, when one may be longer than the columns (the general reading's). */
  rowsAsRead?: unknown[][];
}

export interface ScannedInflux {
  error?: string;
  /** Whether `results` was an array with a first element. */
  hasResult: boolean;
  resultError?: string;
  series: SeriesColumns[];
}

export function scanInflux(body: Uint8Array): ScannedInflux | null {
  return readPlain(body, readDocument);
}

/** A string member as `encoding/json` decodes one: `null` leaves it "", another type fails. */
export function stringMember(value: unknown, what: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') throw new AnswerError(`${what} is not a string`);
  return value;
}

/** `columns` as `[]string`: `null` entries read as "". */
export function readColumns(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new AnswerError('series columns are not a list');
  return value.map((c) => stringMember(c, 'a series column'));
}

const isDigit = (c: number | undefined) => c !== undefined && c >= ZERO && c <= ZERO + 9;

/**
 * `json.Number.Int64()` of the literal `text` (a JSON number): its value when it is an integer
 * literal within int64, else null. A literal of 16 digits or more is compared exactly.
 */
export function int64Literal(text: string, value: number): number | null {
  for (let i = text[0] === '-' ? 1 : 0; i < text.length; i++) if (!isDigit(text.charCodeAt(i))) return null;
  if (text.length < 16) return value;
  // JSON has no leading zeros: more than 19 digits is past int64 (and BigInt of a long text is slow).
  if (text.length - (text[0] === '-' ? 1 : 0) > 19) return null;
  const exact = BigInt(text);
  return exact >= -(2n ** 63n) && exact < 2n ** 63n ? value : null;
}

/** `int64Literal` of the number just read from `start`, from its bytes: a string only for 16 digits or more. */
function timeOf(r: JsonBytes, start: number, value: number): number | null {
  const b = r.bytes;
  const end = r.at;
  for (let i = b[start] === 0x2d ? start + 1 : start; i < end; i++) if (!isDigit(b[i])) return null;
  return end - start < 16 ? value : int64Literal(r.latin1(start, end), value);
}

function readDocument(r: JsonBytes): ScannedInflux {
  const doc: ScannedInflux = { hasResult: false, series: [] };
  r.expect(OPEN_BRACE);
  r.members((key) => {
    if (key === 'error') doc.error = stringMember(r.json(), 'error');
    else if (key === 'results') {
      r.expect(OPEN_BRACKET);
      r.elements(() => {
        // Only the first statement's result is answered, as the original does.
        if (doc.hasResult) return void r.json();
        doc.hasResult = true;
        readResult(r, doc);
      });
    } else r.json();
  });
  return doc;
}

function readResult(r: JsonBytes, doc: ScannedInflux): void {
  r.expect(OPEN_BRACE);
  r.members((key) => {
    if (key === 'error') doc.resultError = stringMember(r.json(), 'error');
    else if (key === 'series') {
      if (r.peek() === 0x6e) return void r.json(); // null
      r.expect(OPEN_BRACKET);
      r.elements(() => doc.series.push(readSeries(r)));
    } else r.json();
  });
}

function readSeries(r: JsonBytes): SeriesColumns {
  const series: SeriesColumns = { name: '', tags: readLabels(undefined, 'series tags'), columns: [], cols: [], times: [], rows: 0 };
  let columns: string[] | null = null;
  r.expect(OPEN_BRACE);
  r.members((key) => {
    if (key === 'name') series.name = stringMember(r.json(), 'a series name');
    else if (key === 'tags') series.tags = readLabels(r.json(), 'series tags');
    else if (key === 'columns') {
      if (columns !== null) throw NOT_PLAIN;
      columns = readColumns(r.json());
      series.columns = columns;
      series.cols = columns.map(() => []);
    } else if (key === 'values') {
      // The columns must come first (as InfluxDB writes them) to read rows into them.
      if (columns === null || columns.length === 0 || series.rows > 0) throw NOT_PLAIN;
      readRows(r, series);
    } else r.json();
  });
  return series;
}

/**
 * The rows, read in one loop rather than through `elements` (100,000 rows of two numbers: a
 * closure per row and per value cost more than the digits); the same grammar as `elements`.
 */
function readRows(r: JsonBytes, series: SeriesColumns): void {
  if (r.peek() === 0x6e) return void r.json(); // null: no rows
  const cols = series.cols;
  const times = series.times;
  const width = cols.length;
  const b = r.bytes;
  r.expect(OPEN_BRACKET);
  let at = skipWs(b, r.at);
  if (b[at] === CLOSE_BRACKET) {
    r.at = at + 1;
    return;
  }
  for (;;) {
    if (b[at] !== OPEN_BRACKET) throw NOT_PLAIN;
    at = skipWs(b, at + 1);
    // An empty row is shorter than its columns, which are never empty here.
    if (b[at] === CLOSE_BRACKET) throw NOT_PLAIN;
    let k = 0;
    for (;;) {
      if (k >= width) throw NOT_PLAIN;
      const c = b[at];
      r.at = at;
      if (c === MINUS || isDigit(c)) {
        const value = r.number();
        if (k === 0) times.push(r.integral ? value : timeOf(r, at, value));
        cols[k]!.push(value);
      } else {
        cols[k]!.push(c === QUOTE ? r.string() : r.json());
        // A row whose first value is not a number has no time the original reads.
        if (k === 0) times.push(null);
      }
      k++;
      at = skipWs(b, r.at);
      const next = b[at++];
      if (next === CLOSE_BRACKET) break;
      if (next !== COMMA) throw NOT_PLAIN;
      at = skipWs(b, at);
    }
    if (k !== width) throw NOT_PLAIN;
    series.rows++;
    at = skipWs(b, at);
    const next = b[at++];
    if (next === CLOSE_BRACKET) break;
    if (next !== COMMA) throw NOT_PLAIN;
    at = skipWs(b, at);
  }
  r.at = at;
}
