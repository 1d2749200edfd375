import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DomainError } from '../../src/errors/domain.ts';
import { isJsonContentType, readGraphQLBody, readJsonBody } from '../../src/http/body.ts';

// Request bodies read as a real HTTP server receives them: under the limit, as JSON objects.

const LIMIT = 64;
let server: Server;
let port: number;
/** What the server made of each request: its value, or the status of the error it threw. */
let reader: (req: IncomingMessage) => Promise<unknown>;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let answer: unknown;
    try {
      answer = { value: await reader(req) };
    } catch (error) {
      answer = { status: (error as DomainError).status, message: (error as DomainError).message };
    }
    const body = JSON.stringify(answer);
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function send(body: string | null, headers: Record<string, string> = { 'content-type': 'application/json' }, method = 'POST'): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: '/', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(parts).toString('utf8'))));
    });
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

describe('readJsonBody', () => {
  beforeAll(() => {
    reader = (req) => readJsonBody(req, LIMIT);
  });

  it.each<[string, string | null, Record<string, string> | undefined, unknown]>([
    ['an object', '{"name":"x","n":[1,{"a":null}]}', undefined, { value: { name: 'x', n: [1, { a: null }] } }],
    ['no body: an empty object', null, {}, { value: {} }],
    ['a media type with parameters', '{"a":1}', { 'content-type': 'Application/JSON; charset=utf-8' }, { value: { a: 1 } }],
    ['another media type', '{"a":1}', { 'content-type': 'text/plain' }, { status: 400, message: 'bad request data' }],
    ['no media type', '{"a":1}', {}, { status: 400, message: 'bad request data' }],
    ['invalid JSON', '{"a":', undefined, { status: 400, message: 'bad request data' }],
    ['an array', '[1]', undefined, { status: 400, message: 'bad request data' }],
    ['null', 'null', undefined, { status: 400, message: 'bad request data' }],
    ['a NUL in a value, deep down', '{"a":[{"b":"x\\u0000y"}]}', undefined, { status: 400, message: 'bad request data' }],
    ['a NUL in a key', '{"a\\u0000":1}', undefined, { status: 400, message: 'bad request data' }],
    ['a body past the limit', `{"a":"${'x'.repeat(LIMIT)}"}`, undefined, { status: 413, message: 'request body too large' }],
  ])('%s', async (_name, body, headers, expected) => {
    const answer = await send(body, headers);
    expect(answer).toEqual(expected);
  });

  it('refuses a body past the limit sent chunked, without a declared length', async () => {
    const answer = await send(`{"a":"${'x'.repeat(LIMIT)}"}`, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    expect(answer).toEqual({ status: 413, message: 'request body too large' });
  });
});

describe('readGraphQLBody', () => {
  beforeAll(() => {
    reader = async (req) => (await readGraphQLBody(req, LIMIT))?.toString('utf8') ?? null;
  });

  it('reads a POST body as it came, none for GET and for an empty body', async () => {
    expect(await send('{"query":"{ a }"}')).toEqual({ value: '{"query":"{ a }"}' });
    expect(await send(null, {}, 'GET')).toEqual({ value: null });
    expect(await send(null, {})).toEqual({ value: null });
    expect(await send('x'.repeat(LIMIT + 1), {})).toEqual({ status: 413, message: 'request body too large' });
  });
});

describe('isJsonContentType', () => {
  it.each<[string | undefined, boolean]>([
    ['application/json', true], [' application/json ; charset=utf-8', true], ['APPLICATION/JSON', true],
    ['application/json-patch+json', false], ['application/jsonx', false], ['text/json', false], ['', false], [undefined, false],
  ])('%j: %p', (header, is) => {
    expect(isJsonContentType(header)).toBe(is);
  });
});
