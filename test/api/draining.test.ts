import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { DATA_SOURCE_CHANGED, subscribe } from '../support/sse.ts';

// The first step of stopping behind a load balancer (app.drain(), which SIGTERM runs for
// `[server] shutdown_drain_seconds`): the health check fails while everything else is still served,
// and every response closes its connection. test/system/shutdown-drain.test.ts runs it in a process.

let server: TestServer;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  agent.destroy();
  await server.close();
});

/** A GET over the one keep-alive connection of `agent`: status, headers, body and the socket used. */
function get(path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { agent, headers: { authorization: ADMIN } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, socket: req.socket! }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('draining', () => {
  it('fails the health check at once, keeps serving requests and streams, and closes each connection after its response', async () => {
    const before = await get('/api/health');
    expect(before.status).toBe(200);
    expect(JSON.parse(before.body)).not.toHaveProperty('draining');
    expect(before.headers.connection).toBe('keep-alive');
    const pooled = before.socket;
    const stream = await subscribe(server, DATA_SOURCE_CHANGED);
    expect(stream.status).toBe(200);

    server.app.drain();

    // The connection the balancer kept from before is answered, then closed by the server.
    const pooledClosed = new Promise<void>((resolve) => pooled.once('close', () => resolve()));
    const during = await get('/api/health');
    expect(during.socket).toBe(pooled);
    expect(during.status).toBe(503);
    expect(JSON.parse(during.body)).toMatchObject({ database: 'ok', draining: true });
    expect(during.headers.connection).toBe('close');
    await pooledClosed;
    expect((await fetch(`${server.url}/api/health`, { method: 'HEAD' })).status).toBe(503);

    // Everything else is served as usual, on new connections too, each closed after its answer.
    const list = await get('/api/datasources');
    expect(list.socket).not.toBe(pooled);
    expect(list.status).toBe(200);
    expect(list.headers.connection).toBe('close');
    const created = await call(server, 'POST', '/api/datasources', { body: { name: 'while-draining', type: 'loki', access: 'proxy' } });
    expect(created.status).toBe(200);
    expect(created.headers.get('connection')).toBe('close');
    // Open streams go on until the shutdown proper ends them.
    const event = await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.name === 'while-draining');
    expect(event.data.data.dataSourceChanged.kind).toBe('CREATED');
    stream.close();
  });
});
