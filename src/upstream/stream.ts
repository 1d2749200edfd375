import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { createProxyServer } from 'http-proxy-3';
import type { Settings } from '../config/settings.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import { responseHeaders } from './headers.ts';
import type { UpstreamBase } from './target.ts';
import type { UpstreamConnections } from './connections.ts';

/**
 * Paths and query strings in which `new URL()` changes nothing: no character it percent-encodes
 * (space, quotes, `<>{}` and backtick, `#`), no backslash (read as `/`), and no dot segment,
 * literal or encoded, to resolve.
 */
const URL_INERT = /^\/[\w\-.~!$&()*+,;=:@%/]*(?:\?[\w\-.~!$&()*+,;=:@%/?]*)?$/;
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/** One call to stream: where it goes and how long the upstream may take to answer. */
export interface UpstreamCall {
  upstream: UpstreamBase;
  /** Path below the upstream's origin, still escaped, and the query (with its `?`, or ''). */
  path: string;
  search: string;
  method: string;
  /** The request body has no declared length. */
  chunked: boolean;
  timeoutMs: number;
}

/** How a streamed call ended: the status the client got (499 when it left first). */
export type StreamOutcome = { status: number };

/**
 * Streams calls both ways through http-proxy-3 over the shared keep-alive agents (whose connections
 * check every address they use against the egress policy), with the original server's timeouts,
 * its answer to an upstream 401, and the response size cap.
 */
export class UpstreamStreamer {
  readonly #proxy = createProxyServer({});
  readonly #connections: UpstreamConnections;
  readonly #dialTimeoutMs: number;
  readonly #responseLimit: number;
  readonly #log: Logger;
  /** One listener per event for all calls, dispatched by incoming request. */
  readonly #calls = new WeakMap<IncomingMessage, { onRequest(proxyReq: ClientRequest): void; onResponse(proxyRes: IncomingMessage): void }>();

  constructor(settings: Settings, log: Logger, connections: UpstreamConnections) {
    const dataproxy = settings.dataproxy;
    this.#connections = connections;
    this.#dialTimeoutMs = dataproxy.dialTimeoutSeconds * 1000;
    this.#responseLimit = dataproxy.responseLimit;
    this.#log = log;
    // Each call passes its own callback, so this only fires for errors http-proxy-3 cannot route.
    this.#proxy.on('error', (error) => log.warn({ err: error, component: 'dataproxy' }, 'proxy error'));
    // Client resets are answered by the close handler of each call; the event only needs a listener.
    this.#proxy.on('econnreset', () => {});
    this.#proxy.on('proxyReq', (proxyReq, req) => this.#calls.get(req)?.onRequest(proxyReq));
    this.#proxy.on('proxyRes', (proxyRes, req) => this.#calls.get(req)?.onResponse(proxyRes));
  }

  /** Sends `req` (its headers already the upstream's) and relays the answer to `res`. */
  stream(req: IncomingMessage, res: ServerResponse, call: UpstreamCall): Promise<StreamOutcome> {
    return new Promise<StreamOutcome>((done) => {
      let settled = false;
      let responded = false;
      let timedOut = false;
      let outgoing: ClientRequest | null = null;
      let timer: NodeJS.Timeout | undefined;
      const settle = (status: number) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#calls.delete(req);
        done({ status });
      };
      const answer = (status: number, body = '') => {
        if (!res.headersSent && !res.destroyed) {
          if (body) res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          else res.writeHead(status, { 'content-length': '0' });
          res.end(body);
        }
        settle(status);
      };
      // As Go's ResponseHeaderTimeout in the original: the wait for the response headers once the
      // request is fully written, so uploads and streamed answers may take as long as they take.
      // Connecting has its own limit (`dialTimeout`); the error callback then answers 504.
      const awaitHeaders = () => {
        if (settled || responded) return;
        timer = setTimeout(() => {
          timedOut = true;
          outgoing?.destroy();
        }, call.timeoutMs);
      };
      // A client that goes away ends the call; http-proxy-3 destroys the upstream request then.
      res.on('close', () => settle(res.writableFinished ? res.statusCode : 499));

      this.#calls.set(req, {
        onRequest(proxyReq) {
          outgoing = proxyReq;
          if (settled) proxyReq.destroy();
          else proxyReq.once('finish', awaitHeaders);
        },
        onResponse: (proxyRes) => {
          responded = true;
          clearTimeout(timer);
          if (settled || res.headersSent) {
            proxyRes.destroy();
            return;
          }
          this.#relay(proxyRes, res);
        },
      });

