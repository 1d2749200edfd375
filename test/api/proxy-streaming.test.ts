import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// Bodies, failures and aborts through the proxy, against real upstream servers on loopback.

const MB = 1024 * 1024;

let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer({ overrides: { dataproxy: { timeout: '2', dialTimeout: '1' } } });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server.close();
});

async function createDs(body: Record<string, unknown>): Promise<{ id: number; uid: string }> {
  const res = await call(server, 'POST', '/api/datasources', { body: { access: 'proxy', type: 'loki', ...body } });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

/** One megabyte, yielded `megabytes` times: a 200 MB body that never exists in memory at once. */
function* megabytes(count: number, onChunk: () => void = () => {}): Generator<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024, 7);
  for (let i = 0; i < count; i++) {
    onChunk();
    yield chunk;
  }
}

/** Megabytes handed to the sockets so far, to show that each side moves while the other still sends. */
const progress = { uploadSent: 0, uploadSentAtFirstByte: -1, downloadSent: 0, downloadSentAtFirstByte: -1 };

/** A raw request through the proxy; resolves with the response once its headers are in. */
function open(path: string, options: { method?: string; headers?: Record<string, string> } = {}): { req: ClientRequest; response: Promise<IncomingMessage> } {
  const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path, headers: { authorization: ADMIN, ...options.headers } });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', resolve);
    req.on('error', reject);
  });
  return { req, response };
}

function readAll(res: IncomingMessage): Promise<{ bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const parts: Buffer[] = [];
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (parts.length < 16) parts.push(chunk);
    });
    res.on('end', () => resolve({ bytes, text: Buffer.concat(parts).toString('utf8', 0, 4096) }));
    res.on('error', reject);
  });
}

/** Samples RSS and off-heap buffer memory while `work` runs; returns the peak growth over the start. */
async function peakGrowth(work: () => Promise<void>): Promise<{ rss: number; buffers: number }> {
  const start = process.memoryUsage();
  const peak = { rss: 0, buffers: 0 };
  const sample = () => {
    const now = process.memoryUsage();
    peak.rss = Math.max(peak.rss, now.rss - start.rss);
    peak.buffers = Math.max(peak.buffers, now.arrayBuffers - start.arrayBuffers);
  };
  const timer = setInterval(sample, 10);
  try {
    await work();
  } finally {
    clearInterval(timer);
    sample();
  }
  return peak;
}

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}


