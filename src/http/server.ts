import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Settings } from '../config/settings.ts';
import { MESSAGES } from '../errors/messages.ts';

/** Answers to requests node:http refuses before any handler runs (default: 400). */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', MESSAGES.http.requestTimeout],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', MESSAGES.http.headersTooLarge],
};

/**
 * The node:http server: connection limits and timeouts, and the answers to bytes that are no
 * request at all. Every request it parses goes to `handle`, the front door.
 */
export function createHttpServer(settings: Settings, handle: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const headersTimeoutMs = settings.server.readHeaderTimeoutSeconds * 1000;
  // Each connection's latest response, so a parse error can tell whether it is still under way.
  const latestResponse = new WeakMap<Socket, ServerResponse>();
  // node:http enforces headersTimeout only when it sweeps its connections (every 30 s by default).
  const server = createServer({ connectionsCheckingInterval: Math.max(250, Math.min(30_000, headersTimeoutMs / 4)) }, (req, res) => {
    latestResponse.set(req.socket, res);
    handle(req, res);
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
      const [status, reason, message] = CLIENT_ERRORS[code] ?? [400, 'Bad Request', MESSAGES.http.clientError];
      // A HEAD request's answer has no body, even when the request was malformed.
      const isHead = (error as { rawPacket?: Buffer }).rawPacket?.toString('latin1', 0, 5) === 'HEAD ';
      const body = isHead ? '' : JSON.stringify({ message });
      socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${isHead ? 0 : body.length}\r\nconnection: close\r\n\r\n${body}`);
    } else socket.destroy();
  });
  return server;
}
