import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, tooLarge } from '../errors/domain.ts';

/** The body length a request declares (Content-Length), or null when it declares none (chunked, or no body). */
export function declaredLength(req: IncomingMessage): number | null {
  const header = req.headers['content-length'];
  if (header === undefined) return null;
  const length = Number(header);
  return Number.isFinite(length) ? length : null;
}

/**
 * Reads a request body up to `limit` bytes; past it, fails with 413 without buffering the rest (a
 * declared length past it fails before anything is read). Listens for chunks rather than iterating
 * the stream: its async iterator costs a few promises per chunk, which every GraphQL request and
 * REST write paid.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  if ((declaredLength(req) ?? 0) > limit) return Promise.reject(tooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: Error | null) => {
      req.off('data', onData).off('end', onEnd).off('error', done).off('close', onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? ownBytes(chunks[0]!) : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // The rest is left to `refuseBody`, which answers first.
      req.pause();
      done(tooLarge());
    };
    const onEnd = () => done(null);
    // Closed before its end: the client went away mid-body.
    const onClose = () => done(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    req.on('data', onData).on('end', onEnd).on('error', done).on('close', onClose);
  });
}

/**
 * A chunk as its own bytes when it is a small part of what the socket read (the body behind the
 * request's headers): a request that stays open, a subscription, would otherwise keep the whole
 * read alive through it, a few kilobytes for each of a thousand open streams.
 */
function ownBytes(chunk: Buffer): Buffer {
  return chunk.buffer.byteLength > 2 * chunk.length + 1024 ? Buffer.from(chunk) : chunk;
}

/** At most this much of a refused body is read and thrown away, for at most this long; past either, the connection is cut. */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
export const DISCARD_MAX_MS = 5_000;

/**
 * Answers a body refused for its size (413) at once, and closes the connection once the client has
 * stopped sending, as nginx does: the answer is written whole (its length declared, so the client
 * can read it) but ended only when the body is in, the client has gone, or the bounds above are
 * passed. Meanwhile the rest of the body is read and thrown away. Closing at once would leave input
 * arriving on a closed socket, which resets the connection, and a reset can destroy the answer
 * before the client reads it (RFC 9112, section 9.6). A declared length past DISCARD_MAX_BYTES is
 * not waited for at all.
 */
export function refuseBody(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' });
  if (req.complete || req.destroyed || (declaredLength(req) ?? 0) > DISCARD_MAX_BYTES) return void res.end(text);
  res.write(text);
  let discarded = 0;
  const end = () => {
    clearTimeout(timer);
    req.off('data', onData).off('end', end).off('close', end);
    res.end();
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_MAX_BYTES) end();
  };
  const timer = setTimeout(end, DISCARD_MAX_MS);
  req.on('data', onData).on('end', end).on('close', end);
  // Paused where `readBody` stopped reading, or not read yet.
  req.resume();
}

/**
 * A REST body: empty, or a JSON object sent as application/json (400 "bad request data" otherwise).
 * PostgreSQL can store no NUL character, in text or in jsonb: refused here rather than failing there.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const raw = await readBody(req, limit);
  if (raw.length === 0) return {};
  if (!isJsonContentType(req.headers['content-type'])) throw badRequest();
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw badRequest();
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || containsNul(body)) throw badRequest();
  return body as Record<string, unknown>;
}

/** True when the Content-Type's media type is exactly application/json (parameters allowed). */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/**
 * A `/graphql` request body, read under the same limit as REST (yoga would buffer any size); null
 * for GET and HEAD, and for an empty body.
 */
export async function readGraphQLBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  if (req.method === 'GET' || req.method === 'HEAD') return null;
  const body = await readBody(req, limit);
  return body.length === 0 ? null : body;
}

/** Whether any key or string in a parsed JSON value holds U+0000 (iterative: nesting may be deep). */
function containsNul(value: unknown): boolean {
  const pending = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (next.includes('\0')) return true;
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
    } else if (next !== null && typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        if (key.includes('\0')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}
