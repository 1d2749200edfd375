import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Principal } from '../auth/principal.ts';
import type { Settings } from '../config/settings.ts';
import type { Logger } from '../logging/logger.ts';
import { openApiJson } from '../rest/openapi.ts';
import type { Health } from './health.ts';
import { databaseError } from '../db/errors.ts';
import { DomainError } from '../services/errors.ts';
import { preloadBody } from './body.ts';
import { sendJson } from './respond.ts';

/** What a handler learned about a request, for the access log and metrics. */
export interface HandledRequest {
  /** The route template (never the raw URL, which would explode metric cardinality). */
  route: string;
  principal: Principal | null;
}

export interface HttpHandlers {
  rest(req: IncomingMessage, res: ServerResponse, path: string): Promise<HandledRequest>;
  graphql(req: IncomingMessage, res: ServerResponse): Promise<HandledRequest>;
  proxy(req: IncomingMessage, res: ServerResponse, path: string): Promise<HandledRequest>;
  health(): Promise<Health>;
  /** Prometheus exposition, or null when `[metrics] enabled` is off. */
  metrics: { contentType: string; render(): Promise<string> } | null;
  onRequestDone(method: string, route: string, status: number, seconds: number): void;
}

const PROXY_PREFIX = '/api/datasources/proxy/';

/** The original server's default headers, except on proxied responses (those are the upstream's). */
const DEFAULT_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-frame-options': 'deny',
  'x-content-type-options': 'nosniff',
  'x-xss-protection': '1; mode=block',
};

/** Answers to requests node:http refuses before any handler runs (default: 400). */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request timeout'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'request header fields too large'],
};

/** node:http dispatch: health and metrics, the proxy, `/graphql`, and `/api/*`; one access-log line each. */
export function createHttpServer(settings: Settings, handlers: HttpHandlers, log: Logger): Server {
  const accessLevel = settings.server.routerLogging ? 'info' : 'debug';

  const headersTimeoutMs = settings.server.readHeaderTimeoutSeconds * 1000;
  // Each connection's latest response, so a parse error can tell whether it is still under way.
  const latestResponse = new WeakMap<Socket, ServerResponse>();
  // node:http enforces headersTimeout only when it sweeps its connections (every 30 s by default).
  const server = createServer({ connectionsCheckingInterval: Math.max(250, Math.min(30_000, headersTimeoutMs / 4)) }, (req, res) => {
    const started = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const handled: HandledRequest = { route: 'unmatched', principal: null };
    latestResponse.set(req.socket, res);

    res.once('close', () => {
      const seconds = (performance.now() - started) / 1000;
      const status = res.headersSent ? res.statusCode : 499;
      handlers.onRequestDone(method, handled.route, status, seconds);
      log[accessLevel]({
        method,
        route: handled.route,
        status,
        durationMs: Math.round(seconds * 1e4) / 10,
        userId: handled.principal?.userId ?? undefined,
        orgId: handled.principal?.orgId ?? undefined,
      }, 'request');
    });
    const fail = (error: unknown) => {
      const database = databaseError(error);
      if (database) log.warn({ err: error, method, route: handled.route }, 'request failed: database unavailable');
      else log.error({ err: error, method, route: handled.route }, 'request failed');
      if (!res.headersSent) sendJson(res, database?.status ?? 500, { message: database?.message ?? 'Internal Server Error' });
      else res.destroy();
    };
    const record = (work: Promise<HandledRequest>) =>
      work.then((info) => {
        handled.route = info.route;
        handled.principal = info.principal;
      }, fail);

    try {
      if (path.startsWith(PROXY_PREFIX)) {
        handled.route = '/api/datasources/proxy/*';
        record(handlers.proxy(req, res, path));
        return;
      }
      for (const [name, value] of Object.entries(DEFAULT_HEADERS)) res.setHeader(name, value);
      // GET and HEAD, as the original answers load balancers' HEAD probes too; other methods fall through.
      if (path === '/api/health' && (method === 'GET' || method === 'HEAD')) {
        handled.route = '/api/health';
        handlers.health().then((health) => sendJson(res, health.status, health.body), fail);
      } else if (path === '/metrics' && method === 'GET' && handlers.metrics) {
        handled.route = '/metrics';
        const metrics = handlers.metrics;
        metrics.render().then((text) => {
          res.writeHead(200, { 'content-type': metrics.contentType });
          res.end(text);
        }, fail);
      } else if (path === '/api/openapi.json' && method === 'GET') {
        // The REST contract is public, like the routes' shapes it describes: no credentials needed.
        handled.route = '/api/openapi.json';
        const document = openApiJson();
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(document) });
        res.end(document);
      } else if (path === '/graphql') {
        handled.route = '/graphql';
        preloadBody(req, settings.server.requestBodyLimitBytes).then(
          () => record(handlers.graphql(req, res)),
          (error: unknown) => {
            if (!(error instanceof DomainError)) throw error;
            sendJson(res, error.status, { errors: [{ message: error.message, extensions: { code: error.code } }] }, { connection: 'close' });
          },
        ).catch(fail);
      } else if (path.startsWith('/api/') || path === '/api') {
        record(handlers.rest(req, res, path));
      } else {
        sendJson(res, 404, { message: 'Not found' });
      }
    } catch (error) {
      fail(error);
    }
  });
  // Slow-header clients are cut off; bodies may stream for long (proxy), so no overall request timeout.
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = 0;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', (error, socket) => {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    // A malformed body arriving after (or while) its request was answered: a second answer would be
    // read as the reply to a request never sent, so the connection just ends.
    const last = latestResponse.get(socket as Socket);
    const answering = last !== undefined && last.headersSent && !(last.writableFinished && last.req.complete);
    if (socket.writable && !answering && !code.startsWith('ECONN')) {
      const [status, reason, message] = CLIENT_ERRORS[code] ?? [400, 'Bad Request', 'bad request'];
      // A HEAD request's answer has no body, even when the request was malformed.
      const isHead = (error as { rawPacket?: Buffer }).rawPacket?.toString('latin1', 0, 5) === 'HEAD ';
      const body = isHead ? '' : JSON.stringify({ message });
      socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${isHead ? 0 : body.length}\r\nconnection: close\r\n\r\n${body}`);
    } else socket.destroy();
  });
  return server;
}
