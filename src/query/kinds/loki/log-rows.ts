import { WASM_BASE64 } from './log-rows.wasm.ts';

/**
 * Loki log rows read 16 bytes at a time by `log-rows.wat`. A log query's answer is mostly its
 * lines, and reading one byte at a time in JavaScript (a class lookup, a hash step and the loop's
 * checks per byte) was the better part of its cost. The module copies plain rows to the `Line` and
 * `tsNs` columns a vector at a time, keeps each line's text (its escapes decoded), then hashes
 * four texts at once so that FNV's multiplications overlap. The rows it stops before, it leaves to
 * the byte reader in `log-frame.ts`, which reads every row it does not take exactly as before.
 */

/** What the module's `rows` writes to; the caller adds the rows to its frame. */
export interface RowSink {
  /** `rows` rows: `lines` and `times` each the rows' JSON joined by commas, `hashes` each line's FNV-1. */
  rowsFrom(lines: Uint8Array, times: Uint8Array, hashes: Int32Array, rows: number): void;
}

interface Exports {
  memory: WebAssembly.Memory;
  rows(i: number, lines: number, linesEnd: number, times: number, timesEnd: number, text: number, textEnd: number, rows: number, rowsEnd: number): number;
  hashes(ends: number, n: number, text: number, hashes: number): void;
}

/** Bytes of the answer read per load of the input region. */
const WINDOW = 256 * 1024;
/** Room past each region: the module writes 16 or 32 bytes at a time and checks before, not during. */
const SLACK = 64;
/** An input window reaching less than this past the row to read is loaded again from that row. */
const RELOAD_BELOW = WINDOW / 4;

// The memory's regions, in bytes. The first 512 are the module's tables, then where `rows` stopped.
const RESULTS = 512;
const INPUT = 1024;
const LINES = INPUT + WINDOW + SLACK;
const LINES_END = LINES + WINDOW;
const TIMES = LINES_END + SLACK;
const TIMES_END = TIMES + WINDOW / 4;
const TEXT = TIMES_END + SLACK;
const TEXT_END = TEXT + WINDOW;
const ROWS = TEXT_END + SLACK;
const ROWS_END = ROWS + WINDOW / 4;
const HASHES = ROWS_END + SLACK;
const MEMORY_END = HASHES + WINDOW / 4 + SLACK;

interface Instance {
  exports: Exports;
  bytes: Uint8Array;
  /** Where `rows` stopped reading, and where it stopped writing lines, times and row ends. */
  results: Int32Array;
  hashes: Int32Array;
}

let instance: Instance | null | undefined;

/** The module, made on first use (about 1.3 MiB of memory, kept); null where WebAssembly with vectors is missing. */
function module(): Instance | null {
  if (instance !== undefined) return instance;
  try {
    const made = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64')));
    const exports = made.exports as unknown as Exports;
    const pages = Math.ceil(MEMORY_END / 65536) - exports.memory.buffer.byteLength / 65536;
    if (pages > 0) exports.memory.grow(pages);
    const bytes = new Uint8Array(exports.memory.buffer);
    bytes.set(SHORT_ESCAPES, 0);
    bytes.set(HEX_DIGITS, 256);
    const { buffer } = exports.memory;
    instance = { exports, bytes, results: new Int32Array(buffer, RESULTS, 4), hashes: new Int32Array(buffer, HASHES, (ROWS_END - ROWS) / 4) };
  } catch {
    instance = null;
  }
  return instance;
}

/** What each short escape's letter stands for, 0 for the rest (`\/` among them: the SDK writes `/` as it is). */
const SHORT_ESCAPES = new Uint8Array(256);
for (const [letter, value] of [['"', 0x22], ['\\', 0x5c], ['b', 0x08], ['f', 0x0c], ['n', 0x0a], ['r', 0x0d], ['t', 0x09]] as const) {
  SHORT_ESCAPES[letter.charCodeAt(0)] = value;
}
/** A lowercase hex digit's value, 0xff for anything else. */
const HEX_DIGITS = new Uint8Array(256).fill(0xff);
for (let d = 0; d < 16; d++) HEX_DIGITS['0123456789abcdef'.charCodeAt(d)] = d;

/**
 * One answer's rows read by the module: made per read of a document (the window it loaded is that
 * document's bytes), used synchronously, as everything sharing the one module's memory must be.
 */
export class LogRows {
  readonly #module: Instance;
  #body: Uint8Array | undefined;
  /** The part of `#body` the input region holds. */
  #from = 0;
  #to = 0;
  /** Whether the last `read` ended at the values' closing bracket. */
  done = false;

  private constructor(module: Instance) {
    this.#module = module;
  }

  /** A reader, or null where the module cannot run (the byte reader reads every row then). */
  static open(): LogRows | null {
    const made = module();
    return made ? new LogRows(made) : null;
  }

  /**
   * The rows from `at` (a row's `[`) the module takes, given to `sink`: answers the position after
   * the values' closing bracket (`done` set) or of the first row it did not take.
   */
  read(body: Uint8Array, at: number, sink: RowSink): number {
    const { exports, bytes, results, hashes } = this.#module;
    if (body !== this.#body || at < this.#from || (this.#to < body.length && this.#to - at < RELOAD_BELOW)) this.#load(body, at);
    const status = exports.rows(INPUT + at - this.#from, LINES, LINES_END, TIMES, TIMES_END, TEXT, TEXT_END, ROWS, ROWS_END);
    const rows = (results[3]! - ROWS) >> 2;
    if (rows > 0) {
      exports.hashes(ROWS, rows, TEXT, HASHES);
      sink.rowsFrom(bytes.subarray(LINES, results[1]), bytes.subarray(TIMES, results[2]), hashes, rows);
    }
    const stoppedAt = results[0]! - INPUT + this.#from;
    this.done = status === 0;
    return this.done ? stoppedAt + 1 : stoppedAt;
  }

  /** The input region loaded with `body` from `at`, zeros after it (a byte no row has: the module stops there). */
  #load(body: Uint8Array, at: number): void {
    const to = Math.min(body.length, at + WINDOW);
    const { bytes } = this.#module;
    bytes.set(body.subarray(at, to), INPUT);
    bytes.fill(0, INPUT + to - at, INPUT + to - at + SLACK);
    this.#body = body;
    this.#from = at;
    this.#to = to;
  }
}
