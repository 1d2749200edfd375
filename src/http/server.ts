import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../logging/logger.ts';
import type { Settings } from '../config/settings.ts';
import { sendJson } from './respond.ts';

export interface HttpHandlers {
  rest(req: IncomingMessage, res: ServerResponse, path: string): Promise<unknown>;
  graphql(req: IncomingMessage, res: ServerResponse): unknown;
  /** The data source proxy; absent until it is wired in. */
  proxy?(req: IncomingMessage, res: ServerResponse, path: string): Promise<unknown>;
}

const PROXY_PREFIX = '/api/datasources/proxy/';

/** The original server's default headers, except on proxied responses (those are the upstream's). */
const DEFAULT_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-frame-options': 'deny',
  'x-content-type-options': 'nosniff',
  'x-xss-protection': '1; mode=block',
};

/** node:http dispatch: the proxy, `/graphql`, and `/api/*`. */
export function createHttpServer(settings: Settings, handlers: HttpHandlers, log: Logger): Server {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const done = (error: unknown) => {
      log.error({ err: error, method: req.method, path }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { message: 'Internal Server Error' });
      else res.destroy();
    };
    try {
      if (path.startsWith(PROXY_PREFIX) && handlers.proxy) {
        handlers.proxy(req, res, path).catch(done);
        return;
      }
      for (const [name, value] of Object.entries(DEFAULT_HEADERS)) res.setHeader(name, value);
      if (path === '/graphql') {
        Promise.resolve(handlers.graphql(req, res)).catch(done);
      } else if (path.startsWith('/api/') || path === '/api') {
        handlers.rest(req, res, path).catch(done);
      } else {
        sendJson(res, 404, { message: 'Not found' });
      }
    } catch (error) {
      done(error);
    }
  });
  // Slow-header clients are cut off; bodies may stream for long (proxy), so no overall request timeout.
  server.headersTimeout = settings.server.readHeaderTimeoutSeconds * 1000;
  server.requestTimeout = 0;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', (error, socket) => {
    if (socket.writable && !(error as NodeJS.ErrnoException).code?.startsWith('ECONN')) {
      const body = JSON.stringify({ message: 'bad request' });
      socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    } else socket.destroy();
  });
  return server;
}
