/**
 * JSON answers as the bytes a socket takes. `JSON.stringify` of a large answer builds one string of
 * megabytes in parts it then copies whole, encoding that copies it again, and a socket write of
 * a large string costs several times its encoding. A long list written one item at a time into
 * chunks of bytes costs a third of that (5,000 data sources: 3 ms rather than 9 ms); a large
 * string made into a Buffer before the write, a fraction of writing the string.
 */

/** Past this many characters an answer is better written as bytes than as a string. */
export const AS_BYTES_FROM = 32 * 1024;
/** A list of at least this many items is encoded item by item. */
const LIST_BY_ITEM_FROM = 128;
/** Bytes of each chunk a list is encoded into. */
const CHUNK_BYTES = 64 * 1024;
/**
 * A long list is looked for below objects of at most this many keys (envelopes such as `data`, a
 * root field, a connection), this many levels deep; an entity's many fields are written whole.
 */
const ENVELOPE_KEYS = 8;
const ENVELOPE_DEPTH = 8;

/** Encoded JSON: chunks of bytes, or the text when it is short or holds no long list. */
export type EncodedJson = { chunks: Buffer[]; byteLength: number } | { text: string };

/**
 * `JSON.stringify(value)`, byte for byte once encoded as UTF-8: as chunks when a long list sits
 * in it below envelopes, else as its text. `value` must have a JSON text (not undefined at the top).
 */
export function encodeJson(value: unknown): EncodedJson {
  if (!holdsLongList(value, 0)) return { text: JSON.stringify(value) };
  const writer = new ChunkWriter();
  writeValue(writer, value, 0);
  return writer.done();
}

/** `encodeJson` as one Buffer when large (or listing), else its text. */
export function jsonBody(value: unknown): Buffer | string {
  const encoded = encodeJson(value);
  if ('text' in encoded) return encoded.text.length > AS_BYTES_FROM ? Buffer.from(encoded.text) : encoded.text;
  return encoded.chunks.length === 1 ? encoded.chunks[0]! : Buffer.concat(encoded.chunks, encoded.byteLength);
}

/** `encodeJson` of a list, always item by item. */
export function encodeList(list: readonly unknown[]): { chunks: Buffer[]; byteLength: number } {
  const writer = new ChunkWriter();
  writeList(writer, list);
  return writer.done();
}

/** A plain object whose JSON is its own enumerable keys' (no `toJSON`), with few enough keys to be an envelope. */
function envelopeKeys(value: object): string[] | null {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return null;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return null;
  const keys = Object.keys(value);
  return keys.length <= ENVELOPE_KEYS ? keys : null;
}

function holdsLongList(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.length >= LIST_BY_ITEM_FROM;
  if (depth >= ENVELOPE_DEPTH) return false;
  const keys = envelopeKeys(value);
  if (!keys) return false;
  for (const key of keys) if (holdsLongList((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

function writeValue(writer: ChunkWriter, value: unknown, depth: number): void {
  if (Array.isArray(value) && value.length >= LIST_BY_ITEM_FROM) return writeList(writer, value);
  const keys = value !== null && typeof value === 'object' && !Array.isArray(value) && depth < ENVELOPE_DEPTH ? envelopeKeys(value) : null;
  if (!keys) {
    writer.text(JSON.stringify(value) ?? 'null');
    return;
  }
  writer.byte(0x7b); // {
  let first = true;
  for (const key of keys) {
    const member = (value as Record<string, unknown>)[key];
    // Members JSON leaves out: no text of their own.
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    if (!first) writer.byte(0x2c); // ,
    first = false;
    writer.text(JSON.stringify(key));
    writer.byte(0x3a); // :
    writeValue(writer, member, depth + 1);
  }
  writer.byte(0x7d); // }
}

function writeList(writer: ChunkWriter, list: readonly unknown[]): void {
  writer.byte(0x5b); // [
  for (let i = 0; i < list.length; i++) {
    if (i > 0) writer.byte(0x2c); // ,
    // What the array's own JSON writes for an item that has none (undefined, a function).
    writer.text(JSON.stringify(list[i]) ?? 'null');
  }
  writer.byte(0x5d); // ]
}

/** Text and bytes written into chunks of at least `CHUNK_BYTES`. */
class ChunkWriter {
  readonly #chunks: Buffer[] = [];
  #byteLength = 0;
  #chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  #at = 0;

  byte(value: number): void {
    this.#reserve(1);
    this.#chunk[this.#at++] = value;
  }

  text(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8 (a surrogate pair, 2 units, takes 4).
    this.#reserve(text.length * 3);
    this.#at += this.#chunk.write(text, this.#at);
  }

  done(): { chunks: Buffer[]; byteLength: number } {
    this.#chunks.push(this.#chunk.subarray(0, this.#at));
    this.#byteLength += this.#at;
    return { chunks: this.#chunks, byteLength: this.#byteLength };
  }

  /** Room for `bytes` more in the current chunk, or a new one. */
  #reserve(bytes: number): void {
    if (this.#chunk.length - this.#at >= bytes) return;
    this.#chunks.push(this.#chunk.subarray(0, this.#at));
    this.#byteLength += this.#at;
    this.#chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
    this.#at = 0;
  }
}
