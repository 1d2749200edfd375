import type { IncomingMessage } from 'node:http';
import { badRequest, tooLarge } from '../errors/domain.ts';

/** Reads a request body up to `limit` bytes; past it, fails with 413 without buffering the rest. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
 * Reads a `/graphql` request body under the same limit as REST (yoga would buffer any size) and
 * hands it over as an already-read body: yoga's node adapter takes `req.body` when it is set and
 * has own keys. A one-chunk async iterable, because `Object.keys` of a Buffer lists every byte.
 */
export async function preloadBody(req: IncomingMessage, limit: number): Promise<void> {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const body = await readBody(req, limit);
  if (body.length === 0) return;
  (req as IncomingMessage & { body?: unknown }).body = {
    bytes: body.length,
    async *[Symbol.asyncIterator]() {
      yield body;
    },
  };
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
