/**
 * Data source proxy scenario: the same small upstream answer fetched five ways in one run,
 * interleaved round by round, each server in its own process reporting its CPU:
 * - direct: the upstream itself;
 * - bare pipe: a minimal node:http proxy (`http.request(...)` + `pipe` both ways, keep-alive agent);
 * - http-proxy-3 alone: the library dashgate's proxy is built on, on its node:http path with the
 *   same options as dashgate's and nothing else (the floor for any proxy built on it);
 * - http-proxy-3's fetch path: the same library and options, upstream calls made by undici's fetch
 *   over an undici Agent (a keep-alive pool), the answer's head written from `onAfterResponse`
 *   as the node:http variant writes it from `proxyRes`;
 * - dashgate: `GET /api/datasources/proxy/:id/...` through the real application (Basic auth as
 *   REST does it, data source cache, header rules, egress checks, http-proxy-3).
 * One connection gives the time a single client waits per request; many connections give
 * throughput and each proxy's server CPU per request. Targets: dashgate >= 0.9x http-proxy-3 alone
 * (judged on server CPU per request, see RESULTS.md), and at most 0.2 ms added to the bare pipe's
 * time per request at one connection. dashgate against the bare pipe's throughput is shown without
 * a target.
 *
 * `node bench/proxy.ts --serve upstream|pipe|http-proxy-3|http-proxy-3-fetch` is how it starts its
 * own servers.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MikroORM } from '@mikro-orm/postgresql';
import { createProxyServer } from 'http-proxy-3';
import { Agent as UndiciAgent, fetch as undiciFetch } from 'undici';
import { loadSettings } from '../src/config/settings.ts';
import { ChangeListener } from '../src/db/change-listener.ts';
import type { PgConnection } from '../src/db/embedded.ts';
import { ormOptions } from '../src/db/orm.ts';
import { createLogger } from '../src/logging/logger.ts';
import { createServices } from '../src/services/index.ts';
import { addedRounds, compareRounds, figures, serverNodeArgs, timePerRequestMs } from './lib/harness.ts';
import { medianOf } from './lib/report.ts';
import type { BenchContext, BenchRow, Measured, Target, Variant } from './lib/types.ts';

const SCENARIO = 'Data source proxy';
/** A typical small query answer (a Prometheus instant vector of a few series). */
const UPSTREAM_BODY = JSON.stringify({
  status: 'success',
  data: {
    resultType: 'vector',
    result: Array.from({ length: 6 }, (_, i) => ({ metric: { __name__: 'up', instance: `node-${i}:9100`, job: 'node' }, value: [1700000000 + i, '1'] })),
  },
});
const UPSTREAM_PATH = '/api/v1/query?query=up';
const MANY_CONNECTIONS = 32;
/** `[dataproxy] dialTimeout` by default, which dashgate passes as `connectTimeout`. */
const DIAL_TIMEOUT_MS = 10_000;
/** Issue targets: against http-proxy-3 alone (many connections), and over the bare pipe (one). */
const TARGET_LIBRARY_RATIO = 0.9;
const TARGET_ADDED_LATENCY_MS = 0.2;

type ServeKind = 'upstream' | 'pipe' | 'http-proxy-3' | 'http-proxy-3-fetch';

/** Starts `node bench/proxy.ts --serve <kind>` and waits for its port. */
function serveInChild(kind: ServeKind, upstreamPort?: number): Promise<Target> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', kind], {
    execArgv: serverNodeArgs(),
    env: { ...process.env, BENCH_PROXY_UPSTREAM_PORT: String(upstreamPort ?? '') },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 0;
  const pending = new Map<number, (value: unknown) => void>();
  const ask = (type: string) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      child.send({ type, id });
    });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bench ${kind} server exited with ${code}`)));
    child.on('message', (message: { type: string; id?: number; port?: number; value?: unknown }) => {
      if (message.type === 'reply') pending.get(message.id!)?.(message.value);
      if (message.type !== 'ready') return;
      child.removeAllListeners('exit');
      resolve({
        url: `http://127.0.0.1:${message.port}`,
        pid: child.pid!,
        rss: async () => Number(await ask('rss')),
        queries: async () => 0,
        cpu: async () => Number(await ask('cpu')),
        close: async () => {
          await ask('close');
        },
      });
    });
  });
}

