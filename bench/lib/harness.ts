import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';
import type { PgConnection } from '../../src/db/embedded.ts';
import { medianOf } from './report.ts';
import type { BenchContext, Comparison, LoadFigures, LoadOptions, LoadResult, Measured, Target, TargetOptions, Variant } from './types.ts';

const TARGET_SCRIPT = new URL('./target.ts', import.meta.url);

/**
 * How `npm start` runs the server, read from package.json's start script
 * (`[NAME=value ...] node [--flag ...] src/main.ts`): its environment assignments and Node flags.
 */
export function startScript(): { env: Record<string, string>; nodeFlags: string[]; script: string } {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`package.json start script does not run node: ${pkg.scripts.start}`);
  const nodeFlags = words.filter((w) => w.startsWith('--'));
  const script = words.find((w) => !w.startsWith('--'));
  if (!script) throw new Error(`package.json start script names no script: ${pkg.scripts.start}`);
  return { env, nodeFlags, script };
}

/**
 * Node flags for every server under test, the baselines included: those `npm start` gives the
 * server (so it is measured as it runs, and the baselines on the same runtime settings), plus a CPU
 * profile written into `BENCH_CPU_PROFILE_DIR` when that is set (open it in Chrome DevTools).
 */
export function serverNodeArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  // --expose-gc only lets a target collect garbage before it reports retained memory.
  const flags = new Set([...process.execArgv, ...startScript().nodeFlags, '--expose-gc']);
  return [...flags, ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [])];
}

/**
 * A memory figure of one process from `/proc/<pid>/status`, in bytes: `VmRSS` (resident now) or
 * `VmHWM` (the peak since start or since `clear_refs`); 0 when the field is not there.
 */
