import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { hashPassword } from '../../src/auth/passwords.ts';
import type { Route as RouteSpec } from '../../src/http/routes.ts';
import { basic, call, type TestServer } from '../support/server.ts';

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface RawRequest {
  method: string;
  /** Sent as is: may hold latin-1 bytes (invalid UTF-8 on the wire) and malformed escapes. */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** One request over node:http (keep-alive when an agent is given), without any client-side niceties. */
export function rawRequest(url: string, req: RawRequest, agent?: Agent, timeoutMs = 30_000): Promise<RawReply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.path, headers: req.headers, agent, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms: ${req.method} ${req.path}`)));
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** Writes raw bytes on a fresh socket and collects everything the server sends until it closes (send `Connection: close`). */
export function rawExchange(url: string, bytes: Buffer | string, timeoutMs = 10_000): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(target.port), target.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('server kept the connection open'));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {}); // a reset after the answer is fine; the answer is what is judged
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    // No half-close: node:http drops a request whose client has already sent FIN.
    socket.write(bytes);
  });
}

/** Runs `tasks` with at most `concurrency` in flight; results keep the input order. */
export async function pool<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** A user with a role in one org (and that org as its current one); returns its Basic header. */
export async function createUser(server: TestServer, login: string, role: 'Viewer' | 'Editor' | 'Admin', orgId = 1, password = 'matrix-pw'): Promise<{ id: number; auth: string }> {
  const [user] = await server.sql<{ id: number }>(
    `insert into "user" (login, email, name, password_hash, org_id) values ($1, $2, $1, $3, $4) returning id`,
    [login, `${login}@example.com`, await hashPassword(password), orgId],
  );
  await server.sql('insert into org_user (org_id, user_id, role) values ($1, $2, $3)', [orgId, user!.id, role]);
  return { id: user!.id, auth: basic(login, password) };
}

export async function createOrg(server: TestServer, name: string): Promise<number> {
  const [org] = await server.sql<{ id: number }>('insert into org (name) values ($1) returning id', [name]);
  return org!.id;
}

/** Creates a data source through the API and returns its id, uid and name. */
export async function createDataSource(server: TestServer, auth: string, body: Record<string, unknown>): Promise<{ id: number; uid: string; name: string }> {
  const res = await call(server, 'POST', '/api/datasources', { auth, body: { type: 'loki', access: 'proxy', ...body } });
  if (res.status !== 200) throw new Error(`creating a data source failed: ${res.status} ${res.text}`);
  return { id: res.body.id, uid: res.body.datasource.uid, name: res.body.name };
}

/** `route.path` with each `:param` replaced from `params` (percent-encoded). */
export function fillPath(route: Pick<RouteSpec, 'path'>, params: Record<string, string | number>): string {
  return route.path.replace(/:([A-Za-z]+)/g, (_m, name: string) => {
    if (!(name in params)) throw new Error(`no value for :${name} in ${route.path}`);
    return encodeURIComponent(String(params[name]));
  });
}

export const routeKey = (route: Pick<RouteSpec, 'method' | 'path'>) => `${route.method} ${route.path}`;

/** Text that only shows up when an error leaks its stack or internals. */
export const STACK_TRACE = /\bat [^\n]*[(\s/][^\n]*:\d+:\d+|node:internal|\.ts:\d+|\bError: [^"]*\n\s+at /;

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export interface WireResponse {
  status: number;
  /** Header names lower-cased; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/**
 * Splits everything a server sent on one connection into its responses, framed by content-length
 * or chunked encoding (`headRequests[i]` true: the i-th answer has no body); whatever does not
 * form a whole response is returned as `rest`.
 */
export function splitResponses(wire: string, headRequests: readonly boolean[] = []): { responses: WireResponse[]; rest: string } {
  const responses: WireResponse[] = [];
  let at = 0;
  while (at < wire.length) {
    const headEnd = wire.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const [statusLine, ...lines] = wire.slice(at, headEnd).split('\r\n');
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
    if (!status) break;
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let next = headEnd + 4;
    let body = '';
    if (headRequests[responses.length]) {
      // No body, whatever the headers announce.
    } else if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const sizeEnd = wire.indexOf('\r\n', next);
        if (sizeEnd < 0) return { responses, rest: wire.slice(at) };
        const size = Number.parseInt(wire.slice(next, sizeEnd), 16);
        next = sizeEnd + 2 + size + 2;
        if (next > wire.length) return { responses, rest: wire.slice(at) };
        if (size === 0) break;
        body += wire.slice(sizeEnd + 2, sizeEnd + 2 + size);
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (next + length > wire.length) break;
      body = wire.slice(next, next + length);
      next += length;
    }
    responses.push({ status: Number(status[1]), headers, body });
    at = next;
  }
  return { responses, rest: wire.slice(at) };
}
