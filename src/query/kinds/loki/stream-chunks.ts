import type { Steps } from '../../slices.ts';
import { elementsOf, members, notSimple, simply, valueEnd, type ResultLayout } from '../result-chunks.ts';

/**
 * A large Loki streams answer cut into documents of about a chunk's bytes of log lines each, so
 * that its 40,000 lines are read in several passes with turns of the event loop in between: each
 * stream (`{"stream":{...},"values":[...]}`, those two members in that order) is found by its
 * bytes, and one holding more lines than a chunk is cut into several streams of the same labels,
 * which the reader writes as the rows of one (a row carries its stream's labels). Every line
 * keeps its bytes and its place; the frame's ids are made once all rows are in. A stream of
 * another shape answers null, and the caller reads the whole answer at once. Pure.
 */

export interface StreamLayout {
  /** The labels object's bytes. */
  labels: [start: number, end: number];
  /** Each entry's bytes (`["<ns>", "<line>"]`). */
  entries: Array<[start: number, end: number]>;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** Where each stream of the result lies, or null. */
export function* streamLayouts(body: Uint8Array, layout: ResultLayout): Steps<StreamLayout[] | null> {
  return yield* simply((function* (): Steps<StreamLayout[]> {
    const streams: StreamLayout[] = [];
    for (const [start] of layout.elements) {
      let labels: [number, number] | undefined;
      let entries: Array<[number, number]> | undefined;
      yield* members(body, start, function* (name, at) {
        if (name === 'stream' && !labels && !entries && body[at] === OPEN_BRACE) {
          labels = [at, valueEnd(body, at)];
          return labels[1];
        }
        if (name !== 'values' || !labels || entries || body[at] !== OPEN_BRACKET) notSimple();
        entries = [];
        return (yield* elementsOf(body, at, entries)) + 1;
      });
      if (!labels || !entries) notSimple();
      streams.push({ labels, entries });
      yield;
    }
    return streams;
  })());
}

const HEAD = Buffer.from('{"data":{"resultType":"streams","result":[');
const TAIL = Buffer.from(']}}');
const STREAM = Buffer.from('{"stream":');
const VALUES = Buffer.from(',"values":[');
const END_STREAM = Buffer.from(']}');
const COMMA = Buffer.from(',');

/** Documents of about `chunkBytes` of entries each, holding every stream in order (one without entries too). */
export function* streamChunkDocuments(body: Uint8Array, streams: readonly StreamLayout[], chunkBytes: number): Generator<Buffer> {
  let parts: Uint8Array[] = [HEAD];
  let size = 0;
  const flush = () => {
    parts.push(TAIL);
    const doc = Buffer.concat(parts);
    parts = [HEAD];
    size = 0;
    return doc;
  };
  for (const { labels, entries } of streams) {
    let first = 0;
    do {
      let last = first;
      while (last < entries.length && (last === first || size + entries[last]![1] - entries[first]![0] <= chunkBytes)) last++;
      if (parts.length > 1) parts.push(COMMA);
      parts.push(STREAM, body.subarray(labels[0], labels[1]), VALUES);
      if (last > first) parts.push(body.subarray(entries[first]![0], entries[last - 1]![1]));
      parts.push(END_STREAM);
      size += last > first ? entries[last - 1]![1] - entries[first]![0] : 0;
      if (size >= chunkBytes) yield flush();
      first = last;
    } while (first < entries.length);
  }
  if (parts.length > 1) yield flush();
}
