/**
 * Data source proxy scenario: the same small upstream answer fetched four ways in one run,
 * interleaved round by round, each server in its own process:
 * - direct: the upstream itself;
 * - bare pipe: a minimal node:http proxy (`http.request(...)` + `pipe` both ways, keep-alive agent);
 * - http-proxy-3 alone: the library dashgate's proxy is built on, with the same options and nothing
 *   else (the floor for any proxy built on it);
 * - dashgate: `GET /api/datasources/proxy/:id/...` through the real application (Basic auth as
 *   REST does it, data source cache, header rules, egress checks, http-proxy-3).
 * One connection gives the time a single client waits per request; many connections give
 * throughput, plus each proxy's CPU per request. Targets: dashgate >= 0.9x the bare pipe's
 * throughput, and at most 0.3 ms added to the bare pipe's time per request at one connection.
 *
 * `node bench/proxy.ts --serve upstream|pipe|http-proxy-3` is how it starts its own servers.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { MikroORM } from '@mikro-orm/postgresql';
import { createProxyServer } from 'http-proxy-3';
import { loadSettings } from '../src/config/settings.ts';
import { ChangeListener } from '../src/db/change-listener.ts';
import type { PgConnection } from '../src/db/embedded.ts';
import { ormOptions } from '../src/db/orm.ts';
import { createLogger } from '../src/logging/logger.ts';
import { createServices } from '../src/services/index.ts';
import { profilingArgs } from './lib/harness.ts';
import type { BenchContext, BenchRow, LoadResult, Target, Variant } from './lib/types.ts';

const fmt = {
  rps: (value: number) => `${Math.round(value).toLocaleString('en-US')} req/s`,
  ms: (value: number) => `${value.toFixed(3)} ms`,
};

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
const TARGET_THROUGHPUT_RATIO = 0.9;
const TARGET_ADDED_LATENCY_MS = 0.3;

type ServeKind = 'upstream' | 'pipe' | 'http-proxy-3';

/** Starts `node bench/proxy.ts --serve <kind>` and waits for its port. */
function serveInChild(kind: ServeKind, upstreamPort?: number): Promise<Target> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', kind], {
    execArgv: profilingArgs(),
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
        close: async () => {
          await ask('close');
        },
      });
    });
  });
}

