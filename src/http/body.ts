import type { IncomingMessage } from 'node:http';
import { badRequest, tooLarge } from '../errors/domain.ts';

/**
 * Reads a request body up to `limit` bytes; past it, fails with 413 without buffering the rest.
 * Listens for chunks rather than iterating the stream: its async iterator costs a few promises per
 * chunk, which every GraphQL request and REST write paid.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: Error | null) => {
      req.off('data', onData).off('end', onEnd).off('error', done).off('close', onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // The rest stays unread; the 413 answer closes the connection.
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
