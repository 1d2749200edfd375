import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { createProxyServer } from 'http-proxy-3';
import type { Settings } from '../config/settings.ts';
import type { Logger } from '../logging/logger.ts';
import { deniedAddress, describeNetworkError, unusableTarget, UpstreamError } from './errors.ts';
import { HANDSHAKE_TIMEOUT } from './tls.ts';
import type { DataSourceTarget } from './target.ts';
import type { UpstreamConnections } from './connections.ts';

/**
 * Paths and query strings in which `new URL()` changes nothing: no character it percent-encodes
 * (space, quotes, `<>{}` and backtick, `#`), no backslash (read as `/`), and no dot segment,
 * literal or encoded, to resolve.
 */
const URL_INERT = /^\/[\w\-.~!$&()*+,;=:@%/]*(?:\?[\w\-.~!$&()*+,;=:@%/?]*)?$/;
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/** One call to stream: where it goes and how long the upstream may take to answer. */
export interface StreamedCall {
  /** Its `upstream` must be set. */
  target: DataSourceTarget;
  /** Path below the upstream's origin, still escaped, and the query (with its `?`, or ''). */
  path: string;
  search: string;
  method: string;
  /** The request body has no declared length. */
  chunked: boolean;
  timeoutMs: number;
}

/**
 * How the caller answers its client (the proxy's client-facing rules): `relay` the upstream's
 * answer, or `fail` with why there was none (before any byte of an answer was written). Each
 * returns nothing; the status the client got is read from the response when it is over.
 */
export interface StreamAnswers {
  relay(proxyRes: IncomingMessage, res: ServerResponse): void;
  fail(error: UpstreamError, res: ServerResponse, target: DataSourceTarget): void;
}

/** How a streamed call ended: the status the client got (499 when it left first). */
export type StreamOutcome = { status: number };

/**
 * Streams calls both ways through http-proxy-3 over the shared keep-alive agents (whose connections
 * check every address they use against the egress policy), with the original server's timeouts.
 * What the client is answered is the caller's: this only calls out.
 */
export class UpstreamStreamer {
  readonly #proxy = createProxyServer({});
  readonly #connections: UpstreamConnections;
  readonly #dialTimeoutMs: number;
  /** One listener per event for all calls, dispatched by incoming request. */
  readonly #calls = new WeakMap<IncomingMessage, { onRequest(proxyReq: ClientRequest): void; onResponse(proxyRes: IncomingMessage): void }>();

  constructor(settings: Settings, log: Logger, connections: UpstreamConnections) {
    this.#connections = connections;
    this.#dialTimeoutMs = settings.dataproxy.dialTimeoutSeconds * 1000;
    // Each call passes its own callback, so this only fires for errors http-proxy-3 cannot route.
    this.#proxy.on('error', (error) => log.warn({ err: error, component: 'dataproxy' }, 'proxy error'));
    // Client resets are answered by the close handler of each call; the event only needs a listener.
    this.#proxy.on('econnreset', () => {});
    this.#proxy.on('proxyReq', (proxyReq, req) => this.#calls.get(req)?.onRequest(proxyReq));
    this.#proxy.on('proxyRes', (proxyRes, req) => this.#calls.get(req)?.onResponse(proxyRes));
  }

  /** Sends `req` (its headers already the upstream's) and hands the answer, or the failure, to `answers`. */
  stream(req: IncomingMessage, res: ServerResponse, call: StreamedCall, answers: StreamAnswers): Promise<StreamOutcome> {
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
      // As Go's ResponseHeaderTimeout in the original: the wait for the response headers once the
      // request is fully written, so uploads and streamed answers may take as long as they take.
      // Connecting has its own limit (`dialTimeout`); the error callback then fails the call.
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
          answers.relay(proxyRes, res);
        },
      });

      const onError = (error: Error) => {
        if (settled) return;
        // Mid-body: the status line is gone, so all that is left is to cut the response short.
        if (res.headersSent) return void res.destroy();
        answers.fail(streamFailure(error as NodeJS.ErrnoException, call, timedOut), res, call.target);
        settle(res.statusCode);
      };
      const unusable = unusableTarget(call.target);
      if (unusable) return onError(unusable);
      this.#send(req, res, call, onError);
    });
  }

  #send(req: IncomingMessage, res: ServerResponse, call: StreamedCall, onError: (error: Error) => void): void {
    const { method } = call;
    const upstream = call.target.upstream!;
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
      const agent = this.#connections.agentFor(call.target);
      // Two literals rather than one spread over a conditional: the library copies the options
      // once more itself, so each call builds one object, not three.
      this.#proxy.web(
        req,
        res,
        verbatim
          ? {
            method,
            // The prepared upstream serves as the target as it is: with `prependPath` off the
            // library reads only its protocol, host, hostname and port.
            target: upstream as never,
            prependPath: false,
            toProxy: true,
            // The Host header is set with the rest of the request headers.
            changeOrigin: false,
            selfHandleResponse: true,
            connectTimeout: this.#dialTimeoutMs,
            agent,
          }
          : {
            method,
            target: { protocol: upstream.protocol, host: upstream.host, hostname: upstream.hostname, port: upstream.port, pathname: call.path, search: call.search } as never,
            ignorePath: true,
            changeOrigin: false,
            selfHandleResponse: true,
            connectTimeout: this.#dialTimeoutMs,
            agent,
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

/**
 * Why a streamed call got no answer, as an `UpstreamError`: `denied` by the egress policy, a
 * `timeout` (the wait for the answer, connecting, the TLS handshake), else what Go's client would
 * say failed (worded without the URL, whose query may hold secrets).
 */
function streamFailure(error: NodeJS.ErrnoException, call: StreamedCall, timedOut: boolean): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (error.code === 'EGRESS_DENIED') return deniedAddress();
  const { kind, text } = describeNetworkError(error, call.target.upstream!.host);
  const timeout = timedOut || error.code === 'ECONNECT_TIMEOUT' || error.code === HANDSHAKE_TIMEOUT;
  return Object.assign(new UpstreamError(timeout ? 'timeout' : kind, text), { code: error.code });
}