      const onError = (error: Error) => {
        if (settled) return;
        const code = (error as NodeJS.ErrnoException).code;
        // Mid-body: the status line is gone, so all that is left is to cut the response short.
        if (res.headersSent) return void res.destroy();
        if (code === 'EGRESS_DENIED') return answer(403, JSON.stringify({ message: MESSAGES.proxy.addressDenied }));
        // As the original: an empty 504 on timeout, an empty 502 for any other upstream failure.
        const status = timedOut || code === 'ECONNECT_TIMEOUT' ? 504 : 502;
        this.#log.debug({ component: 'dataproxy', code, status }, 'upstream call failed');
        answer(status);
      };
      this.#send(req, res, call, onError);
    });
  }

  /** The upstream's answer to the client: status and cleaned headers, then the body under the cap. */
  #relay(proxyRes: IncomingMessage, res: ServerResponse): void {
    proxyRes.on('error', () => res.destroy());
    if (proxyRes.statusCode === 401) {
      // The data source's 401 must not look like ours: clients would drop their own session.
      proxyRes.resume();
      res.writeHead(400, { 'content-security-policy': 'sandbox' });
      res.end(MESSAGES.proxy.upstreamUnauthorized);
      return;
    }
    res.writeHead(proxyRes.statusCode ?? 502, responseHeaders(proxyRes.headers));
    const limit = this.#responseLimit;
    if (limit > 0) {
      // `[dataproxy] response_limit`: the original reads at most that many bytes, then fails the
      // body; registered before the pipe, so the chunk over the limit is never written.
      let bytes = 0;
      proxyRes.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > limit) {
          proxyRes.destroy();
          res.destroy();
        }
      });
    }
    proxyRes.pipe(res);
  }

  #send(req: IncomingMessage, res: ServerResponse, call: UpstreamCall, onError: (error: Error) => void): void {
    const { upstream, method } = call;
    // http-proxy-3's deleteLength pass sets `content-length: 0` on a DELETE or OPTIONS without one,
    // which would truncate a chunked body: it is shown another method while the passes run (they
    // run synchronously), and the upstream gets the real one through the `method` option.
    const hideMethod = call.chunked && (method === 'DELETE' || method === 'OPTIONS');
    if (hideMethod) req.method = 'POST';
    const incomingUrl = req.url;
    // http-proxy-3 parses the target's path and the incoming URL with `new URL()` on every call.
    // A path that parsing would leave as it is goes as the request URL, taken verbatim
    // (`toProxy`); any other is given as the target's path, for the parser to normalise.
    const upstreamUrl = call.path + call.search;
    const verbatim = URL_INERT.test(upstreamUrl) && !DOT_SEGMENT.test(call.path);
    if (verbatim) req.url = upstreamUrl;
    try {
      this.#proxy.web(
        req,
        res,
        {
          method,
          // The prepared upstream serves as the target as it is: with `prependPath` off the library
          // reads only its protocol, host, hostname and port.
          ...(verbatim
            ? { target: upstream as never, prependPath: false, toProxy: true }
            : { target: { protocol: upstream.protocol, host: upstream.host, hostname: upstream.hostname, port: upstream.port, pathname: call.path, search: call.search } as never, ignorePath: true }),
          // The Host header is set with the rest of the request headers.
          changeOrigin: false,
          selfHandleResponse: true,
          connectTimeout: this.#dialTimeoutMs,
          agent: this.#connections.agentFor(upstream),
        },
        onError,
      );
    } catch (error) {
      onError(error as Error);
    } finally {
      // http-proxy-3 reads both synchronously, while it sets up the upstream request.
      if (hideMethod) req.method = method;
      req.url = incomingUrl;
    }
  }

  close(): void {
    this.#connections.destroy();
    this.#proxy.removeAllListeners();
  }
}
