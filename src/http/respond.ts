import type { ServerResponse } from 'node:http';
import { AS_BYTES_FROM, encodeJson } from '../net/json-encode.ts';

/** `body` as JSON, large answers written as bytes (net/json-encode.ts says why). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const encoded = encodeJson(body);
  if ('chunks' in encoded) {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': encoded.byteLength, ...headers });
    // Corked, the chunks leave in one writev when `end` uncorks.
    res.cork();
    for (const chunk of encoded.chunks) res.write(chunk);
    res.end();
    return;
  }
  // Node writes a small string together with the headers in one call, cheaper than a buffer.
  const payload = encoded.text.length > AS_BYTES_FROM ? Buffer.from(encoded.text) : encoded.text;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length, ...headers });
  res.end(payload);
}
