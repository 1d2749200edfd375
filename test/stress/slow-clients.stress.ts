import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ overrides: { server: { read_header_timeout_seconds: '2' }, log: { level: 'warn' } } });
});
afterAll(() => server.close());

/** A client sending one header line every `everyMs`, never finishing its request. */
function dribbler(everyMs: number): Promise<{ afterMs: number; received: string }> {
  const started = performance.now();
  const socket: Socket = connect(Number(new URL(server.url).port), '127.0.0.1');
  let received = '';
  let n = 0;
  socket.write('POST /api/datasources HTTP/1.1\r\nHost: slow\r\n');
  const timer = setInterval(() => socket.writable && socket.write(`X-Slow-${n++}: z\r\n`), everyMs);
  socket.on('data', (chunk) => (received += chunk.toString()));
  socket.on('error', () => {});
  return new Promise((resolve) => socket.on('close', () => {
    clearInterval(timer);
    resolve({ afterMs: performance.now() - started, received });
  }));
}

describe('300 clients dribbling headers', () => {
  it('are all cut off after read_header_timeout_seconds while normal traffic is unaffected', async () => {
    const slow = Array.from({ length: 300 }, () => dribbler(50));
    const latencies: number[] = [];
    const until = performance.now() + 4000;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        expect((await call(server, 'GET', '/api/datasources', { auth: ADMIN })).status).toBe(200);
        latencies.push(performance.now() - t);
      }
    }));
    const outcomes = await Promise.all(slow);
    for (const o of outcomes) {
      expect(o.afterMs).toBeGreaterThan(1900);
      expect(o.afterMs).toBeLessThan(4500);
      expect(o.received).toMatch(/^HTTP\/1\.1 408 /);
    }
    latencies.sort((x, y) => x - y);
    expect(latencies.length).toBeGreaterThan(100);
    expect(latencies[Math.floor(latencies.length * 0.99)]!).toBeLessThan(500);
  });
});
