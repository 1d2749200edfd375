/**
 * `npm run bench`: starts a PostgreSQL cluster of its own, runs every scenario against real servers
 * on loopback (autocannon in this process, each server in its own) once per run, and writes
 * bench/RESULTS.md with each figure's median over the runs.
 *
 *   npm run bench -- [--runs 3] [--rounds 15] [--duration 2] [--only reads,admin] [--out bench/RESULTS.md]
 *
 * A scenario is a module whose default export is `(ctx: BenchContext) => Promise<BenchRow[]>`
 * (bench/lib/types.ts). bench/proxy.ts, when present, is run as the "proxy" scenario.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { createContext } from './lib/harness.ts';
import { aggregate, formatJudged, formatTarget, renderTables, type RowOverRuns } from './lib/report.ts';
import type { BenchContext, BenchRow } from './lib/types.ts';

/**
 * Rows for the tables; a scenario may instead hand back ready Markdown (a section of its own, which
 * has no median over runs: the last run's is printed).
 */
type Scenario = (ctx: BenchContext) => Promise<BenchRow[] | string | void>;

const SCENARIOS: Record<string, () => Promise<Scenario>> = {
  reads: async () => (await import('./scenarios/reads.ts')).default,
  admin: async () => (await import('./scenarios/admin-basic.ts')).default,
  list: async () => (await import('./scenarios/list-scaling.ts')).default,
  permissions: async () => (await import('./scenarios/datasource-permissions.ts')).default,
  startup: async () => (await import('./scenarios/startup.ts')).default,
  subscriptions: async () => (await import('./scenarios/subscriptions.ts')).default,
  query: async () => (await import('./scenarios/query.ts')).default,
  'query-kinds': async () => (await import('./scenarios/query-kinds.ts')).default,
  'live-queries': async () => (await import('./scenarios/live-queries.ts')).default,
  graph: async () => (await import('./scenarios/graph.ts')).default,
  hostile: async () => (await import('./scenarios/hostile-queries.ts')).default,
  tracing: async () => (await import('./scenarios/tracing.ts')).default,
};
// The proxy scenario plugs in here when bench/proxy.ts exists (default export or runProxyBench).
const PROXY_SCENARIO = new URL('./proxy.ts', import.meta.url);
if (existsSync(PROXY_SCENARIO)) {
  SCENARIOS.proxy = async () => {
    const module = (await import(PROXY_SCENARIO.href)) as { default?: Scenario; runProxyBench?: Scenario };
    const scenario = module.default ?? module.runProxyBench;
    if (!scenario) throw new Error('bench/proxy.ts exports neither a default function nor runProxyBench');
    return scenario;
  };
}

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '15' },
    duration: { type: 'string', default: '2' },
    only: { type: 'string' },
    out: { type: 'string', default: new URL('./RESULTS.md', import.meta.url).pathname },
  },
});
const runCount = Number(args.runs);
const rounds = Number(args.rounds);
const duration = Number(args.duration);
for (const [name, n] of [['--runs', runCount], ['--rounds', rounds], ['--duration', duration]] as const) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1`);
}
const selected = args.only ? args.only.split(',') : Object.keys(SCENARIOS);
for (const name of selected) if (!SCENARIOS[name]) throw new Error(`unknown scenario "${name}" (known: ${Object.keys(SCENARIOS).join(', ')})`);

const log = (message: string) => process.stderr.write(`${message}\n`);
const root = await mkdtemp(join(os.tmpdir(), 'dashgate-bench-'));
await chmod(root, 0o755); // the cluster runs as its own user when we are root
const started = Date.now();
const loadBefore = os.loadavg();
const cluster = await startEmbeddedPostgres({ dir: join(root, 'pg'), port: 0, database: 'bench' });
/** Each run's rows, in run order. */
const runs: BenchRow[][] = [];
const sections = new Map<string, string>();
const failures: string[] = [];
let postgresVersion = 'unknown';
try {
  const client = new pg.Client(cluster.connection);
  await client.connect();
  postgresVersion = (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  await client.end();
  // Servers and baselines alike reach the cluster as `npm start` reaches its own: over its Unix socket.
  const ctx = createContext({ ...cluster.local, database: 'postgres' }, { duration, rounds, log });
  // Whole runs one after another (not each scenario N times in a row), so that a slow stretch of
  // the machine lands in one run of several scenarios rather than in every run of one.
  for (let run = 1; run <= runCount; run++) {
    const rows: BenchRow[] = [];
    for (const name of selected) {
      log(`== ${name}${runCount > 1 ? ` (run ${run}/${runCount})` : ''}`);
      try {
        const result = await (await SCENARIOS[name]!())(ctx);
        if (typeof result === 'string') sections.set(name, result);
        else if (result) rows.push(...result);
      } catch (error) {
        failures.push(`${name}${runCount > 1 ? ` (run ${run})` : ''}: ${(error as Error).stack ?? error}`);
        log(`scenario ${name} failed: ${(error as Error).stack ?? error}`);
      }
    }
    runs.push(rows);
  }
} finally {
  await cluster.stop();
  await rm(root, { recursive: true, force: true });
}

const results = aggregate(runs);
await writeFile(args.out!, report(results) + soakSection(args.out!));
log(`wrote ${args.out} in ${Math.round((Date.now() - started) / 1000)} s`);
const missed = results.filter((r) => r.pass === false);
for (const r of missed) log(`target missed: ${r.scenario}: ${r.measurement}: ${formatJudged(r)} (target ${formatTarget(r)})`);
// Explicitly: a library in the scenarios resets process.exitCode.
process.exit(failures.length || missed.length ? 1 : 0);

/** The soak's own section of the results (written by test/stress/soak.stress.ts), kept as it was. */
function soakSection(file: string): string {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = current.indexOf('\n## Soak\n');
  if (start < 0) return '';
  const section = current.slice(start + 1);
  const next = section.indexOf('\n## ');
  return `\n${(next < 0 ? section : section.slice(0, next + 1)).trimEnd()}\n`;
}

function version(pkg: string): string {
  try {
    return JSON.parse(readFileSync(new URL(`../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version as string;
  } catch {
    return '?';
  }
}

