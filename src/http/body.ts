import type { IncomingMessage } from 'node:http';
import { DomainError } from '../services/errors.ts';

/** Reads a request body up to `limit` bytes; past it, fails with 413 without buffering the rest. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new DomainError('PAYLOAD_TOO_LARGE', 'request body too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new DomainError('PAYLOAD_TOO_LARGE', 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
