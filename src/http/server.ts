import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Settings } from '../config/settings.ts';
import { createClientErrorHandling } from './client-errors.ts';

/**
 * The node:http server: connection limits and timeouts, and the answers to bytes that are no
 * request at all. Every request it parses goes to `handle`, the front door.
 */
export function createHttpServer(settings: Settings, handle: (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void): Server {
  const headersTimeoutMs = settings.server.readHeaderTimeoutSeconds * 1000;
  const clientErrors = createClientErrorHandling();
  // node:http enforces headersTimeout only when it sweeps its connections (every 30 s by default).
  const server = createServer({
    connectionsCheckingInterval: Math.max(250, Math.min(30_000, headersTimeoutMs / 4)),
    // node refuses a head whose counted bytes reach its limit; the setting is the largest accepted.
    maxHeaderSize: settings.server.maxHeaderBytes + 1,
  }, (req, res) => {
    clientErrors.track(req, res);
    handle(req, res);
  });
  // Slow-header clients are cut off; bodies may stream for long (proxy), so no overall request timeout.
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = 0;
  server.keepAliveTimeout = settings.server.keepAliveTimeoutSeconds * 1000;
  server.on('clientError', clientErrors.onClientError);
  // `Expect: 100-continue`: the handler sends the go-ahead once it knows the body may be wanted,
  // so a body refused at once (413) is never sent at all.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    clientErrors.track(req, res);
    handle(req, res, true);
  });
  return server;
}

/**
 * From now on every response asks the client to close its connection (`Connection: close`), and
 * node:http closes it once the response is sent: while an instance drains before stopping, a load
 * balancer's pooled keep-alive connections end one by one after an answer, never by surprise under
 * a request it is sending. Event streams keep their connection for as long as they last.
 */
export function closeConnectionsAfterResponses(server: Server): void {
  const closing = (_req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('connection', 'close');
  };
  // Before the front door's own listener, so that its responses carry the header.
  server.prependListener('request', closing);
  server.prependListener('checkContinue', closing);
}