/** Child side: the upstream data source, or the bare pipe proxy in front of it. */
async function serve(kind: ServeKind): Promise<void> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  if (kind === 'upstream') {
    const body = Buffer.from(UPSTREAM_BODY);
    handler = (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
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
    handler = (req, res) => {
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      const target = { protocol: 'http:', host: `127.0.0.1:${port}`, hostname: '127.0.0.1', port: String(port), pathname: query < 0 ? url : url.slice(0, query), search: query < 0 ? '' : url.slice(query) };
      proxy.web(req, res, { target: target as never, ignorePath: true, selfHandleResponse: true, agent }, () => {
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
    else if (message.type === 'close') {
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

/** CPU time (user + system) a process has used so far, in microseconds; null off Linux. */
async function cpuMicros(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1_000_000 / CLOCK_TICKS);
  } catch {
    return null;
  }
}
/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

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
  const pipe = await serveInChild('pipe', Number(new URL(upstream.url).port));
  const library = await serveInChild('http-proxy-3', Number(new URL(upstream.url).port));
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
    for (const [url, path] of [[upstream.url, UPSTREAM_PATH], [pipe.url, UPSTREAM_PATH], [library.url, UPSTREAM_PATH], [app.url, proxyPath]] as const) {
      const res = await fetch(url + path, { headers });
      const text = await res.text();
      if (res.status !== 200 || text !== UPSTREAM_BODY) throw new Error(`${url}${path} answered ${res.status}: ${text.slice(0, 200)}`);
    }
    const variants = (connections: number): Variant[] => [
      // The bare pipe sits between the two proxies compared with it.
      { name: 'direct', target: upstream, load: { path: UPSTREAM_PATH, headers, connections } },
      { name: 'http-proxy-3', target: library, load: { path: UPSTREAM_PATH, headers, connections } },
      { name: 'pipe', target: pipe, load: { path: UPSTREAM_PATH, headers, connections } },
      { name: 'dashgate', target: app, load: { path: proxyPath, headers, connections } },
    ];

    ctx.log('proxy: 1 connection (latency)');
    const [direct1, library1, pipe1, ours1] = (await ctx.compare(variants(1))).map((m) => m.median);
    ctx.log(`proxy: ${MANY_CONNECTIONS} connections (throughput)`);
    const [directN, libraryN, pipeN, oursN] = (await ctx.compare(variants(MANY_CONNECTIONS))).map((m) => m.median);
    // Each proxy's own CPU per request, in one more round each: what throughput is made of on a
    // machine whose cores the load generator, upstream and PostgreSQL share.
    const cpu: Record<string, number | null> = {};
    for (const variant of variants(MANY_CONNECTIONS)) {
      const before = await cpuMicros(variant.target.pid);
      const result = await ctx.load(variant.target, variant.load);
      const after = await cpuMicros(variant.target.pid);
      cpu[variant.name] = before === null || after === null || result.requests === 0 ? null : (after - before) / result.requests;
    }
    const auth = await timeAuthentication(database, 1000);

    // autocannon's latency histogram has whole-millisecond buckets; with one connection and one
    // request in flight, the time per request is the inverse of the rate, to the microsecond.
    const perRequestMs = (r: LoadResult) => 1000 / r.requestsPerSecond;
    const added = perRequestMs(ours1!) - perRequestMs(pipe1!);
    const ratio = oursN!.requestsPerSecond / pipeN!.requestsPerSecond;
    const cpuNote = (name: string) => (cpu[name] == null ? '' : `; ${Math.round(cpu[name]!)} µs CPU per request in its process`);
    return [
      { scenario: SCENARIO, measurement: 'upstream direct, time per request (1 connection)', value: fmt.ms(perRequestMs(direct1!)), notes: `${fmt.rps(direct1!.requestsPerSecond)}, p99 ${direct1!.latencyP99Ms} ms` },
      { scenario: SCENARIO, measurement: 'bare http.request().pipe() proxy, time per request (1 connection)', value: fmt.ms(perRequestMs(pipe1!)), notes: `${fmt.rps(pipe1!.requestsPerSecond)}, p99 ${pipe1!.latencyP99Ms} ms` },
      {
        scenario: SCENARIO,
        measurement: 'http-proxy-3 alone, same options, time per request (1 connection)',
        value: fmt.ms(perRequestMs(library1!)),
        ratio: `+${fmt.ms(perRequestMs(library1!) - perRequestMs(pipe1!))} over the bare pipe`,
        notes: `${fmt.rps(library1!.requestsPerSecond)}, p99 ${library1!.latencyP99Ms} ms`,
      },
      {
        scenario: SCENARIO,
        measurement: 'dashgate proxy, time per request (1 connection)',
        value: fmt.ms(perRequestMs(ours1!)),
        ratio: `+${fmt.ms(added)} over the bare pipe`,
        target: `<= +${TARGET_ADDED_LATENCY_MS} ms`,
        pass: added <= TARGET_ADDED_LATENCY_MS,
        notes: `${fmt.rps(ours1!.requestsPerSecond)}, p99 ${ours1!.latencyP99Ms} ms`,
      },
      {
        scenario: SCENARIO,
        measurement: 'of which: authenticating the caller as REST does (Basic, verified principal from memory after the change barrier), alone',
        value: fmt.ms(auth.medianMs),
        ratio: `${Math.round((auth.medianMs / Math.max(added, 1e-9)) * 100)}% of the added time`,
        notes: `median of 1,000 sequential calls of the same authenticator, in-process; ${Math.round(auth.cpuMicros)} µs CPU per call (REST pays the same)`,
      },
      { scenario: SCENARIO, measurement: `upstream direct, throughput (${MANY_CONNECTIONS} connections)`, value: fmt.rps(directN!.requestsPerSecond), notes: `p99 ${directN!.latencyP99Ms} ms${cpuNote('direct')}` },
      { scenario: SCENARIO, measurement: `bare http.request().pipe() proxy, throughput (${MANY_CONNECTIONS} connections)`, value: fmt.rps(pipeN!.requestsPerSecond), notes: `p99 ${pipeN!.latencyP99Ms} ms${cpuNote('pipe')}` },
      {
        scenario: SCENARIO,
        measurement: `http-proxy-3 alone, same options, throughput (${MANY_CONNECTIONS} connections)`,
        value: fmt.rps(libraryN!.requestsPerSecond),
        ratio: `${(libraryN!.requestsPerSecond / pipeN!.requestsPerSecond).toFixed(2)}x the bare pipe`,
        notes: `p99 ${libraryN!.latencyP99Ms} ms${cpuNote('http-proxy-3')}`,
      },
      {
        scenario: SCENARIO,
        measurement: `dashgate proxy, throughput (${MANY_CONNECTIONS} connections)`,
        value: fmt.rps(oursN!.requestsPerSecond),
        ratio: `${ratio.toFixed(2)}x the bare pipe`,
        target: `>= ${TARGET_THROUGHPUT_RATIO}x`,
        pass: ratio >= TARGET_THROUGHPUT_RATIO,
        notes: `p99 ${oursN!.latencyP99Ms} ms${cpuNote('dashgate')}`,
      },
    ];
  } finally {
    await Promise.all([app.close(), pipe.close(), library.close(), upstream.close()]);
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
