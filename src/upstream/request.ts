import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { UpstreamConnections } from './connections.ts';
import { callError, deniedAddress, describeNetworkError, unusableTarget, type UpstreamErrorKind } from './errors.ts';
import { joinUpstreamPath, type DataSourceTarget } from './target.ts';
import { withVia } from './via.ts';

/** What a caller asks of a data source: the layer adds the URL, credentials, headers and limits. */
export interface UpstreamRequest {
  method: string;
  /** Relative to the data source URL's path, joined as the proxy joins proxy paths. */
  path: string;
  /** Raw, without `?`; '' or absent for none. */
  query?: string;
  /**
   * The kind's protocol headers (`Content-Type`, `Accept`...), set after the data source's own,
   * so a kind's protocol header wins.
   */
  headers?: Record<string, string>;
  /**
   * A client's headers to pass on, as the proxy passes them (`forwardedHeaders`: cleaned, the data
   * source's credentials and configured headers winning): resources that relay a client's request.
   */
  forwarded?: IncomingHttpHeaders;
  /** Sends the data source's token (`DataSourceTarget.tokenAuthorization`) as `Authorization`, as its kind's own client does. */
  tokenAuthorization?: boolean;
  body?: string | Buffer;
  /** The whole call, headers and body; the data source's timeout by default. */
  timeoutMs?: number;
  /** Answer bodies larger than this fail with kind `too-large`; `[dataproxy] response_limit` by default. */
  bodyLimit?: number;
}

export interface UpstreamResponse {
  status: number;
  /** The reason phrase as sent, or the standard one when the upstream sent none. */
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What one call needs of the layer besides the target and the request. */
export interface RequestLimits {
  connections: UpstreamConnections;
  /** What is left of the call's time (it may have waited for a slot). */
  timeoutMs: number;
  /** The whole limit, as the timeout's message names it. */
  timeoutSeconds: number;
  dialTimeoutMs: number;
  bodyLimit: number;
  /** 0 sends the body at once even when the request asks for `100 Continue`. */
  expectContinueTimeoutMs: number;
  viaPseudonym: string;
  /** The incoming request's `Via`, which our entry extends (the loop guard). */
  via: string | string[] | undefined;
  /** Aborting (the client went away) cancels the call: it rejects with kind `aborted`. */
  signal: AbortSignal | undefined;
  /** Adds the call's trace headers, over any a forwarded client's request carried; null when untraced. */
  traceHeaders?: ((headers: OutgoingHttpHeaders) => void) | null;
}

/** The full URL a request goes to, as Go's errors quote it. */
export function requestUrl(target: DataSourceTarget, req: Pick<UpstreamRequest, 'path' | 'query'>): { url: string; path: string } {
  const upstream = target.upstream!;
  const path = joinUpstreamPath(upstream.basePath, req.path) + (req.query ? `?${req.query}` : '');
  return { url: `${upstream.protocol}//${upstream.host}${path}`, path: path || '/' };
}

/** One buffered call to the data source with the headers the proxy would send it. */
export function sendRequest(target: DataSourceTarget, req: UpstreamRequest, limits: RequestLimits): Promise<UpstreamResponse> {
  const upstream = target.upstream;
  if (!upstream) return Promise.reject(unusableTarget(target));
  const { url, path } = requestUrl(target, req);
  const headers = requestHeaders(target, req, limits);
  const failed = (kind: UpstreamErrorKind, text: string) => callError(kind, req.method, url, text);
  const awaitContinue = req.body !== undefined && /^100-continue$/i.test(String(headers.expect ?? '')) && limits.expectContinueTimeoutMs > 0;
  const signal = limits.signal;

  return new Promise<UpstreamResponse>((resolve, reject) => {
    if (signal?.aborted) return reject(failed('aborted', 'context canceled'));
    let settled = false;
    let dialTimer: NodeJS.Timeout | undefined;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(dialTimer);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send({
      method: req.method,
      protocol: upstream.protocol,
      hostname: upstream.hostname.replace(/^\[|\]$/g, ''),
      port: upstream.port || undefined,
      path,
      headers,
      agent: limits.connections.agentFor(target) as never,
    });
    const onAbort = () => {
      finish(() => reject(failed('aborted', 'context canceled')));
      outgoing.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(() => {
      finish(() => reject(failed('timeout', timeoutText(limits.timeoutSeconds))));
      outgoing.destroy();
    }, limits.timeoutMs);
    outgoing.on('socket', (socket) => {
      if (!socket.connecting) return;
      dialTimer = setTimeout(() => {
        finish(() => reject(failed('timeout', `dial tcp ${upstream.host}: i/o timeout`)));
        outgoing.destroy();
      }, limits.dialTimeoutMs);
      socket.once('connect', () => clearTimeout(dialTimer));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EGRESS_DENIED') return finish(() => reject(deniedAddress()));
      const { kind, text } = describeNetworkError(error, upstream.host);
      finish(() => reject(failed(kind, text)));
    });
    outgoing.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.bodyLimit) {
          finish(() => reject(failed('too-large', `response body larger than ${limits.bodyLimit} bytes`)));
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (error: NodeJS.ErrnoException) => {
        const { kind, text } = describeNetworkError(error, upstream.host);
        finish(() => reject(failed(kind, text)));
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        finish(() => resolve({ status, statusText: res.statusMessage || STATUS_TEXT[status] || '', headers: res.headers, body: Buffer.concat(chunks) }));
      });
    });
    if (!awaitContinue) return void outgoing.end(req.body);
    // As Go's ExpectContinueTimeout: the body goes on `100 Continue`, or after the wait regardless.
    outgoing.flushHeaders();
    let sent = false;
    const sendBody = () => {
      if (sent) return;
      sent = true;
      clearTimeout(wait);
      outgoing.end(req.body);
    };
    const wait = setTimeout(sendBody, limits.expectContinueTimeoutMs);
    outgoing.once('continue', sendBody);
    outgoing.once('close', () => clearTimeout(wait));
  });
}

/** Go's words for a call that outlived its `Client.Timeout` (waiting for a slot included, as Go's wait for a connection is). */
export function timeoutText(seconds: number): string {
  return `timeout after ${seconds}s awaiting the data source's answer (Client.Timeout exceeded)`;
}

/**
 * What the data source is told: the forwarded client's headers (already carrying the data
 * source's own), or ours and then the data source's; the kind's protocol headers; our Via entry.
 */
function requestHeaders(target: DataSourceTarget, req: UpstreamRequest, limits: RequestLimits): OutgoingHttpHeaders {
  let headers: OutgoingHttpHeaders;
  if (req.forwarded) {
    headers = {};
    for (const name in req.forwarded) if (req.forwarded[name] !== undefined && name !== 'content-length') headers[name] = req.forwarded[name];
  } else {
    headers = { host: target.upstream!.host, 'user-agent': limits.connections.userAgent };
    for (const [name, value] of target.headers) headers[name] = value;
  }
  if (req.tokenAuthorization && target.tokenAuthorization) headers.authorization = target.tokenAuthorization;
  for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;
  if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
  headers.via = withVia(limits.via, '1.1', limits.viaPseudonym);
  limits.traceHeaders?.(headers);
  return headers;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};