export function processStatusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Starts a target process and wraps its IPC requests. */
export async function startTarget(options: TargetOptions): Promise<Target> {
  const child: ChildProcess = fork(TARGET_SCRIPT, [], {
    execArgv: serverNodeArgs(),
    env: { ...process.env, BENCH_TARGET: JSON.stringify(options) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bench target (${options.kind}) exited with ${code}`)));
    child.on('message', (message: { type: string; port?: number; id?: number; value?: unknown }) => {
      if (message.type === 'ready') resolve(message.port!);
      else if (message.type === 'reply') pending.get(message.id!)?.(message.value);
    });
  });
  child.removeAllListeners('exit');
  const ask = <T>(type: string) => new Promise<T>((resolve) => {
    const id = nextId++;
    pending.set(id, resolve as (value: unknown) => void);
    child.send({ type, id });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    rss: () => ask<number>('rss'),
    retained: () => ask<number>('retained'),
    reduced: () => ask<number>('reduced'),
    queries: () => ask<number>('queries'),
    cpu: () => ask<number>('cpu'),
    resetLoopDelay: () => ask<boolean>('loop-reset').then(() => undefined),
    loopDelay: () => ask<{ maxMs: number; p99Ms: number }>('loop'),
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await ask('close');
      await exited;
    },
  };
}

export async function load(target: Target, options: LoadOptions, duration: number): Promise<LoadResult> {
  const cpuBefore = await target.cpu?.();
  const result = await autocannon({
    url: `${target.url}${options.path}`,
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections ?? 10,
    duration,
    pipelining: 1,
  });
  const cpuAfter = await target.cpu?.();
  return {
    cpuMicrosPerRequest: cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0 ? (cpuAfter - cpuBefore) / result.requests.total : undefined,
    requestsPerSecond: result.requests.total / duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
    requests: result.requests.total,
  };
}

/**
 * `a` against `b`, round by round (each pair ran back to back, so drift in the machine's load hits
 * both alike), each comparison the median of its rounds: throughput, and server CPU per request
 * when both processes report their CPU. Both ratios are above 1 when `a` is better.
 */
export function compareRounds(a: Measured, b: Measured, of: string): Comparison[] {
  const paired = a.rounds.map((round, i) => [round, b.rounds[i]!] as const);
  const throughput = paired.map(([x, y]) => x.requestsPerSecond / y.requestsPerSecond);
  const result: Comparison[] = [{ kind: 'throughput', of, value: medianOf(throughput), rounds: throughput }];
  if (paired.every(([x, y]) => x.cpuMicrosPerRequest && y.cpuMicrosPerRequest)) {
    const cpu = paired.map(([x, y]) => y.cpuMicrosPerRequest! / x.cpuMicrosPerRequest!);
    result.push({ kind: 'cpu', of, value: medianOf(cpu), rounds: cpu });
  }
  return result;
}

/**
 * The time per request `a` adds to `b`'s at one connection, round by round, in ms. autocannon's
 * latency histogram has whole-millisecond buckets; with one request in flight the time per request
 * is the inverse of the rate, to the microsecond.
 */
export function addedRounds(a: Measured, b: Measured, of: string): Comparison {
  const added = a.rounds.map((round, i) => timePerRequestMs(round) - timePerRequestMs(b.rounds[i]!));
  return { kind: 'added', of, value: medianOf(added), rounds: added };
}

export const timePerRequestMs = (r: LoadResult) => 1000 / r.requestsPerSecond;

/** Each figure of a variant's rounds, the median of its own. */
export function figures(m: Measured): LoadFigures {
  const cpu = m.rounds.map((r) => r.cpuMicrosPerRequest);
  return {
    requestsPerSecond: medianOf(m.rounds.map((r) => r.requestsPerSecond)),
    latencyP50Ms: medianOf(m.rounds.map((r) => r.latencyP50Ms)),
    latencyP99Ms: medianOf(m.rounds.map((r) => r.latencyP99Ms)),
    cpuMicrosPerRequest: cpu.every((n) => n !== undefined) ? medianOf(cpu as number[]) : undefined,
  };
}

export function median(results: LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Warm-up loads last this long each; at least MIN and at most MAX of them per variant. */
const WARM_UP_SECONDS = 2;
const MIN_WARM_UPS = 4;
const MAX_WARM_UPS = 12;
/** Warm once two loads in a row cost no more than this much less than the cheapest before them. */
const SETTLED = 0.03;

/**
 * Loads a variant until its cost per request stops falling. A server keeps getting cheaper for
 * many seconds after it starts (seen here: CPU per request still falling by half 10 to 20 s into
 * the load, in the app and the baselines alike; JIT tiers and warming caches are the usual
 * causes), and the app with its larger code base warms more slowly than a small baseline, so a
 * fixed two-second warm-up compared a colder app with a warmer baseline. The cost is the server's CPU per
 * request where the target reports its CPU, else the inverse of its throughput.
 */
async function warmUp(v: Variant, log: (message: string) => void): Promise<void> {
  const costs: number[] = [];
  for (let i = 0; i < MAX_WARM_UPS; i++) {
    const warm = await load(v.target, v.load, WARM_UP_SECONDS);
    if (warm.failures > 0) throw new Error(`${v.name}: ${warm.failures} failed requests during warm-up`);
    costs.push(warm.cpuMicrosPerRequest ?? 1e6 / Math.max(warm.requestsPerSecond, 1));
    if (costs.length < MIN_WARM_UPS) continue;
    const best = Math.min(...costs.slice(0, -2));
    if (costs.slice(-2).every((cost) => cost >= best * (1 - SETTLED))) break;
  }
  const unit = v.target.cpu ? ' µs CPU/request' : ' µs/request';
  log(`  warm-up ${v.name}: ${costs.map((c) => Math.round(c)).join(' -> ')}${unit}`);
}

export function createContext(cluster: PgConnection, options: { duration: number; rounds: number; log: (message: string) => void }): BenchContext {
  const ctx: BenchContext = {
    cluster,
    duration: options.duration,
    rounds: options.rounds,
    log: options.log,
    async createDatabase(name) {
      const client = new pg.Client(cluster);
      await client.connect();
      try {
        await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
        await client.query(`create database ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return { ...cluster, database: name };
    },
    startTarget,
    load: (target, loadOptions, duration = options.duration) => load(target, loadOptions, duration),
    async compare(variants: Variant[]): Promise<Measured[]> {
      for (const v of variants) await warmUp(v, options.log);
      const rounds = new Map<string, LoadResult[]>(variants.map((v) => [v.name, []]));
      for (let round = 1; round <= options.rounds; round++) {
        // Every other round runs in reverse order (A B C, C B A, ...), so a machine that slows down
        // or speeds up during a round does not always favour the same variant of a pair.
        for (const v of round % 2 === 1 ? variants : [...variants].reverse()) {
          const result = await load(v.target, v.load, options.duration);
          if (result.failures > 0) throw new Error(`${v.name}: ${result.failures} failed requests in round ${round}`);
          rounds.get(v.name)!.push(result);
          const cpu = result.cpuMicrosPerRequest === undefined ? '' : `, ${Math.round(result.cpuMicrosPerRequest)} µs CPU/request`;
          options.log(`  round ${round}/${options.rounds} ${v.name}: ${Math.round(result.requestsPerSecond)} req/s${cpu}`);
        }
      }
      return variants.map((v) => ({ name: v.name, rounds: rounds.get(v.name)!, median: median(rounds.get(v.name)!) }));
    },
  };
  return ctx;
}

/** Creates what a read benchmark needs through the API itself: an admin's token and a data source. */
export async function seed(target: Target): Promise<{ token: string; dataSourceId: number }> {
  const admin = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${target.url}${path}`, { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const key = await post('/api/auth/keys', { name: `bench-${Date.now()}`, role: 'Admin' });
  const ds = await post('/api/datasources', {
    name: `bench-read-${Date.now()}`, type: 'prometheus', access: 'proxy', url: 'http://prometheus.example:9090', basicAuth: true, basicAuthUser: 'reader',
    jsonData: { httpMethod: 'POST', timeInterval: '15s' }, secureJsonData: { basicAuthPassword: 'bench-secret' },
  });
  return { token: `Bearer ${key.key as string}`, dataSourceId: ds.id as number };
}
