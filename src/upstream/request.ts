import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { MESSAGES } from '../errors/messages.ts';
import type { UpstreamConnections } from './connections.ts';
import { describeNetworkError, goMethod, UpstreamError, type UpstreamErrorKind } from './errors.ts';
import { joinUpstreamPath, type DataSourceTarget } from './target.ts';

/** What a caller asks of a data source: the layer adds the URL, credentials, headers and limits. */
export interface UpstreamRequest {
  method: string;
  /** Relative to the data source URL's path, joined as the proxy joins proxy paths. */
  path: string;
  /** Raw, without `?`; '' or absent for none. */
  query?: string;
  /** Set after the data source's own headers, so a caller's protocol header wins. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Aborting (the client went away) cancels the call: it rejects with kind `aborted`. */
  signal?: AbortSignal;
  /** The whole call, headers and body; `jsonData.timeout` or `[dataproxy] timeout` by default. */
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
  timeoutMs: number;
  dialTimeoutMs: number;
  bodyLimit: number;
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
  if (!upstream) return Promise.reject(new UpstreamError('invalid-url', MESSAGES.proxy.invalidUrl(target.rawUrl)));
  const { url, path } = requestUrl(target, req);
  const headers: Record<string, string> = { host: upstream.host, 'user-agent': limits.connections.userAgent };
  for (const [name, value] of target.headers) headers[name] = value;
  for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;
  if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
  const failed = (kind: UpstreamErrorKind, text: string) => new UpstreamError(kind, `${goMethod(req.method)} "${url}": ${text}`);

  return new Promise<UpstreamResponse>((resolve, reject) => {
    if (req.signal?.aborted) return reject(failed('aborted', 'context canceled'));
    let settled = false;
    let dialTimer: NodeJS.Timeout | undefined;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(dialTimer);
      req.signal?.removeEventListener('abort', onAbort);
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
      agent: limits.connections.agentFor(upstream) as never,
    });
    const onAbort = () => {
      finish(() => reject(failed('aborted', 'context canceled')));
      outgoing.destroy();
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(() => {
      finish(() => reject(failed('timeout', `timeout after ${limits.timeoutMs / 1000}s awaiting the data source's answer (Client.Timeout exceeded)`)));
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
      if (error.code === 'EGRESS_DENIED') return finish(() => reject(new UpstreamError('denied', error.message)));
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
    outgoing.end(req.body);
  });
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};
