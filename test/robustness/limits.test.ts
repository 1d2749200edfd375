import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DISCARD_MAX_BYTES, DISCARD_MAX_MS } from '../../src/http/body.ts';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { rawExchange, rawRequest } from './helpers.ts';

const LIMIT = 4096;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ overrides: { server: { request_body_limit_bytes: String(LIMIT), read_header_timeout_seconds: '1' } } });
});
afterAll(() => server.close());

/** A data source body of exactly `size` bytes. */
function bodyOfSize(size: number, name = 'sized'): string {
  const frame = JSON.stringify({ name, type: 'loki', access: 'proxy', jsonData: { pad: '' } });
  return frame.replace('"pad":""', `"pad":"${'p'.repeat(size - frame.length)}"`);
}

describe('[server] request_body_limit_bytes', () => {
  it('accepts a body of exactly the limit and refuses one byte more with 413 JSON, declared or chunked', async () => {
    const json = { authorization: ADMIN, 'content-type': 'application/json' };
    const atLimit = await rawRequest(server.url, { method: 'POST', path: '/api/datasources', headers: json, body: bodyOfSize(LIMIT, 'at-limit') });
    expect(atLimit.status).toBe(200);

    const declared = await rawRequest(server.url, { method: 'POST', path: '/api/datasources', headers: json, body: bodyOfSize(LIMIT + 1, 'declared') });
    expect(declared.status).toBe(413);
    expect(declared.headers['content-type']).toBe('application/json');
    expect(JSON.parse(declared.body.toString())).toEqual({ message: 'request body too large' });
    // The rest of the upload is not parsed as another request: the connection closes after it.
    expect(declared.headers.connection).toBe('close');

    const chunked = await rawRequest(server.url, { method: 'POST', path: '/api/datasources', headers: { ...json, 'transfer-encoding': 'chunked' }, body: bodyOfSize(LIMIT + 1, 'chunked') });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body.toString())).toEqual({ message: 'request body too large' });

    const names = (await call(server, 'GET', '/api/datasources')).body.map((d: { name: string }) => d.name);
    expect(names).toEqual(['at-limit']);
  });

  it('holds for /graphql too, before yoga buffers anything', async () => {
    const query = (pad: number) => JSON.stringify({ query: `{ currentOrganization { dataSources { nodes { id } } } }${' '.repeat(pad)}` });
    const frame = query(0).length;
    const headers = { authorization: ADMIN, 'content-type': 'application/json' };
    const ok = await rawRequest(server.url, { method: 'POST', path: '/graphql', headers, body: query(LIMIT - frame) });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.toString()).data.currentOrganization.dataSources.nodes).toHaveLength(1);
    for (const extra of [{}, { 'transfer-encoding': 'chunked' }] as Array<Record<string, string>>) {
      const big = await rawRequest(server.url, { method: 'POST', path: '/graphql', headers: { ...headers, ...extra }, body: query(LIMIT - frame + 1) });
      expect(big.status).toBe(413);
      expect(JSON.parse(big.body.toString())).toEqual({ errors: [{ message: 'request body too large', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    }
  });
});

/**
 * One raw connection to the server: bytes written as they are, everything received kept as text,
 * to watch when an answer comes relative to what was sent, and what the connection does next.
 */