describe('bodies', () => {
  let bulk: Upstream;
  beforeAll(async () => {
    bulk = await startUpstream((req, res, record) => {
      if (req.url === '/download') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        Readable.from(megabytes(200, () => progress.downloadSent++)).pipe(res);
        return;
      }
      req.on('data', (chunk: Buffer) => {
        if (record.bodyBytes === 0) progress.uploadSentAtFirstByte = progress.uploadSent;
        record.bodyBytes += chunk.length;
      });
      req.on('end', () => res.end(`${req.method} ${record.bodyBytes} ${req.headers['transfer-encoding'] ?? ''} ${req.headers['content-length'] ?? ''}`));
    });
  });
  afterAll(() => bulk.close());

  it('streams a 200 MB upload and a 200 MB download with flat memory', async () => {
    const ds = await createDs({ name: 'bulk', url: bulk.url });
    let uploaded = '';
    let downloaded = 0;
    const growth = await peakGrowth(async () => {
      const up = open(`/api/datasources/proxy/${ds.id}/upload`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' } });
      Readable.from(megabytes(200, () => progress.uploadSent++)).pipe(up.req);
      uploaded = (await readAll(await up.response)).text;
      const down = open(`/api/datasources/proxy/${ds.id}/download`);
      down.req.end();
      const res = await down.response;
      res.once('data', () => (progress.downloadSentAtFirstByte = progress.downloadSent));
      downloaded = (await readAll(res)).bytes;
    });
    expect(uploaded).toBe(`POST ${200 * MB} chunked `);
    expect(downloaded).toBe(200 * MB);
    // Each end saw data long before the other had sent it all.
    expect(progress.uploadSentAtFirstByte).toBeGreaterThanOrEqual(0);
    expect(progress.uploadSentAtFirstByte).toBeLessThan(20);
    expect(progress.downloadSentAtFirstByte).toBeGreaterThanOrEqual(0);
    expect(progress.downloadSentAtFirstByte).toBeLessThan(20);
    // Client, proxy and upstream share this process, so buffering either body would add 200 MB or
    // more. Streaming stays well below: what grows is socket-read buffers not yet collected, which
    // V8 lets reach a few tens of MB of external memory before it collects them.
    expect(growth.buffers).toBeLessThan(100 * MB);
    expect(growth.rss).toBeLessThan(100 * MB);
  }, 60_000);

  it('forwards a streamed body for every method, DELETE included, and keeps an exact length', async () => {
    const ds = await createDs({ name: 'methods', url: bulk.url });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'GET']) {
      // Node's client frames GET/DELETE/OPTIONS bodies only when asked to.
      const streamed = open(`/api/datasources/proxy/${ds.id}/write`, { method, headers: { 'transfer-encoding': 'chunked' } });
      Readable.from(megabytes(3)).pipe(streamed.req);
      const res = await streamed.response;
      expect([method, res.statusCode, (await readAll(res)).text]).toEqual([method, 200, `${method} ${3 * MB} chunked `]);
      const sized = open(`/api/datasources/proxy/${ds.id}/write`, { method, headers: { 'content-length': '5' } });
      sized.req.end('12345');
      expect((await readAll(await sized.response)).text).toBe(`${method} 5  5`);
    }
  });
});

describe('upstream failures', () => {
  it('answers an empty 504 after [dataproxy] timeout, or the data source\'s own jsonData.timeout', async () => {
    const slow = await startUpstream((_req, res) => {
      const timer = setTimeout(() => res.end('late'), 5000);
      res.on('close', () => clearTimeout(timer));
    });
    try {
      const bySetting = await createDs({ name: 'slow-default', url: slow.url });
      let started = Date.now();
      const res = await call(server, 'GET', `/api/datasources/proxy/${bySetting.id}/x`);
      expect([res.status, res.text]).toEqual([504, '']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect(Date.now() - started).toBeLessThan(3500);

      const own = await createDs({ name: 'slow-own', url: slow.url, jsonData: { timeout: '1' } });
      started = Date.now();
      const quick = await call(server, 'GET', `/api/datasources/proxy/${own.id}/x`);
      expect([quick.status, quick.text]).toEqual([504, '']);
      expect(Date.now() - started).toBeLessThan(1900);
      // The timed-out upstream requests were torn down, not left running.
      await waitFor(() => slow.connections.open === 0, 1000);
      expect(slow.connections.open).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it('does not count a slow upload against the timeout: it runs from the end of the request', async () => {
    const reader = await startUpstream((req, res, record) => {
      req.on('data', (chunk: Buffer) => (record.bodyBytes += chunk.length));
      req.on('end', () => res.end(String(record.bodyBytes)));
    });
    try {
      const ds = await createDs({ name: 'slow-upload', url: reader.url, jsonData: { timeout: 1 } });
      const { req, response } = open(`/api/datasources/proxy/${ds.id}/upload`, { method: 'POST' });
      for (let i = 0; i < 3; i++) {
        req.write('x'.repeat(1000));
        await new Promise((r) => setTimeout(r, 600));
      }
      req.end();
      const res = await response;
      expect([res.statusCode, (await readAll(res)).text]).toEqual([200, '3000']);
    } finally {
      await reader.close();
    }
  });

  it('answers an empty 502 when the upstream refuses, resets, or sends garbage, and keeps serving', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const resetting = await startUpstream((req) => req.socket.destroy());
    const garbage = createServer((socket) => {
      // Reading is what notices the proxy hanging up, so that the socket can close.
      socket.resume();
      socket.on('error', () => {});
      socket.end('NOT HTTP AT ALL\r\n\r\n');
    });
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    try {
      for (const [name, url] of [
        ['refused', `http://127.0.0.1:${closedPort}`],
        ['reset', resetting.url],
        ['garbage', `http://127.0.0.1:${(garbage.address() as { port: number }).port}`],
      ]) {
        const ds = await createDs({ name, url });
        const res = await call(server, 'POST', `/api/datasources/proxy/${ds.id}/x`, { rawBody: 'payload', headers: { 'content-type': 'text/plain' } });
        expect([name, res.status, res.text]).toEqual([name, 502, '']);
      }
      expect((await call(server, 'GET', '/api/datasources')).status).toBe(200);
    } finally {
      await resetting.close();
      await new Promise((resolve) => garbage.close(resolve));
    }
  });

  it('cuts the response short when the upstream dies mid-body', async () => {
    const dying = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * MB) });
      res.write(Buffer.alloc(MB));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    try {
      const ds = await createDs({ name: 'dying', url: dying.url });
      const { req, response } = open(`/api/datasources/proxy/${ds.id}/x`);
      req.end();
      const res = await response;
      expect(res.statusCode).toBe(200);
      await expect(readAll(res)).rejects.toThrow();
      expect((await call(server, 'GET', '/api/datasources')).status).toBe(200);
    } finally {
      await dying.close();
    }
  });
});