function commit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function report(results: RowOverRuns[]): string {
  const cpus = os.cpus();
  const own = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const runs = runCount === 1 ? 'one run' : `${runCount} runs`;
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (bench/run.ts) from ${runs}; do not edit by hand. Servers run on loopback in`,
    'processes of their own, autocannon in the runner\'s (10 connections unless noted), each baseline measured',
    'in the same run: every variant warmed up until its cost per request stopped falling, then',
    `${rounds} rounds of ${duration} s interleaved, every other one in reverse order. Within a run, a variant's figure is`,
    'the median of its rounds, and a ratio the median of the per-round ratios (its two variants ran back to',
    'back in each round).',
    '',
    ...(runCount > 1
      ? [
          `**Median of ${runs}.** A run is the whole selection of scenarios from the start, on fresh servers and`,
          'databases (one PostgreSQL cluster for all); the runs follow one another. Every figure and ratio shown is',
          `the median of the ${runCount} runs' own figures, "runs" lists each run's in order, and a target is met when`,
          'that median meets it. The notes (latency, CPU per request) are medians over the runs too; free-text notes',
          'come from the run whose judged figure is nearest the median.',
          '',
        ]
      : []),
    '**Spread.** After each ratio, "rounds" gives the lowest and highest per-round ratio of all runs, and the',
    'interquartile range (IQR, the middle half of those per-round ratios): how far one short measurement may',
    'stray from the median; a target whose bound lies inside the IQR is not settled by a single round.',
    '',
    '**Throughput and server CPU.** "server CPU/request" is the server process\'s own CPU time (all its',
    'threads) divided by the requests it answered. Every comparison of two servers reports two ratios, both',
    'above 1 when the first is better: the throughput ratio, and the server CPU ratio (the baseline\'s CPU per',
    'request over the variant\'s). **Where both servers report their CPU, the CPU ratio decides a ratio',
    'target** (shown in bold): on two cores, autocannon, PostgreSQL and the upstream take CPU from whichever',
    'server is measured, which compresses and blurs throughput ratios, while a server\'s own CPU per request',
    'is its cost. Throughput is reported beside it. Time added per request at one connection stays a latency',
    'measure (with one request in flight, the time per request is the inverse of the rate).',
    '',
    '## Machine',
    '',
    '| | |',
    '|---|---|',
    `| CPU | ${cpus[0]?.model ?? 'unknown'} |`,
    `| cores | ${cpus.length} |`,
    `| memory | ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB |`,
    `| OS | ${os.type()} ${os.release()} ${os.arch()} |`,
    `| Node.js | ${process.versions.node} |`,
    `| PostgreSQL | ${postgresVersion} (embedded, same machine, ${cluster.local.host.startsWith('/') ? 'Unix socket' : 'loopback TCP'}) |`,
    `| load average before / after | ${loadBefore.map((n) => n.toFixed(2)).join(' ')} / ${os.loadavg().map((n) => n.toFixed(2)).join(' ')} |`,
    `| date | ${new Date().toISOString()} |`,
    '',
    '## Versions',
    '',
    `dashgate ${own.version} (${commit()}), @mikro-orm/core ${version('@mikro-orm/core')}, graphql ${version('graphql')}, graphql-yoga ${version('graphql-yoga')}, pg ${version('pg')}, http-proxy-3 ${version('http-proxy-3')}, undici ${version('undici')}, autocannon ${version('autocannon')}.`,
    '',
    '## Results',
    ...renderTables(results, runCount),
  ];
  for (const section of sections.values()) lines.push('', section.trim());
  if (failures.length) lines.push('', '## Scenarios that failed to run', '', ...failures.map((f) => `- ${f.split('\n')[0]}`));
  lines.push('');
  return lines.join('\n');
}
