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
  server.keepAliveTimeout = 5_000;
  server.on('clientError', clientErrors.onClientError);
  // `Expect: 100-continue`: the handler sends the go-ahead once it knows the body may be wanted,
  // so a body refused at once (413) is never sent at all.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    clientErrors.track(req, res);
    handle(req, res, true);
  });
  return server;
}
