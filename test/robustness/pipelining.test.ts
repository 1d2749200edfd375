import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { createDataSource, rawExchange, splitResponses } from './helpers.ts';

/** Pipelined requests followed by malformed bytes, all in one write on one connection. */
let server: TestServer;
let slow: Upstream;
let slowDs: { id: number };

const UPSTREAM_DELAY_MS = 300;
const GARBAGE = 'GARBAGE\r\n\r\n';
const BAD_REQUEST = '{"message":"bad request"}';

beforeAll(async () => {
  server = await startTestServer();
  slow = await startUpstream((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"slow":true}');
    }, UPSTREAM_DELAY_MS);
  });
  slowDs = await createDataSource(server, ADMIN, { name: 'slow', url: slow.url });
});
afterAll(async () => {
  await server.close();
  await slow.close();
});

const auth = `Authorization: ${ADMIN}\r\n`;
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`;
function postJson(path: string, body: unknown): string {
  const text = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

/** Sends `bytes` at once and splits what came back before the server closed the connection. */
async function exchange(bytes: string, headRequests: boolean[] = []) {
  const wire = await rawExchange(server.url, bytes);
  return splitResponses(wire, headRequests);
}

function expectBadRequestLast(responses: Array<{ status: number; headers: Record<string, string>; body: string }>) {
  const last = responses.at(-1)!;
  expect(last.status).toBe(400);
  expect(last.headers['content-type']).toBe('application/json');
  expect(last.headers.connection).toBe('close');
  expect(last.body).toBe(BAD_REQUEST);
}

describe('a malformed request after pipelined ones', () => {
  it('write + garbage: the write is answered (it happened), then 400, then the connection closes', async () => {
    const { responses, rest } = await exchange(postJson('/api/datasources', { name: 'pipelined-write', type: 'loki', access: 'proxy' }) + GARBAGE);
    expect(responses.map((r) => r.status)).toEqual([200, 400]);
    expect(JSON.parse(responses[0]!.body)).toMatchObject({ message: 'Datasource added', name: 'pipelined-write' });
    expectBadRequestLast(responses);
    expect(rest).toBe('');
    expect((await call(server, 'GET', '/api/datasources/name/pipelined-write')).status).toBe(200);
  });

  it('GET + garbage + GET: the first GET is answered, then 400; nothing after the bad bytes is parsed', async () => {
    const { responses, rest } = await exchange(get('/api/datasources/name/slow') + GARBAGE + get('/api/health'));
    expect(responses.map((r) => r.status)).toEqual([200, 400]);
    expect(JSON.parse(responses[0]!.body)).toMatchObject({ name: 'slow', uid: expect.any(String) });
    expectBadRequestLast(responses);
    expect(rest).toBe('');
  });

  it('several writes + garbage: every answer, in request order, then 400', async () => {
    const names = ['order-1', 'order-2', 'order-3'];
    const writes = names.map((name) => postJson('/api/datasources', { name, type: 'loki', access: 'proxy' })).join('');
    const { responses, rest } = await exchange(writes + GARBAGE);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 400]);
    expect(responses.slice(0, 3).map((r) => JSON.parse(r.body).name)).toEqual(names);
    expect(rest).toBe('');
  });

  it('a slow proxied request + garbage: the upstream answer first, then 400', async () => {
    const before = slow.requests.length;
    const started = performance.now();
    const { responses, rest } = await exchange(get(`/api/datasources/proxy/${slowDs.id}/api/slow`) + GARBAGE);
    expect(performance.now() - started).toBeGreaterThanOrEqual(UPSTREAM_DELAY_MS - 20);
    expect(responses.map((r) => r.status)).toEqual([200, 400]);
    expect(responses[0]!.body).toBe('{"slow":true}');
    expectBadRequestLast(responses);
    expect(rest).toBe('');
    expect(slow.requests.length - before).toBe(1);
  });

  it('a malformed HEAD after a GET: 200, then a 400 without a body', async () => {
    const { responses, rest } = await exchange(`${get('/api/health')}HEAD /api/datasources/name/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n`, [false, true]);
    expect(responses.map((r) => r.status)).toEqual([200, 400]);
    expect(responses[1]!.headers['content-length']).toBe('0');
    expect(rest).toBe('');
  });

  it('a malformed chunk in the body of a pipelined write no one has answered: earlier answers, then its 400', async () => {
    const head = `POST /api/datasources HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const { responses, rest } = await exchange(`${get('/api/health')}${head}5\r\n{"nam\r\nzz\r\nnot a chunk\r\n`);
    expect(responses.map((r) => r.status)).toEqual([200, 400]);
    expectBadRequestLast(responses);
    expect(rest).toBe('');
  });
});
