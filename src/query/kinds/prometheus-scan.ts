import { CLOSE_BRACKET, JsonBytes, NOT_PLAIN, OPEN_BRACE, OPEN_BRACKET, readPlain } from './json-bytes.ts';

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

/** Reads the document, or answers null when it is not the plain shape this reader takes. */
export function scanPrometheus(body: Uint8Array): ScannedDocument | null {
  return readPlain(body, readDocument);
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

function readDocument(r: JsonBytes): ScannedDocument {
  const doc: ScannedDocument = { series: [] };
  r.expect(OPEN_BRACE);
  r.members((key) => {
    switch (key) {
      case 'status': doc.status = r.string(); break;
      case 'errorType': doc.errorType = r.string(); break;
      case 'error': doc.error = r.string(); break;
      case 'warnings': doc.warnings = arrayOf(r.json()); break;
      case 'infos': doc.infos = arrayOf(r.json()); break;
      case 'data': readData(r, doc); break;
      default: r.json();
    }
  });
  return doc;
}

function arrayOf(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw NOT_PLAIN;
  return value;
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
}

function readResult(r: JsonBytes, doc: ScannedDocument, matrix: boolean): void {
  r.expect(OPEN_BRACKET);
  r.elements(() => {
    const series: ScannedSeries = { metric: {}, times: [], values: [] };
    let sampled = false;
    r.expect(OPEN_BRACE);
    r.members((key) => {
      if (key === 'metric') {
        const metric = r.json();
        if (typeof metric !== 'object' || metric === null || Array.isArray(metric)) throw NOT_PLAIN;
        series.metric = metric as Record<string, string>;
      } else if (matrix && key === 'values') {
        if (sampled) throw NOT_PLAIN;
        sampled = true;
        r.expect(OPEN_BRACKET);
        r.elements(() => readSample(r, series));
      } else if (!matrix && key === 'value') {
        if (sampled) throw NOT_PLAIN;
        sampled = true;
        readSample(r, series);
      } else r.json();
    });
    doc.series.push(series);
  });
}

/** `[<seconds>, "<value>"]`: the time as `time.UnixMilli(int64(f*1000))`. */
function readSample(r: JsonBytes, series: ScannedSeries): void {
  r.expect(OPEN_BRACKET);
  r.ws();
  const seconds = r.number();
  series.times.push(Math.trunc(seconds * 1000));
  r.expect(0x2c);
  r.ws();
  series.values.push(r.quotedNumber(parseSampleValue));
  r.expect(CLOSE_BRACKET);
}
