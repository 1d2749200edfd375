import type { DataResponse } from './frame.ts';

/**
 * Buffers for columns written from bytes (a log query's lines, a range query's samples), used again once
 * the answer holding them has been sent. A fresh megabyte outside the JS heap for every answer
 * makes V8 run a full collection of the whole heap every few large answers; buffers that come
 * back keep that off.
 *
 * Sizes are powers of two (256 bytes up), so a buffer fits the next column of about its size; at most
 * `MAX_POOLED_BYTES` wait here, the rest is left to the garbage collector. A buffer comes back
 * only through `releaseColumns`, called by the one owner of an answer once its bytes are written:
 * the encoded answer of `/api/ds/query` (`query/encoded-answer.ts`). Frames kept longer (the
 * graph, live queries) never give theirs back, and theirs are collected as any memory.
 */

const MAX_POOLED_BYTES = 32 * 1024 * 1024;
const MIN_SIZE_CLASS = 8;

const free: Buffer[][] = [];
let pooledBytes = 0;

/** A buffer of at least `size` bytes, its content undefined. */
export function takeColumnBuffer(size: number): Buffer {
  const sizeClass = Math.max(MIN_SIZE_CLASS, Math.ceil(Math.log2(Math.max(1, size))));
  const buffer = free[sizeClass]?.pop();
  if (buffer) {
    pooledBytes -= buffer.length;
    return buffer;
  }
  // Not from Node's shared slab: a slice of it could not come back alone.
  return Buffer.allocUnsafeSlow(2 ** sizeClass);
}

/** A buffer from `takeColumnBuffer` that nothing reads any more. */
export function giveBackColumnBuffer(buffer: Buffer): void {
  const sizeClass = Math.log2(buffer.length);
  if (!Number.isInteger(sizeClass) || sizeClass < MIN_SIZE_CLASS || pooledBytes + buffer.length > MAX_POOLED_BYTES) return;
  (free[sizeClass] ??= []).push(buffer);
  pooledBytes += buffer.length;
}

/**
 * Gives back the buffers of every column written from bytes in these answers, once they are sent
 * and nothing reads their frames again. A column is given back once, however often it appears.
 */
export function releaseColumns(responses: Iterable<DataResponse>): void {
  for (const response of responses) {
    for (const frame of response.frames ?? []) {
      for (const field of frame.fields) {
        for (const written of [field.written, field.writtenNanos]) {
          if (!written?.buffer) continue;
          giveBackColumnBuffer(written.buffer);
          written.buffer = undefined;
        }
      }
    }
  }
}