/** The bench upstream as an http-proxy-3 target without a path, as dashgate's prepared upstream is. */
function upstreamOrigin(port: number) {
  return { protocol: 'http:', host: `127.0.0.1:${port}`, hostname: '127.0.0.1', port: String(port) };
}

/**
 * The options dashgate gives http-proxy-3 for a path that URL parsing would leave as it is
 * (src/upstream/stream.ts): the path goes verbatim as the request URL, so the library parses no URL.
 */
function dashgateOptions(req: IncomingMessage, target: object, agent: Agent, selfHandleResponse: boolean) {
  return { method: req.method, target: target as never, prependPath: false, toProxy: true, changeOrigin: false, selfHandleResponse, connectTimeout: DIAL_TIMEOUT_MS, agent };
}

/** Child side: the upstream data source, or the bare pipe proxy in front of it. */
async function serve(kind: ServeKind): Promise<void> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  if (kind === 'upstream') {
    const body = Buffer.from(UPSTREAM_BODY);
    // Only the one path: a proxy that sent another would fail the check of every variant's answer.
    const notFound = Buffer.from('not found');
    handler = (req, res) => {
      req.resume();
      req.on('end', () => {
        const [status, type, answer] = req.url === UPSTREAM_PATH ? [200, 'application/json', body] : [404, 'text/plain', notFound];
        res.writeHead(status, { 'content-type': type, 'content-length': answer.length });
        res.end(answer);
      });
    };
  } else if (kind === 'http-proxy-3') {
    // The library dashgate's proxy is built on, with the same options and nothing else.
    const port = Number(process.env.BENCH_PROXY_UPSTREAM_PORT);
    const agent = new Agent({ keepAlive: true, maxFreeSockets: 256 });
    const proxy = createProxyServer({});
    proxy.on('proxyRes', (answer, _req, res) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    const origin = upstreamOrigin(port);
    handler = (req, res) => {
      proxy.web(req, res, dashgateOptions(req, origin, agent, true), () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
    };
  } else if (kind === 'http-proxy-3-fetch') {
    // The same library and options on its fetch path, which it takes when given `fetch` or
    // `fetchOptions`: undici's own fetch with an undici Agent (one version of both), a keep-alive
    // pool with no cap on connections, as the node:http agent has none. The target carries an
    // `href`: without one this path builds the URL from `host` and `port` (doubling a port that
    // `host` already has) and reads only `https` without its colon as TLS.
    const port = Number(process.env.BENCH_PROXY_UPSTREAM_PORT);
    const dispatcher = new UndiciAgent();
    // Passed as on the node:http path, though this path makes no use of it: without an `agent` the
    // library sets `connection: close` on the upstream request, and undici then closes every
    // connection after one answer (seen here: about 5x the CPU per request, no keep-alive at all).
    const agent = new Agent({ keepAlive: true, maxFreeSockets: 256 });
    const proxy = createProxyServer({});
    const target = { href: `http://127.0.0.1:${port}/`, ...upstreamOrigin(port) };
    handler = (req, res) => {
      proxy.web(req, res, {
        // Without `selfHandleResponse`, see `onAfterResponse`.
        ...dashgateOptions(req, target, agent, false),
        fetch: undiciFetch as never,
        fetchOptions: {
          requestOptions: { dispatcher } as never,
          // selfHandleResponse on this path hands `proxyRes` a plain object without the body (and
          // drains the body itself), so the head is written here and the library pipes the body.
          onAfterResponse: async (answer) => {
            res.writeHead(answer.status, Object.fromEntries(answer.headers));
          },
        },
      }, () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
    };
  } else {
    const port = Number(process.env.BENCH_PROXY_UPSTREAM_PORT);
    const agent = new Agent({ keepAlive: true, maxFreeSockets: 256 });
    handler = (req, res) => {
      const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    };
  }
  const server = createServer(handler);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('message', (message: { type: string; id: number }) => {
    const reply = (value: unknown) => process.send!({ type: 'reply', id: message.id, value });
    if (message.type === 'rss') reply(process.memoryUsage().rss);
    else if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      reply(user + system);
    } else if (message.type === 'close') {
      server.closeAllConnections();
      server.close(() => {
        reply(true);
        process.exit(0);
      });
    }
  });
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port });
}

