import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

export interface Upstream {
  url: string;
  port: number;
  server: Server;
  requests: Recorded[];
  /** Sockets ever accepted, and those still open. */
  connections: { total: number; open: number };
  close(): Promise<void>;
}

/**
 * A real HTTP server on loopback that records what reaches it. `respond` decides the answer;
 * by default it echoes what it received as JSON.
 */
export async function startUpstream(respond?: (req: IncomingMessage, res: ServerResponse, record: Recorded) => void): Promise<Upstream> {
  const requests: Recorded[] = [];
  const connections = { total: 0, open: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const record: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyBytes: 0 };
    requests.push(record);
    if (respond) return respond(req, res, record);
    req.on('data', (chunk: Buffer) => (record.bodyBytes += chunk.length));
    req.on('end', () => {
      const body = JSON.stringify({ method: record.method, url: record.url, headers: record.headers, bodyBytes: record.bodyBytes });
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'upstream=1' });
      res.end(body);
    });
  });
  server.on('connection', (socket) => {
    connections.total++;
    connections.open++;
    sockets.add(socket);
    socket.on('close', () => {
      connections.open--;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    requests,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