function connection() {
  const socket: Socket = connect(Number(new URL(server.url).port), '127.0.0.1');
  let received = '';
  /** How the server closed: 'end' (in order, after everything it sent) or the error (a reset). */
  let closedBy: string | null = null;
  const waiters: Array<() => void> = [];
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('close', () => {
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('end', () => (closedBy ??= 'end'));
  socket.on('error', (error: NodeJS.ErrnoException) => (closedBy ??= error.code ?? error.message));
  return {
    write: (data: string | Buffer) => new Promise<void>((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve()))),
    /** Resolves with the first `count` answers received (each head and body; a 100 Continue counts as one). */
    async answers(count: number, timeoutMs = 5000): Promise<string[]> {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const found = answersIn(received);
        if (found.length >= count) return found;
        if (socket.destroyed) throw new Error(`closed after ${found.length} answers: ${received.slice(0, 500)}`);
        if (performance.now() > deadline) throw new Error(`no ${count} answers in time: ${received.slice(0, 500)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    closed,
    get received() {
      return received;
    },
    get closedBy() {
      return closedBy;
    },
    destroy: () => socket.destroy(),
  };
}

/** The complete answers in `text`, in order: each head, and as many body bytes as its Content-Length says. */
function answersIn(text: string): string[] {
  const answers: string[] = [];
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) return answers;
    const headText = text.slice(at, end);
    const informational = /^HTTP\/1\.1 1\d\d /.test(headText);
    const length = informational ? 0 : Number(/^content-length: *(\d+)\r?$/im.exec(headText)?.[1] ?? 0);
    if (text.length < end + 4 + length) return answers;
    answers.push(text.slice(at, end + 4 + length));
    at = end + 4 + length;
  }
}

const MB = 1024 * 1024;
const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

describe('a body refused for its size', () => {
  it('is refused on its declared length before any of it is sent, ahead of authentication; the connection closes once the client has sent it', async () => {
    const conn = connection();
    try {
      // No credentials at all: the size is judged first, as nothing else could make it acceptable.
      await conn.write(head(['POST /api/datasources HTTP/1.1', 'Host: x', 'Content-Type: application/json', `Content-Length: ${10 * MB}`]));
      const [refused] = await conn.answers(1);
      expect(refused).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
      expect(refused).toContain('content-type: application/json');
      expect(refused).toContain('connection: close');
      expect(refused!.endsWith('{"message":"request body too large"}')).toBe(true);
      // The client sends its body all the same: read and thrown away, then an orderly close (no
      // reset, which could have destroyed the answer unread), and nothing more is answered.
      await conn.write(Buffer.alloc(10 * MB, 'x'));
      await conn.closed;
      expect(conn.closedBy).toBe('end');
      expect(answersIn(conn.received)).toEqual([refused]);
    } finally {
      conn.destroy();
    }
  });

  it('is refused as a chunked body as soon as it passes the limit, and read to its last chunk before the close', async () => {
    const conn = connection();
    try {
      await conn.write(head(['POST /graphql HTTP/1.1', 'Host: x', `Authorization: ${ADMIN}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked']));
      const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
      await conn.write(chunk(`{"query":"{ __typename }","pad":"${'p'.repeat(LIMIT)}`));
      const [refused] = await conn.answers(1);
      expect(refused).toMatch(/^HTTP\/1\.1 413 /);
      expect(refused!.endsWith('{"errors":[{"message":"request body too large","extensions":{"code":"PAYLOAD_TOO_LARGE"}}]}')).toBe(true);
      for (let i = 0; i < 50; i++) await conn.write(chunk('q'.repeat(64 * 1024)));
      expect(conn.closedBy).toBeNull();
      await conn.write('0\r\n\r\n');
      await conn.closed;
      expect(conn.closedBy).toBe('end');
    } finally {
      conn.destroy();
    }
  });

  it('gets no 100 Continue to a client that waits for one, so its body is never sent; a body within the limit gets it', async () => {
    const refusedConn = connection();
    const acceptedConn = connection();
    try {
      await refusedConn.write(head(['PUT /api/org HTTP/1.1', 'Host: x', `Authorization: ${ADMIN}`, 'Content-Type: application/json', `Content-Length: ${LIMIT + 1}`, 'Expect: 100-continue']));
      const [refused] = await refusedConn.answers(1);
      expect(refused).toMatch(/^HTTP\/1\.1 413 /);
      expect(refusedConn.received).not.toContain('100 Continue');

      const body = JSON.stringify({ name: 'Main Org.' });
      await acceptedConn.write(head(['PUT /api/org HTTP/1.1', 'Host: x', `Authorization: ${ADMIN}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Expect: 100-continue']));
      expect((await acceptedConn.answers(1))[0]).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      await acceptedConn.write(body);
      const [, updated] = await acceptedConn.answers(2);
      expect(updated).toMatch(/^HTTP\/1\.1 200 /);
      expect(updated!.endsWith('{"message":"Organization updated"}')).toBe(true);
    } finally {
      refusedConn.destroy();
      acceptedConn.destroy();
    }
  });

  it(`is not waited for past ${DISCARD_MAX_MS / 1000} s, nor read past ${DISCARD_MAX_BYTES / MB} MiB: the connection is cut`, async () => {
    // Declared past what is ever read: the answer closes the connection at once.
    const huge = connection();
    await huge.write(head(['POST /api/datasources HTTP/1.1', 'Host: x', 'Content-Type: application/json', `Content-Length: ${DISCARD_MAX_BYTES + 1}`]));
    const [refused] = await huge.answers(1);
    expect(refused).toMatch(/^HTTP\/1\.1 413 /);
    expect(refused).toContain('connection: close');
    await huge.closed;
    expect(answersIn(huge.received)).toEqual([refused]);

    // A client that stops sending halfway through its body: cut once the time is up, not held open.
    const stalled = connection();
    const started = performance.now();
    await stalled.write(head(['POST /api/datasources HTTP/1.1', 'Host: x', 'Content-Type: application/json', `Content-Length: ${2 * MB}`]));
    await stalled.answers(1);
    await stalled.write(Buffer.alloc(MB, 'x'));
    await stalled.closed;
    const took = performance.now() - started;
    expect(took).toBeGreaterThan(DISCARD_MAX_MS - 100);
    expect(took).toBeLessThan(DISCARD_MAX_MS + 2000);
  }, 15_000);
});

describe('[server] read_header_timeout_seconds', () => {
  /** Sends a request line, then one header line every `everyMs`, forever; resolves when the server hangs up. */
  function dribble(everyMs: number): { closed: Promise<{ afterMs: number; received: string }>; stop(): void } {
    const started = performance.now();
    const socket: Socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    let received = '';
    let n = 0;
    socket.write('GET /api/datasources HTTP/1.1\r\nHost: slow\r\n');
    const timer = setInterval(() => socket.writable && socket.write(`X-Slow-${n++}: ${'z'.repeat(10)}\r\n`), everyMs);
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    const closed = new Promise<{ afterMs: number; received: string }>((resolve) => socket.on('close', () => {
      clearInterval(timer);
      resolve({ afterMs: performance.now() - started, received });
    }));
    return { closed, stop: () => socket.destroy() };
  }

  it('cuts off clients that dribble their headers while everyone else is served at once', async () => {
    const slow = Array.from({ length: 20 }, () => dribble(100));
    try {
      // Normal requests keep succeeding, promptly, while the slow clients hold their connections.
      const latencies: number[] = [];
      const until = performance.now() + 1500;
      while (performance.now() < until) {
        const t = performance.now();
        const res = await call(server, 'GET', '/api/datasources', { auth: ADMIN });
        expect(res.status).toBe(200);
        latencies.push(performance.now() - t);
      }
      expect(latencies.length).toBeGreaterThan(10);
      expect(Math.max(...latencies)).toBeLessThan(500);

      const outcomes = await Promise.all(slow.map((s) => s.closed));
      for (const outcome of outcomes) {
        // 1 s allowed, checked every 250 ms: cut between 1 and ~2 s, not after node's default 30 s sweep.
        expect(outcome.afterMs).toBeGreaterThan(900);
        expect(outcome.afterMs).toBeLessThan(3000);
        expect(outcome.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
        expect(outcome.received).toContain('content-type: application/json');
        expect(outcome.received.endsWith('{"message":"request timeout"}')).toBe(true);
      }
    } finally {
      for (const s of slow) s.stop();
    }
  });
});

/**
 * A GET of /api/health whose head counts exactly `size` bytes as `[server] max_header_bytes` does:
 * the target plus every header name and value; a cookie makes up the difference.
 */
function headOfSize(size: number): string {
  const fixed = ['/api/health', 'Host', 'x', 'Connection', 'close', 'Cookie'].join('').length;
  const cookie = `big=${'c'.repeat(size - fixed - 'big='.length)}`;
  return `GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nCookie: ${cookie}\r\n\r\n`;
}

describe('[server] max_header_bytes', () => {
  it('accepts a head of exactly the default 64 kB, and refuses one byte more with 431 JSON', async () => {
    expect(server.settings.server.maxHeaderBytes).toBe(65536);
    expect(await rawExchange(server.url, headOfSize(65536))).toMatch(/^HTTP\/1\.1 200 /);
    const over = await rawExchange(server.url, headOfSize(65537));
    expect(over).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(over).toContain('content-type: application/json');
    expect(over.endsWith('{"message":"request header fields too large"}')).toBe(true);
  });

  it('takes a configured limit, on both sides of it', async () => {
    const small = await startTestServer({ env: { GF_SERVER_MAX_HEADER_BYTES: '2048' } });
    try {
      expect(await rawExchange(small.url, headOfSize(2048))).toMatch(/^HTTP\/1\.1 200 /);
      expect(await rawExchange(small.url, headOfSize(2049))).toMatch(/^HTTP\/1\.1 431 /);
    } finally {
      await small.close();
    }
  });
});

/**
 * Sends a request's head announcing a chunked body, waits for its whole answer, then sends a
 * malformed chunk; resolves with every byte received once the server hangs up.
 */
function answerThenMalformedChunk(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    let received = '';
    let sentBadChunk = false;
    const isHead = head.startsWith('HEAD ');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open; received: ${received}`));
    }, 5000);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      // The whole answer is in once its declared body length has arrived after the blank line.
      const end = received.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(received)?.[1] ?? NaN);
      if (!sentBadChunk && end >= 0 && received.length >= end + 4 + (isHead ? 0 : length)) {
        sentBadChunk = true;
        socket.write('zz\r\nnot a chunk\r\n');
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(`${head}Host: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
  });
}

describe('requests node:http refuses before any handler', () => {
  it('never answers twice: a malformed body after its request was answered only ends the connection', async () => {
    const rest = await answerThenMalformedChunk('GET /api/datasources HTTP/1.1\r\n');
    expect(rest.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(rest).toMatch(/^HTTP\/1\.1 401 /);
    expect(rest.endsWith('}')).toBe(true);

    // As the fuzzer found it: HEAD on the proxy, whose answer has no body.
    const proxy = await answerThenMalformedChunk('HEAD /api/datasources/proxy/1/api/v1/query HTTP/1.1\r\n');
    expect(proxy.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(proxy).toMatch(/^HTTP\/1\.1 401 /);
    expect(proxy.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers with JSON and the right status, and without a body to HEAD', async () => {
    const huge = await rawExchange(server.url, `GET /api/datasources HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70_000)}\r\nConnection: close\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(huge.endsWith('{"message":"request header fields too large"}')).toBe(true);

    const badPath = await rawExchange(server.url, 'GET /api/datasources/name/\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(badPath).toMatch(/^HTTP\/1\.1 400 /);
    expect(badPath.endsWith('{"message":"bad request"}')).toBe(true);

    const head = await rawExchange(server.url, 'HEAD /api/datasources/name/\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toContain('content-length: 0\r\n');
    expect(head.endsWith('\r\n\r\n')).toBe(true);
  });
});
