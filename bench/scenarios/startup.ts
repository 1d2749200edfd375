import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, median, processStatusBytes, seed, startScript } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow, Target } from '../lib/types.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const DIST = join(ROOT, 'dist');
const STARTS = 3;
/** Issue targets: start-up on a fresh and on an existing data folder, and the idle server's RSS. */
const TARGET_FRESH_MS = 2000;
const TARGET_WARM_MS = 1000;
const TARGET_IDLE_RSS = 160 * 1024 * 1024;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS of one process (the server itself, not its PostgreSQL children). */
const rssOf = (pid: number) => processStatusBytes(pid, 'VmRSS');

/**
 * The server as `npm start` runs it (its environment and Node flags), with `--config <file>`;
 * resolves when it logs that it listens. `compileCache`: where Node keeps the code it compiled,
 * empty for a first start on a machine, as the previous start left it for the next.
 */
function start(config: string, compileCache: string): Promise<{ child: ChildProcess; millis: number }> {
  const begun = performance.now();
  const npmStart = startScript();
  const env = { ...process.env, ...npmStart.env, NODE_COMPILE_CACHE: compileCache };
  const child = spawn(process.execPath, [...npmStart.nodeFlags, npmStart.script, '--config', config], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 120 s:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('dashgate listening')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve({ child, millis: performance.now() - begun });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output}`));
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

/**
 * `npm start` on the embedded database: time to "dashgate listening" on a fresh data folder
 * (its cluster copied from the template, migrations, bootstrap, and src/ bundled into dist/) and on an existing one, the
 * middle of three starts each; the server's RSS idle and under load.
 */
export default async function startup(ctx: BenchContext): Promise<BenchRow[]> {
  const fresh: number[] = [];
  const existing: number[] = [];
  let idleRss = 0;
  let loadedRss = 0;
  let loadRps = 0;
  for (let run = 0; run < STARTS; run++) {
    const dir = await mkdtemp(join(tmpdir(), 'dashgate-bench-start-'));
    await chmod(dir, 0o755); // reachable by the postgres user the embedded cluster runs as under root
    try {
      const port = await freePort();
      const config = join(dir, 'custom.ini');
      await writeFile(config, `[paths]\ndata = ${dir}/data\n[server]\nhttp_addr = 127.0.0.1\nhttp_port = ${port}\n[log]\nlevel = info\n[security]\nsecret_key = bench-startup-key-0123456789abcdef0123456789\n`);
      // A fresh start is a first start: nothing cached yet by Node, and src/ bundled into dist/ again
      // by the start itself (as after a change to src/); its cluster is copied from the template
      // `npm install` made, as on any machine `npm install` ran on.
      const compileCache = join(dir, 'compile-cache');
      await rm(join(DIST, '.sources'), { force: true });
      const first = await start(config, compileCache);
      fresh.push(first.millis);
      await stop(first.child);
      const second = await start(config, compileCache);
      existing.push(second.millis);
      ctx.log(`startup ${run + 1}/${STARTS}: fresh ${Math.round(first.millis)} ms, existing ${Math.round(second.millis)} ms`);
      if (run === STARTS - 1) {
        // Memory of the last server: idle after start, then at its peak under read load.
        const target = { url: `http://127.0.0.1:${port}`, pid: second.child.pid! } as Target;
        const { token, dataSourceId } = await seed(target);
        await new Promise((resolve) => setTimeout(resolve, 2000));
        idleRss = rssOf(second.child.pid!);
        let peak = 0;
        const sampler = setInterval(() => (peak = Math.max(peak, rssOf(second.child.pid!))), 100);
        const results = [];
        for (let i = 0; i < ctx.rounds; i++) results.push(await load(target, { path: `/api/datasources/${dataSourceId}`, headers: { authorization: token }, connections: 50 }, ctx.duration));
        clearInterval(sampler);
        loadedRss = peak;
        loadRps = median(results).requestsPerSecond;
      }
      await stop(second.child);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const scenario = 'Start-up and memory (as `npm start` runs the server, embedded PostgreSQL)';
  return [
    { scenario, measurement: 'fresh data folder to "dashgate listening"', value: middle(fresh), unit: 'ms', target: { on: 'value', op: '<=', bound: TARGET_FRESH_MS, label: '<= 2 s' }, notes: `the cluster copied from npm install's template, migrations, bootstrap and bundling src/ into dist/ included, Node's compile cache empty; middle of ${STARTS} starts: ${fresh.map((n) => Math.round(n)).join(', ')} ms` },
    { scenario, measurement: 'existing data folder to "dashgate listening"', value: middle(existing), unit: 'ms', target: { on: 'value', op: '<=', bound: TARGET_WARM_MS, label: '<= 1 s' }, notes: `the second start: Node's compile cache as the first left it; middle of ${STARTS} starts: ${existing.map((n) => Math.round(n)).join(', ')} ms` },
    { scenario, measurement: 'RSS idle (server process)', value: idleRss, unit: 'MiB', target: { on: 'value', op: '<=', bound: TARGET_IDLE_RSS }, notes: 'after start-up and one token and data source created' },
    { scenario, measurement: 'RSS under load (peak)', value: loadedRss, unit: 'MiB', notes: `GET /api/datasources/:id with a token, 50 connections, ${fmt.rps(loadRps)}` },
  ];
}