const ADMIN = `Basic ${Buffer.from('admin:admin').toString('base64')}`;

/**
 * The Basic check the proxy runs on every call, as REST does: after the first call the verified
 * principal comes from memory, kept current by the change listener. Timed in this process.
 */
async function timeAuthentication(connection: PgConnection, calls: number): Promise<{ medianMs: number; cpuMicros: number }> {
  const settings = loadSettings({
    argv: [],
    env: {},
    overrides: { database: { type: 'postgres', host: `${connection.host}:${connection.port}`, name: connection.database, user: connection.user, password: connection.password } },
  });
  const orm = await MikroORM.init(ormOptions(connection, { maxConnections: 2, sslMode: 'disable', secretKey: settings.security.secretKey }));
  let changes: ChangeListener | undefined;
  try {
    changes = new ChangeListener(connection, createLogger('error', createWriteStream('/dev/null')));
    const services = createServices(settings, orm, changes);
    await changes.start();
    const credentials = { authorization: ADMIN, orgIdHeader: undefined, ip: '127.0.0.1' };
    // The first calls warm up (and run argon2 once).
    for (let i = 0; i < 50; i++) await services.authenticator.authenticate(orm.em.fork(), credentials);
    const times: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      await services.authenticator.authenticate(orm.em.fork(), credentials);
      times.push(performance.now() - started);
    }
    const cpu = process.cpuUsage(cpuBefore);
    return { medianMs: times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!, cpuMicros: (cpu.user + cpu.system) / calls };
  } finally {
    await changes?.close();
    await orm.close(true);
  }
}

