import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { sendJson } from '../../src/http/respond.ts';

// sendJson over a real HTTP server: the status, the JSON body, and headers that say exactly that.

async function served(status: number, body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const server = createServer((_, res) => sendJson(res, status, body, headers));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), text };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

describe('sendJson', () => {
  it.each<[string, number, unknown, string]>([
    ['an object', 200, { message: 'ok', id: 1 }, '{"message":"ok","id":1}'],
    ['an error message', 404, { message: 'Data source not found' }, '{"message":"Data source not found"}'],
    ['an array', 200, [1, 'two', null], '[1,"two",null]'],
    ['non-ASCII text, its length counted in bytes', 400, { message: 'ünïcødé ✓' }, '{"message":"ünïcødé ✓"}'],
    ['null', 200, null, 'null'],
  ])('%s', async (_, status, body, text) => {
    const res = await served(status, body);
    expect(res.status).toBe(status);
    expect(res.text).toBe(text);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
  });

  it.each<[string, string]>([
    ['ASCII', 'data source '],
    ['non-ASCII text, its length counted in bytes', 'ünïcødé ✓ '],
  ])('a large answer (written as bytes): %s', async (_, word) => {
    const body = { items: Array.from({ length: 5_000 }, (_, i) => ({ id: i, name: `${word}${i}` })) };
    const text = JSON.stringify(body);
    const res = await served(200, body);
    expect(res.text).toBe(text);
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
  });

  it('an envelope around a long list (encoded item by item): the bytes of its JSON', async () => {
    const body = { totalCount: 3_000, users: Array.from({ length: 3_000 }, (_, i) => ({ id: i, login: `user ${i} ✓` })), page: 1, perPage: 3_000 };
    const text = JSON.stringify(body);
    const res = await served(200, body);
    expect(res.text).toBe(text);
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
  });

  it('a long list (encoded item by item): the bytes of its JSON', async () => {
    const body = Array.from({ length: 3_000 }, (_, i) => ({ id: i, name: `data source ${i} ✓ 😀`, jsonData: { a: [i, null, true] } }));
    const text = JSON.stringify(body);
    const res = await served(200, body);
    expect(res.text).toBe(text);
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
  });

  it('adds extra headers, and an extra content-type replaces its own', async () => {
    const res = await served(201, { id: 3 }, { 'x-extra': 'yes', 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(201);
    expect(res.headers['x-extra']).toBe('yes');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text).toBe('{"id":3}');
  });
});
