import { JsonBytes, NOT_PLAIN, OPEN_BRACE, OPEN_BRACKET, readPlain } from '../../json-bytes.ts';

/**
 * An InfluxDB 1.x `/query` answer read straight from its bytes into columns: 100 series of 1,000
 * rows are 100,000 small arrays as parsed JSON, built only to be taken apart again. Reads the
 * plain shape of a time series answer (every series with a `time` column and rows as long as its
 * columns); anything else answers null and the caller parses the general way. Pure.
 */

/** A series as columns: `cols[k]` holds column k's value of every row. */
export interface SeriesColumns {
  name: string;
  tags: Record<string, string>;
  columns: string[];
  cols: unknown[][];
  rows: number;
}

export interface ScannedInflux {
  error?: unknown;
  /** Whether `results` was an array with a first element. */
  hasResult: boolean;
  resultError?: unknown;
  series: SeriesColumns[];
}

export function scanInflux(body: Uint8Array): ScannedInflux | null {
  return readPlain(body, readDocument);
}

function readDocument(r: JsonBytes): ScannedInflux {
  const doc: ScannedInflux = { hasResult: false, series: [] };
  r.expect(OPEN_BRACE);
  r.members((key) => {
    if (key === 'error') doc.error = r.json();
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
    if (key === 'error') doc.resultError = r.json();
    else if (key === 'series') {
      if (r.peek() === 0x6e) return void r.json(); // null
      r.expect(OPEN_BRACKET);
      r.elements(() => doc.series.push(readSeries(r)));
    } else r.json();
  });
}

function readSeries(r: JsonBytes): SeriesColumns {
  const series: SeriesColumns = { name: '', tags: {}, columns: [], cols: [], rows: 0 };
  let columns: string[] | null = null;
  r.expect(OPEN_BRACE);
  r.members((key) => {
    if (key === 'name') {
      const name = r.json();
      series.name = typeof name === 'string' ? name : '';
    } else if (key === 'tags') {
      const tags = r.json();
      if (typeof tags !== 'object' || tags === null || Array.isArray(tags)) throw NOT_PLAIN;
      series.tags = tags as Record<string, string>;
    } else if (key === 'columns') {
      const read = r.json();
      if (!Array.isArray(read) || !read.every((c) => typeof c === 'string') || !read.some((c: string) => c.toLowerCase() === 'time')) throw NOT_PLAIN;
      columns = read as string[];
      series.columns = columns;
      series.cols = columns.map(() => []);
    } else if (key === 'values') {
      // The columns must come first (as InfluxDB writes them) to read rows into them.
      if (columns === null || series.rows > 0) throw NOT_PLAIN;
      readRows(r, series);
    } else r.json();
  });
  if (columns === null) throw NOT_PLAIN;
  return series;
}

function readRows(r: JsonBytes, series: SeriesColumns): void {
  if (r.peek() === 0x6e) return void r.json(); // null: no rows
  const cols = series.cols;
  const width = cols.length;
  r.expect(OPEN_BRACKET);
  r.elements(() => {
    r.expect(OPEN_BRACKET);
    let k = 0;
    r.elements(() => {
      if (k >= width) throw NOT_PLAIN;
      const c = r.bytes[r.at];
      cols[k++]!.push(c === 0x22 ? r.string() : (c !== undefined && (c === 0x2d || (c >= 0x30 && c <= 0x39))) ? r.number() : r.json());
    });
    if (k !== width) throw NOT_PLAIN;
    series.rows++;
  });
}