describe('upstream connection pool', () => {
  it('keeps connections alive across calls, and holds at most max_conns_per_host per upstream', async () => {
    let inFlight = 0;
    let peak = 0;
    const slowish = await startUpstream((req, res) => {
      req.resume();
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.end('ok');
      }, 100);
    });
    const pooled = await startTestServer({ connection: server.connection, overrides: { dataproxy: { max_conns_per_host: '2' } } });
    try {
      const ds = await createDs({ name: 'pooled', url: slowish.url });
      const answers = await Promise.all(Array.from({ length: 6 }, () => call(pooled, 'GET', `/api/datasources/proxy/${ds.id}/x`)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(peak).toBe(2);
      expect(slowish.connections.total).toBe(2);
      // Sequential calls reuse one kept-alive connection.
      const before = slowish.connections.total;
      for (let i = 0; i < 5; i++) expect((await call(pooled, 'GET', `/api/datasources/proxy/${ds.id}/x`)).status).toBe(200);
      expect(slowish.connections.total).toBe(before);
    } finally {
      await pooled.close();
      await slowish.close();
    }
  });
});

describe('[dataproxy] response_limit', () => {
  it('cuts off an upstream body larger than the limit and relays smaller ones whole', async () => {
    const sized = await startUpstream((req, res) => {
      const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('size'));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
      res.end(Buffer.alloc(size, 1));
    });
    const limited = await startTestServer({ connection: server.connection, overrides: { dataproxy: { response_limit: String(64 * 1024) } } });
    try {
      const ds = await createDs({ name: 'limited', url: sized.url });
      const small = await call(limited, 'GET', `/api/datasources/proxy/${ds.id}/x?size=${60 * 1024}`);
      expect([small.status, small.text.length]).toEqual([200, 60 * 1024]);
      const port = Number(new URL(limited.url).port);
      const big = request({ host: '127.0.0.1', port, path: `/api/datasources/proxy/${ds.id}/x?size=${4 * MB}`, headers: { authorization: ADMIN } });
      big.end();
      const res = await new Promise<IncomingMessage>((resolve, reject) => big.on('response', resolve).on('error', reject));
      let received = 0;
      res.on('data', (chunk: Buffer) => (received += chunk.length));
      await expect(new Promise((resolve, reject) => res.on('end', resolve).on('error', reject))).rejects.toThrow();
      expect(received).toBeLessThanOrEqual(64 * 1024);
      // The instance without a limit relays the same answer whole.
      const whole = open(`/api/datasources/proxy/${ds.id}/x?size=${4 * MB}`);
      whole.req.end();
      expect((await readAll(await whole.response)).bytes).toBe(4 * MB);
    } finally {
      await limited.close();
      await sized.close();
    }
  });
});

