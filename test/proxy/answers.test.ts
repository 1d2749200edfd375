import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from '@jest/globals';
import { createLogger } from '../../src/logging/logger.ts';
import { proxyAnswers } from '../../src/proxy/answers.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import type { DataSourceTarget } from '../../src/upstream/target.ts';

// The proxy's client-facing answers, over real HTTP: an upstream's answer relayed with its rules,
// and a call that got none answered as the original answers it, the cause logged.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function fetchRaw(url: string): Promise<{ status: number; headers: IncomingMessage['headers']; body: string; complete: boolean }> {
  return new Promise((resolve) => {
    get(url, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      const done = (complete: boolean) => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts).toString('utf8'), complete });
      res.on('end', () => done(true));
      res.on('error', () => done(false));
      res.on('aborted', () => done(false));
    });
  });
}

function memoryLog() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({ write(chunk, _enc, next) { lines.push(JSON.parse(String(chunk))); next(); } });
  return { log: createLogger('info', stream), lines };
}

const target = { id: 7 } as DataSourceTarget;

/** The answers of `proxyAnswers`, the upstream answering with `upstream`. */
async function relayed(upstream: (req: IncomingMessage, res: ServerResponse) => void, limit = 0) {
  const upstreamUrl = await listen(upstream);
  const answers = proxyAnswers(limit, memoryLog().log);
  const front = await listen((_req, res) => get(upstreamUrl, (proxyRes) => answers.relay(proxyRes, res)));
  return fetchRaw(front);
}

describe('relay', () => {
  it('passes the status, cleaned headers and body', async () => {
    const res = await relayed((_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes', 'set-cookie': 'grafana_session=x' });
      res.end('{"ok":true}');
    });
    expect([res.status, res.headers['content-type'], res.headers['x-upstream'], res.body]).toEqual([201, 'application/json', 'yes', '{"ok":true}']);
  });

  it('answers a 401 of the data source as 400, so the client keeps its own session', async () => {
    const res = await relayed((_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Basic' });
      res.end('nope');
    });
    expect([res.status, res.headers['www-authenticate'], res.headers['content-security-policy'], res.body]).toEqual([400, undefined, 'sandbox', 'Authentication to data source failed']);
  });

  it('cuts an answer past the response limit short', async () => {
    const res = await relayed((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a'.repeat(10));
      setTimeout(() => res.end('b'.repeat(100)), 20);
    }, 50);
    expect([res.status, res.complete, res.body]).toEqual([200, false, 'a'.repeat(10)]);
  });
});

describe('fail', () => {
  async function failed(error: UpstreamError) {
    const { log, lines } = memoryLog();
    const answers = proxyAnswers(0, log);
    const front = await listen((_req, res) => answers.fail(error, res, target));
    return { res: await fetchRaw(front), lines };
  }

  it.each([
    ['a timeout: an empty 504', new UpstreamError('timeout', 'Get "http://x/": net/http: timeout awaiting response headers'), 504],
    ['an unreachable upstream: an empty 502', new UpstreamError('unreachable', 'dial tcp 127.0.0.1:9: connect: connection refused'), 502],
    ['a TLS failure: an empty 502', new UpstreamError('tls', 'tls: failed to verify certificate'), 502],
  ])('%s, the cause in the log only', async (_name, error, status) => {
    const { res, lines } = await failed(error);
    expect([res.status, res.headers['content-length'], res.body]).toEqual([status, '0', '']);
    expect(lines.map((l) => [l.msg, l.dsId, l.status, l.error])).toEqual([['Proxy request failed', 7, status, error.message]]);
  });

  it('answers an address denied as it resolves 403 with the proxy\'s words, logging nothing', async () => {
    const { res, lines } = await failed(new UpstreamError('denied', 'Data proxy target address is not allowed'));
    expect([res.status, JSON.parse(res.body)]).toEqual([403, { message: 'Data proxy target address is not allowed' }]);
    expect(lines).toEqual([]);
  });

  it('answers TLS material that does not parse 502 with the message naming the field', async () => {
    const { res } = await failed(new UpstreamError('tls-config', 'secureJsonData.tlsCACert holds no PEM certificate'));
    expect([res.status, res.headers['content-type'], JSON.parse(res.body)]).toEqual([502, 'application/json', { message: 'secureJsonData.tlsCACert holds no PEM certificate' }]);
  });
});
