import type { WrittenColumn } from './frame.ts';
import { giveBackColumnBuffer, takeColumnBuffer } from './column-buffers.ts';

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * A column's JSON array, written row by row into a reusable buffer (`column-buffers.ts`) that
 * grows: the kinds that write frames straight from an upstream answer's bytes (Loki's log lines,
 * Prometheus's samples) write each column here. A row is `row(size)` (room for at most `size`
 * bytes, the comma before it written), then the caller's bytes from `at`, then `at` moved past them.
 */
export class ColumnWriter {
  bytes: Buffer;
  at = 1;
  rows = 0;

  constructor(size: number) {
    this.bytes = takeColumnBuffer(size);
    this.bytes[0] = OPEN_BRACKET;
  }

  /** Starts a row that takes at most `size` bytes. */
  row(size: number): Buffer {
    this.#room(size + 1);
    if (this.rows++ > 0) this.bytes[this.at++] = COMMA;
    return this.bytes;
  }

  /** Takes back the last row, started when `at` was `startedAt` (a row found not to be one after all). */
  dropRow(startedAt: number): void {
    this.at = startedAt;
    this.rows--;
  }

  /** A row of ASCII text (digits, `null`). */
  text(value: string): void {
    const out = this.row(value.length);
    let at = this.at;
    for (let i = 0; i < value.length; i++) out[at++] = value.charCodeAt(i);
    this.at = at;
  }

  /** A row copied from `source`'s bytes `start` to `end`. */
  copy(source: Uint8Array, start: number, end: number): void {
    const out = this.row(end - start);
    // A sample's few bytes: a loop, not a subarray made per row to copy from.
    if (end - start > 64) out.set(source.subarray(start, end), this.at);
    else for (let i = start, at = this.at; i < end; i++) out[at++] = source[i]!;
    this.at += end - start;
  }

  /** `count` rows written elsewhere: `json` holds them joined by commas, without brackets. */
  joined(json: Uint8Array, count: number): void {
    if (count <= 0) return;
    this.#room(json.length + 1);
    if (this.rows > 0) this.bytes[this.at++] = COMMA;
    this.bytes.set(json, this.at);
    this.at += json.length;
    this.rows += count;
  }

  /** `count` rows of the same `bytes`: written twice, then the `,row` units doubled by copies of themselves. */
  repeat(bytes: Uint8Array, count: number): void {
    if (count <= 0) return;
    const unit = bytes.length + 1;
    this.#room(count * unit);
    this.copy(bytes, 0, bytes.length);
    if (count === 1) return;
    const from = this.at;
    this.bytes[this.at] = COMMA;
    this.bytes.set(bytes, this.at + 1);
    this.at += unit;
    let units = 1;
    for (let left = count - 2; left > 0;) {
      const take = Math.min(units, left);
      this.bytes.copyWithin(this.at, from, from + take * unit);
      this.at += take * unit;
      units += take;
      left -= take;
    }
    this.rows += count - 1;
  }

  done(): WrittenColumn {
    this.#room(1);
    this.bytes[this.at++] = CLOSE_BRACKET;
    return { json: this.bytes.subarray(0, this.at), rows: this.rows, buffer: this.bytes };
  }

  /** Gives the buffer back unused (a column found equal to one already written). */
  discard(): void {
    giveBackColumnBuffer(this.bytes);
  }

  #room(size: number): void {
    if (this.at + size <= this.bytes.length) return;
    const grown = takeColumnBuffer(Math.max(this.bytes.length * 2, this.at + size));
    this.bytes.copy(grown, 0, 0, this.at);
    giveBackColumnBuffer(this.bytes);
    this.bytes = grown;
  }
}