describe('client aborts', () => {
  let streaming: Upstream;
  let ds: { id: number };
  beforeAll(async () => {
    streaming = await startUpstream((req, res) => {
      // Reads whatever is uploaded, and answers a never-ending stream (after a pause on /slow).
      req.resume();
      const begin = () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('tick\n'), 20);
        res.on('close', () => clearInterval(timer));
      };
      if (req.url?.startsWith('/slow')) {
        const timer = setTimeout(begin, 60_000);
        res.on('close', () => clearTimeout(timer));
      } else if (req.method === 'GET') begin();
    });
    ds = await createDs({ name: 'streaming', url: streaming.url });
  });
  afterAll(() => streaming.close());

  it('closes the upstream socket at once when 50 streaming downloads are aborted', async () => {
    const before = streaming.connections.total;
    const clients = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const { req, response } = open(`/api/datasources/proxy/${ds.id}/stream`);
        req.end();
        const res = await response;
        await new Promise((resolve) => res.once('data', resolve));
        return req;
      }),
    );
    expect(streaming.connections.open).toBe(50);
    for (const client of clients) client.destroy();
    const aborted = Date.now();
    await waitFor(() => streaming.connections.open === 0, 2000);
    expect(streaming.connections.open).toBe(0);
    expect(Date.now() - aborted).toBeLessThan(1000);
    expect(streaming.connections.total - before).toBe(50);
    expect((await call(server, 'GET', '/api/datasources')).status).toBe(200);
  });

  it('closes the upstream socket when the client aborts before the upstream answers', async () => {
    const clients = Array.from({ length: 20 }, () => {
      const { req, response } = open(`/api/datasources/proxy/${ds.id}/slow`);
      response.catch(() => {});
      req.end();
      return req;
    });
    await waitFor(() => streaming.connections.open === 20, 2000);
    expect(streaming.connections.open).toBe(20);
    for (const client of clients) client.destroy();
    await waitFor(() => streaming.connections.open === 0, 2000);
    expect(streaming.connections.open).toBe(0);
  });

  it('never calls the upstream for a client that left while it was being authenticated', async () => {
    // A first Basic login runs argon2 (tens of ms): long enough to be gone before the proxying starts.
    const logins = [];
    for (let i = 0; i < 10; i++) {
      const login = `gone-${i}`;
      expect((await call(server, 'POST', '/api/admin/users', { body: { login, password: 'pass1234' } })).status).toBe(200);
      logins.push(login);
    }
    const before = streaming.requests.length;
    const connectionsBefore = streaming.connections.total;
    for (const login of logins) {
      const req = request({ host: '127.0.0.1', port, path: `/api/datasources/proxy/${ds.id}/stream`, headers: { authorization: `Basic ${Buffer.from(`${login}:pass1234`).toString('base64')}` } });
      req.on('error', () => {});
      req.end();
      setTimeout(() => req.destroy(), 2);
    }
    await new Promise((r) => setTimeout(r, 800));
    expect(streaming.requests.length).toBe(before);
    expect(streaming.connections.open).toBe(0);
    expect(streaming.connections.total).toBe(connectionsBefore);
  });

  it('closes the upstream socket when the client aborts in the middle of an upload', async () => {
    const clients = Array.from({ length: 20 }, () => {
      const { req, response } = open(`/api/datasources/proxy/${ds.id}/upload`, { method: 'PUT' });
      response.catch(() => {});
      req.on('error', () => {});
      req.write(Buffer.alloc(64 * 1024));
      return req;
    });
    await waitFor(() => streaming.connections.open === 20, 2000);
    expect(streaming.connections.open).toBe(20);
    for (const client of clients) client.destroy();
    await waitFor(() => streaming.connections.open === 0, 2000);
    expect(streaming.connections.open).toBe(0);
    expect((await call(server, 'GET', '/api/datasources')).status).toBe(200);
  });
});
