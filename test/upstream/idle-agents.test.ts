import { afterEach, describe, expect, it } from '@jest/globals';
import { request, type Agent } from 'node:http';
import { idleLimitMs, IdleLimitedAgent, IdleSockets, sweepIntervalMs } from '../../src/upstream/idle-agents.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

describe('idle limits of pooled upstream sockets', () => {
  it.each([
    [90_000, undefined, 90_000],
    [90_000, 'timeout=5', 4_000], // the upstream's hint, a second early
    [90_000, 'timeout=5, max=100', 4_000],
    [3_000, 'timeout=60', 3_000], // ours is shorter
    [0, undefined, Infinity], // 0: no limit, as Go's IdleConnTimeout
    [0, 'timeout=5', 4_000],
    [90_000, 'timeout=1', null], // too short to reuse safely: not pooled
    [90_000, 'timeout=0', null],
    [90_000, 'max=5', 90_000], // no timeout in the hint
    [90_000, ['timeout=5', 'timeout=6'], 90_000], // not one header: ignored, as node does
  ])('idle %p ms with Keep-Alive %p: %p ms', (idle, hint, expected) => {
    expect(idleLimitMs(idle, hint)).toBe(expected);
  });

  it.each([
    [90_000, 1_000],
    [1_000, 250],
    [100, 50],
    [0, 1_000],
  ])('idle %p ms is looked over every %p ms', (idle, interval) => {
    expect(sweepIntervalMs(idle)).toBe(interval);
  });
});

describe('IdleLimitedAgent against a real upstream', () => {
  let upstream: Upstream;
  let agent: Agent;
  let stop = () => {};
  afterEach(async () => {
    stop();
    agent.destroy();
    await upstream.close();
  });

  const get = () => new Promise<void>((resolve, reject) => {
    request({ host: '127.0.0.1', port: upstream.port, path: '/', agent }, (res) => res.resume().on('end', resolve)).on('error', reject).end();
  });
  async function startWith(keepAliveTimeoutMs: number, idleTimeoutMs: number) {
    upstream = await startUpstream((_req, res) => res.end('ok'));
    upstream.server.keepAliveTimeout = keepAliveTimeoutMs;
    const idle = new IdleSockets(idleTimeoutMs, undefined);
    agent = new IdleLimitedAgent({ keepAlive: true }, idle);
    idle.sweep([agent]);
    stop = () => idle.stop();
  }
  async function waitForClose(limitMs: number): Promise<number> {
    const started = performance.now();
    while (upstream.connections.open > 0 && performance.now() - started < limitMs) await new Promise((resolve) => setTimeout(resolve, 10));
    return performance.now() - started;
  }

  it('reuses a socket within the limit and closes it once idle past the limit', async () => {
    await startWith(60_000, 400);
    await get();
    await get();
    expect(upstream.connections).toEqual({ total: 1, open: 1 });
    const idleFor = await waitForClose(5_000);
    expect(upstream.connections.open).toBe(0);
    // Closed no later than the limit (less one sweep of 100 ms), give or take timer slack.
    expect(idleFor).toBeGreaterThanOrEqual(250);
    expect(idleFor).toBeLessThan(1_000);
    await get();
    expect(upstream.connections.total).toBe(2);
  });

  it('switches TCP keep-alive on once per socket, however often the socket goes back to the pool', async () => {
    await startWith(60_000, 90_000);
    const calls: unknown[][] = [];
    const sockets = new Set<unknown>();
    for (let i = 0; i < 4; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: upstream.port, path: '/', agent }, (res) => res.resume().on('end', resolve));
        req.on('socket', (socket) => {
          if (sockets.has(socket)) return;
          sockets.add(socket);
          const original = socket.setKeepAlive.bind(socket);
          socket.setKeepAlive = (...args: Parameters<typeof socket.setKeepAlive>) => {
            calls.push(args);
            return original(...args);
          };
        });
        req.on('error', reject).end();
      });
    }
    expect({ sockets: sockets.size, connections: upstream.connections.total, calls }).toEqual({ sockets: 1, connections: 1, calls: [[true, 1000]] });
  });

  it("closes before the upstream's announced keep-alive timeout runs out", async () => {
    await startWith(2_000, 90_000); // node announces timeout=2
    await get();
    expect(await waitForClose(5_000)).toBeLessThan(1_500);
    expect(upstream.connections.open).toBe(0);
  });

  it('does not pool a socket the upstream will close within a second', async () => {
    await startWith(1_000, 90_000); // timeout=1
    await get();
    await get();
    expect(upstream.connections.total).toBe(2);
  });
});
