import type { ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';

/**
 * A subscription's results written to the response as Server-Sent Events, byte for byte as yoga's
 * SSE result processor writes them (`:` pings, `event: next` with the result, `event: complete` at
 * the end), without its Fetch Response, ReadableStream, encoder and pipe: those, and a ping timer,
 * are kept by every open subscription, and a thousand open panels kept a thousand of each. The
 * next result is asked for only once the socket has taken the last one, so a slow client holds
 * back its stream (whose source then keeps only the latest state) instead of a queue here.
 */

/** Yoga's SSE response headers, spelled and ordered as it writes them. */
export const EVENT_STREAM_HEADERS: Record<string, string> = { 'Content-Type': 'text/event-stream', Connection: 'keep-alive', 'Cache-Control': 'no-cache', 'Content-Encoding': 'none' };
const PING = ':\n\n';
// Yoga's interval, shortened as it does in tests.
const PING_INTERVAL_MS = process.env.NODE_ENV === 'test' ? 300 : 12_000;

/** Every open stream is pinged by one timer. */
const open = new Set<ServerResponse>();
let pinger: NodeJS.Timeout | null = null;

function watch(res: ServerResponse): void {
  open.add(res);
  pinger ??= setInterval(() => {
    // A stream whose socket is still full has no room for a ping.
    for (const stream of open) if (!stream.writableNeedDrain && !stream.writableEnded && !stream.destroyed) stream.write(PING);
  }, PING_INTERVAL_MS).unref();
}

function unwatch(res: ServerResponse): void {
  open.delete(res);
  if (open.size === 0 && pinger) {
    clearInterval(pinger);
    pinger = null;
  }
}

/** Writes the results until the source ends or the client goes. */
export async function writeEventStream(res: ServerResponse, results: AsyncIterable<ExecutionResult>): Promise<void> {
  const iterator = results[Symbol.asyncIterator]();
  let closed = false;
  let drained: (() => void) | null = null;
  const onClose = () => {
    closed = true;
    // Not pinged again, even should the source never answer the `return` below.
    unwatch(res);
    drained?.();
    void iterator.return?.();
  };
  const onDrain = () => drained?.();
  res.once('close', onClose);
  res.on('drain', onDrain);
  res.writeHead(200, EVENT_STREAM_HEADERS);
  // As yoga: a first ping, since some browsers wait for a byte before they hand on the headers.
  res.write(PING);
  watch(res);
  try {
    while (!closed) {
      const next = await iterator.next();
      if (closed) break;
      let room = true;
      if (next.value != null) room = res.write(`event: next\ndata: ${eventData(next.value)}\n\n`);
      if (next.done) {
        res.end('event: complete\ndata:\n\n');
        return;
      }
      if (!room) await new Promise<void>((resolve) => (drained = resolve));
      drained = null;
    }
  } catch (error) {
    res.destroy(error as Error);
  } finally {
    unwatch(res);
    res.off('close', onClose);
    res.off('drain', onDrain);
  }
}

/** Yoga's stringifier: a result's JSON without the internal `http` (and `unexpected`) extensions. */
export function eventData(result: ExecutionResult & { stringify?: (result: unknown) => string }): string {
  const stringify = result.stringify ?? JSON.stringify;
  const http = (result.extensions as { http?: unknown } | undefined)?.http;
  if (!result.errors?.length && http === undefined) return stringify(result);
  const sanitized: Record<string, unknown> = { ...result };
  if (result.errors) {
    sanitized.errors = result.errors.map((error) => {
      const json = (typeof error.toJSON === 'function' ? error.toJSON() : error) as { extensions?: Record<string, unknown> };
      const { http: _http, unexpected: _unexpected, ...extensions } = json.extensions ?? {};
      return { ...json, extensions: Object.keys(extensions).length ? extensions : undefined };
    });
  }
  if (result.extensions) {
    const { http: _http, ...extensions } = result.extensions as Record<string, unknown>;
    sanitized.extensions = Object.keys(extensions).length ? extensions : undefined;
  }
  return stringify(sanitized);
}
