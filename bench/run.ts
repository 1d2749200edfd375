/**
 * `npm run bench`: starts a PostgreSQL cluster of its own, runs every scenario against real servers
 * on loopback (autocannon in this process, each server in its own), and writes bench/RESULTS.md.
 *
 *   npm run bench -- [--rounds 15] [--duration 2] [--only reads,admin] [--out bench/RESULTS.md]
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
import type { BenchContext, BenchRow } from './lib/types.ts';

/** Rows for the tables; a scenario may instead hand back ready Markdown (a section of its own). */
type Scenario = (ctx: BenchContext) => Promise<BenchRow[] | string | void>;

const SCENARIOS: Record<string, () => Promise<Scenario>> = {
  reads: async () => (await import('./scenarios/reads.ts')).default,
  admin: async () => (await import('./scenarios/admin-basic.ts')).default,
  list: async () => (await import('./scenarios/list-scaling.ts')).default,
  startup: async () => (await import('./scenarios/startup.ts')).default,
  subscriptions: async () => (await import('./scenarios/subscriptions.ts')).default,
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
    rounds: { type: 'string', default: '15' },
    duration: { type: 'string', default: '2' },
    only: { type: 'string' },
    out: { type: 'string', default: new URL('./RESULTS.md', import.meta.url).pathname },
  },
});
const rounds = Number(args.rounds);
const duration = Number(args.duration);
const selected = args.only ? args.only.split(',') : Object.keys(SCENARIOS);
for (const name of selected) if (!SCENARIOS[name]) throw new Error(`unknown scenario "${name}" (known: ${Object.keys(SCENARIOS).join(', ')})`);

const log = (message: string) => process.stderr.write(`${message}\n`);
const root = await mkdtemp(join(os.tmpdir(), 'dashgate-bench-'));
await chmod(root, 0o755); // the cluster runs as its own user when we are root
const started = Date.now();
const loadBefore = os.loadavg();
const cluster = await startEmbeddedPostgres({ dir: join(root, 'pg'), port: 0, database: 'bench' });
const rows: BenchRow[] = [];
const sections: string[] = [];
const failures: string[] = [];
let postgresVersion = 'unknown';
try {
  const client = new pg.Client(cluster.connection);
  await client.connect();
  postgresVersion = (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  await client.end();
  const ctx = createContext({ ...cluster.connection, database: 'postgres' }, { duration, rounds, log });
  for (const name of selected) {
    log(`== ${name}`);
    try {
      const result = await (await SCENARIOS[name]!())(ctx);
      if (typeof result === 'string') sections.push(result);
      else if (result) rows.push(...result);
    } catch (error) {
      failures.push(`${name}: ${(error as Error).stack ?? error}`);
      log(`scenario ${name} failed: ${(error as Error).stack ?? error}`);
    }
  }
} finally {
  await cluster.stop();
  await rm(root, { recursive: true, force: true });
}

await writeFile(args.out!, report(rows) + soakSection(args.out!));
log(`wrote ${args.out} in ${Math.round((Date.now() - started) / 1000)} s`);
const missed = rows.filter((r) => r.pass === false);
for (const r of missed) log(`target missed: ${r.scenario}: ${r.measurement}: ${r.ratio ?? r.value} (target ${r.target})`);
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

function report(results: BenchRow[]): string {
  const cpus = os.cpus();
  const own = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const lines = [
    '# Benchmark results',
    '',
    'Written by `npm run bench` (bench/run.ts); do not edit by hand. Each figure is the median of',
    `${rounds} rounds of ${duration} s (10 connections unless noted), measured against servers on loopback`,
    'in their own processes, with each baseline measured in the same run: every variant warmed up until its',
    'cost per request stopped falling, then rounds interleaved, every other one in reverse order. A ratio',
    'is the median of the per-round ratios (its two variants ran back to back in each round). "server CPU/request"',
    'is the server process\'s own CPU time (all its threads) divided by the requests it answered.',
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
    `| PostgreSQL | ${postgresVersion} (embedded, same machine) |`,
    `| load average before / after | ${loadBefore.map((n) => n.toFixed(2)).join(' ')} / ${os.loadavg().map((n) => n.toFixed(2)).join(' ')} |`,
    `| date | ${new Date().toISOString()} |`,
    '',
    '## Versions',
    '',
    `dashgate ${own.version} (${commit()}), @mikro-orm/core ${version('@mikro-orm/core')}, graphql ${version('graphql')}, graphql-yoga ${version('graphql-yoga')}, pg ${version('pg')}, autocannon ${version('autocannon')}.`,
    '',
    '## Results',
  ];
  for (const scenario of [...new Set(results.map((r) => r.scenario))]) {
    lines.push('', `### ${scenario}`, '', '| measurement | median | ratio | target | result | notes |', '|---|---|---|---|---|---|');
    for (const r of results.filter((x) => x.scenario === scenario)) {
      const verdict = r.pass === undefined ? '' : r.pass ? 'PASS' : '**FAIL**';
      lines.push(`| ${r.measurement} | ${r.value} | ${r.ratio ?? ''} | ${r.target ?? ''} | ${verdict} | ${r.notes ?? ''} |`);
    }
  }
  for (const section of sections) lines.push('', section.trim());
  if (failures.length) lines.push('', '## Scenarios that failed to run', '', ...failures.map((f) => `- ${f.split('\n')[0]}`));
  lines.push('');
  return lines.join('\n');
}