/** Runs the scenario; rows go to bench/RESULTS.md through the runner. */
export async function runProxyBench(ctx: BenchContext): Promise<BenchRow[]> {
  const upstream = await serveInChild('upstream');
  const upstreamPort = Number(new URL(upstream.url).port);
  const pipe = await serveInChild('pipe', upstreamPort);
  const library = await serveInChild('http-proxy-3', upstreamPort);
  const libraryFetch = await serveInChild('http-proxy-3-fetch', upstreamPort);
  const database = await ctx.createDatabase('bench_proxy');
  const app = await ctx.startTarget({ kind: 'app', connection: database });
  try {
    const created = await fetch(`${app.url}/api/datasources`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-prometheus', type: 'prometheus', access: 'proxy', url: upstream.url }),
    });
    if (!created.ok) throw new Error(`creating the data source failed: ${created.status} ${await created.text()}`);
    const { datasource } = (await created.json()) as { datasource: { id: number } };
    const headers = { authorization: ADMIN, accept: 'application/json' };
    const proxyPath = `/api/datasources/proxy/${datasource.id}${UPSTREAM_PATH}`;
    // Every variant must answer the same body, or the comparison is meaningless.
    for (const [url, path] of [[upstream.url, UPSTREAM_PATH], [pipe.url, UPSTREAM_PATH], [library.url, UPSTREAM_PATH], [libraryFetch.url, UPSTREAM_PATH], [app.url, proxyPath]] as const) {
      const res = await fetch(url + path, { headers });
      const text = await res.text();
      if (res.status !== 200 || text !== UPSTREAM_BODY) throw new Error(`${url}${path} answered ${res.status}: ${text.slice(0, 200)}`);
    }
    // Each pair compared sits side by side, so it runs back to back in every round: fetch path and
    // node:http path, http-proxy-3 and dashgate, dashgate and the bare pipe.
    const variants = (connections: number): Variant[] => [
      { name: 'direct', target: upstream, load: { path: UPSTREAM_PATH, headers, connections } },
      { name: 'http-proxy-3 fetch path', target: libraryFetch, load: { path: UPSTREAM_PATH, headers, connections } },
      { name: 'http-proxy-3', target: library, load: { path: UPSTREAM_PATH, headers, connections } },
      { name: 'dashgate', target: app, load: { path: proxyPath, headers, connections } },
      { name: 'pipe', target: pipe, load: { path: UPSTREAM_PATH, headers, connections } },
    ];

    ctx.log('proxy: 1 connection (latency)');
    const [direct1, fetch1, library1, ours1, pipe1] = await ctx.compare(variants(1));
    ctx.log(`proxy: ${MANY_CONNECTIONS} connections (throughput)`);
    const [directN, fetchN, libraryN, oursN, pipeN] = await ctx.compare(variants(MANY_CONNECTIONS));
    const auth = await timeAuthentication(database, 1000);

    const one = (measurement: string, m: Measured | undefined) => ({
      scenario: SCENARIO,
      measurement: `${measurement}, time per request (1 connection)`,
      value: medianOf(m!.rounds.map(timePerRequestMs)),
      unit: 'ms' as const,
      load: figures(m!),
    });
    const many = (measurement: string, m: Measured | undefined) => ({
      scenario: SCENARIO,
      measurement: `${measurement}, throughput (${MANY_CONNECTIONS} connections)`,
      value: figures(m!).requestsPerSecond,
      unit: 'req/s' as const,
      load: figures(m!),
    });
    const cpuOnly = (a: Measured | undefined, b: Measured | undefined, of: string) => compareRounds(a!, b!, of).filter((c) => c.kind === 'cpu');
    const added = addedRounds(ours1!, pipe1!, 'the bare pipe');
    return [
      one('upstream direct', direct1),
      one('bare http.request().pipe() proxy', pipe1),
      { ...one('http-proxy-3 alone, same options', library1), comparisons: [addedRounds(library1!, pipe1!, 'the bare pipe')] },
      {
        ...one('http-proxy-3 fetch path (undici Agent, keep-alive pool), same options', fetch1),
        comparisons: [addedRounds(fetch1!, library1!, 'its node:http path'), ...cpuOnly(fetch1, library1, 'its node:http path')],
      },
      { ...one('dashgate proxy', ours1), comparisons: [added], target: { on: 'added', op: '<=', bound: TARGET_ADDED_LATENCY_MS } },
      {
        scenario: SCENARIO,
        measurement: 'of which: authenticating the caller as REST does (Basic, verified principal from memory after the change barrier), alone',
        value: auth.medianMs,
        unit: 'ms',
        comparisons: [{ kind: 'share', of: 'the added time', value: auth.medianMs / Math.max(added.value, 1e-9) }],
        notes: `median of 1,000 sequential calls of the same authenticator, in-process; ${Math.round(auth.cpuMicros)} µs CPU per call (REST pays the same)`,
      },
      many('upstream direct', directN),
      many('bare http.request().pipe() proxy', pipeN),
      { ...many('http-proxy-3 alone, same options', libraryN), comparisons: compareRounds(libraryN!, pipeN!, 'the bare pipe') },
      { ...many('http-proxy-3 fetch path (undici Agent, keep-alive pool), same options', fetchN), comparisons: compareRounds(fetchN!, libraryN!, 'its node:http path') },
      { ...many('dashgate proxy', oursN), comparisons: compareRounds(oursN!, libraryN!, 'http-proxy-3 alone'), target: { on: 'ratio', op: '>=', bound: TARGET_LIBRARY_RATIO } },
      // For information: the target is against the library dashgate is built on.
      { ...many('dashgate proxy against the bare pipe', oursN), comparisons: compareRounds(oursN!, pipeN!, 'the bare pipe') },
    ];
  } finally {
    await Promise.all([app.close(), pipe.close(), library.close(), libraryFetch.close(), upstream.close()]);
  }
}

export default runProxyBench;

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex >= 0 && process.argv[1] === fileURLToPath(import.meta.url)) {
  serve(process.argv[serveIndex + 1] as ServeKind).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
