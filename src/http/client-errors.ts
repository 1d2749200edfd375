import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { MESSAGES } from '../errors/messages.ts';

/** Answers to requests node:http refuses before any handler runs (default: 400). */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', MESSAGES.http.requestTimeout],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', MESSAGES.http.headersTooLarge],
};

interface Connection {
  /**
   * Responses of requests parsed on this connection, oldest first, from the oldest not known to
   * have closed: those closed are dropped as later requests arrive, so without pipelining it holds
   * only the current one. Read only when a client error comes, by each one's `closed`.
   */
  pending: ServerResponse[];
  /** The response of the last request parsed; its request may still be receiving its body. */
  latest: ServerResponse | null;
  /** Set by the first client error: the parser stays failed, and reports again on every later read. */
  failed: boolean;
}

export interface ClientErrorHandling {
  /** Called for every request as it arrives, before its handler runs. */
  track(req: IncomingMessage, res: ServerResponse): void;
  /** The server's `clientError` listener. */
  onClientError(error: Error, socket: Duplex): void;
}

/**
 * Answers malformed input on a connection without losing or reordering the answers to requests
 * parsed before it. Node parses pipelined requests ahead and queues their responses; its parse
 * error arrives while those may still be running. So the error answer waits for every earlier
 * response to close, then goes last, and the connection closes after it. When the bad bytes are
 * the body of a request whose answer has already started, that answer stands and the connection
 * just ends: a second answer would be read as the reply to a request never sent.
 */
export function createClientErrorHandling(): ClientErrorHandling {
  const connections = new WeakMap<Duplex, Connection>();

  const connectionOf = (socket: Duplex): Connection => {
    let connection = connections.get(socket);
    if (!connection) connections.set(socket, (connection = { pending: [], latest: null, failed: false }));
    return connection;
  };

  const track = (req: IncomingMessage, res: ServerResponse): void => {
    const connection = connectionOf(req.socket);
    connection.latest = res;
    // Pruned here rather than by a 'close' listener on every response.
    const pending = connection.pending;
    while (pending.length > 0 && pending[0]!.closed) pending.shift();
    pending.push(res);
  };

  const onClientError = (error: Error, socket: Duplex): void => {
    const connection = connectionOf(socket);
    if (connection.failed) return;
    connection.failed = true;
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code.startsWith('ECONN') || !socket.writable) {
      socket.destroy();
      return;
    }
    const latest = connection.latest;
    // The bad bytes continue the last request (its body), rather than start a new message.
    const inBody = latest !== null && !latest.req.complete;
    // Everything parsed before the bad bytes is answered first. A request they belong to can never
    // complete, so its own answer is decided last, once those are out.
    const ahead = connection.pending.filter((res) => !(inBody && res === latest));
    whenClosed(ahead, () => {
      if (!socket.writable) socket.destroy();
      else if (!inBody || !latest.headersSent) socket.end(errorAnswer(code, inBody ? latest.req.method === 'HEAD' : failedMessageIsHead(error)));
      // Its answer has begun: it stands as the last one; cut short if it was still waiting for the body.
      else if (latest.writableEnded) whenClosed([latest], () => socket.end());
      else socket.destroy();
    });
  };

  return { track, onClientError };
}

/** Runs `then` once every response has closed (at once when all have). */
function whenClosed(responses: ServerResponse[], then: () => void): void {
  const waiting = responses.filter((res) => !res.closed);
  let left = waiting.length;
  if (left === 0) return then();
  for (const res of waiting) res.once('close', () => --left === 0 && then());
}

function errorAnswer(code: string, isHead: boolean): string {
  const [status, reason, message] = CLIENT_ERRORS[code] ?? [400, 'Bad Request', MESSAGES.http.clientError];
  // A HEAD request's answer has no body, even when the request was malformed.
  const body = isHead ? '' : JSON.stringify({ message });
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
}

/**
 * Whether the message that failed to parse is a HEAD request: its bytes start after the last
 * blank line before the error in the chunk being parsed (earlier pipelined heads end there).
 * A guess for a message that began in an earlier chunk, and then only decides the body's framing.
 */
function failedMessageIsHead(error: Error): boolean {
  const { rawPacket, bytesParsed } = error as { rawPacket?: Buffer; bytesParsed?: number };
  if (!rawPacket) return false;
  const parsed = rawPacket.toString('latin1', 0, bytesParsed ?? rawPacket.length);
  const start = parsed.lastIndexOf('\r\n\r\n');
  return /^(?:\r\n)*HEAD /.test(start < 0 ? rawPacket.toString('latin1') : rawPacket.toString('latin1', start + 4));
}
