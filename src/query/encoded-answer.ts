import type { ServerResponse } from 'node:http';
import { releaseColumns } from './frames/column-buffers.ts';
import type { EncodedChunks } from './frames/encode.ts';
import type { DataResponse } from './frames/frame.ts';

/**
 * A query's answer as the SDK's JSON, ready to write: it owns what building it took, its column
 * buffers and its bytes in the instance's answer budget, and gives them back itself, so whoever
 * writes it manages nothing of the query layer. The budget comes back once the answer is written
 * or its client gone; the column buffers (reused by later answers) only once it is written whole,
 * or when it is dropped unwritten (`discard`), since a socket may still hold chunks that point into
 * them.
 */
export class EncodedAnswer {
  readonly status: number;
  readonly byteLength: number;
  readonly #chunks: readonly Uint8Array[];
  readonly #responses: Map<string, DataResponse>;
  readonly #budget: () => void;
  #budgetHeld = true;
  #columnsHeld = true;

  constructor(status: number, encoded: EncodedChunks, responses: Map<string, DataResponse>, releaseBudget: () => void) {
    this.status = status;
    this.byteLength = encoded.byteLength;
    this.#chunks = encoded.chunks;
    this.#responses = responses;
    this.#budget = releaseBudget;
  }

  /** Writes the answer as the whole response: status, JSON headers, the chunks in one corked write. */
  writeTo(res: ServerResponse): void {
    // A client already gone: nothing is written, and nothing will be.
    if (res.destroyed) return this.discard();
    res.once('close', () => this.#releaseBudget());
    try {
      res.writeHead(this.status, { 'content-type': 'application/json', 'content-length': this.byteLength });
    } catch (error) {
      this.discard();
      throw error;
    }
    // Corked, the chunks leave in one writev when `end` uncorks.
    res.cork();
    for (const chunk of this.#chunks) res.write(chunk);
    res.end(() => this.discard());
  }

  /** Nothing reads the answer any more (written, or dropped unwritten): its buffers and bytes go back, once. */
  discard(): void {
    if (this.#columnsHeld) {
      this.#columnsHeld = false;
      releaseColumns(this.#responses.values());
    }
    this.#releaseBudget();
  }

  #releaseBudget(): void {
    if (!this.#budgetHeld) return;
    this.#budgetHeld = false;
    this.#budget();
  }
}
