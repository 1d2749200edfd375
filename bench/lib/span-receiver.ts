import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP/HTTP receiver for traced targets: it counts what arrives and answers as a collector does. */
export interface SpanReceiver {
  /** host:port, for `[tracing.opentelemetry.otlp] address`. */
  address: string;
  /** Spans received, the request spans (server kind) among them, and export calls. */
  counts(): { spans: number; serverSpans: number; exports: number };
  close(): Promise<void>;
}

/**
 * Runs in the runner's process, so its CPU is not the measured server's. Spans are counted in the
 * JSON text rather than parsed (each span has one `"spanId"` key; a server span's kind is 2), so
 * counting costs the runner little next to autocannon.
 */
export async function startSpanReceiver(): Promise<SpanReceiver> {
  const counts = { spans: 0, serverSpans: 0, exports: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      counts.exports++;
      counts.spans += body.split('"spanId"').length - 1;
      counts.serverSpans += body.split('"kind":2').length - 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => ({ ...counts }),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
