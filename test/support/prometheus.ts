import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real Prometheus (Debian's `prometheus` package) on a free loopback port with a temporary
 * data folder, scraping itself every second, behind a small recorder: every answer it gives is
 * kept by request (method, path, query, body). `DASHGATE_RECORD=1` writes them to
 * `test/fixtures/prometheus-answers.json`. Without the binary, the recorder replays that file
 * instead (and says so once), so the tests still run on a machine without the package.
 * Tests ask only for fixed absolute times, so their requests are the same on every run.
 */
export interface PrometheusUnderTest {
  /** The recorder's URL: what a data source points at. */
  url: string;
  /** True when answers come from the recording, not a live Prometheus. */
  replaying: boolean;
  /** `METHOD /path` of every request that reached it, in order. */
  seen: string[];
  /** Names of the TSDB snapshots it holds (its admin API makes them); [] when replaying. */
  snapshots(): string[];
  close(): Promise<void>;
}

const BINARY = process.env.DASHGATE_PROMETHEUS_BIN ?? '/usr/bin/prometheus';
const FIXTURE = new URL('../fixtures/prometheus-answers.json', import.meta.url).pathname;

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function waitReady(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/-/ready' }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('prometheus did not become ready');
}

const keyOf = (method: string, url: string, body: string) => {
  const [path, query = ''] = url.split('?');
  const sorted = (text: string) => [...new URLSearchParams(text)].map(([k, v]) => `${k}=${v}`).sort().join('&');
  return `${method} ${path}?${sorted(query)} ${sorted(body)}`;
};

let announced = false;

export async function startPrometheus(options: { adminApi?: boolean } = {}): Promise<PrometheusUnderTest> {
  const live = existsSync(BINARY) && process.env.DASHGATE_PROMETHEUS_REPLAY !== '1';
  const recorded: Record<string, Answer> = live ? {} : (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, Answer>);
  if (!live && !announced) {
    announced = true;
    console.log(`${existsSync(BINARY) ? 'DASHGATE_PROMETHEUS_REPLAY=1' : `${BINARY} is not installed`}: the Prometheus tests run against answers recorded from a real Prometheus (test/fixtures/prometheus-answers.json)`);
  }
  let child: ChildProcess | null = null;
  let dir: string | null = null;
  let promPort = 0;
  if (live) {
    dir = mkdtempSync(join(tmpdir(), 'dashgate-prom-'));
    promPort = await freePort();
    writeFileSync(join(dir, 'prometheus.yml'), [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      `scrape_configs: [{ job_name: prometheus, static_configs: [{ targets: ['127.0.0.1:${promPort}'] }] }]`, '',
    ].join('\n'));
    child = spawn(BINARY, [
      `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`, '--log.level=error', ...(options.adminApi ? ['--web.enable-admin-api'] : []),
    ], { stdio: 'ignore' });
    await waitReady(promPort, child);
  }

  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${(req.url ?? '/').split('?')[0]}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const key = keyOf(req.method ?? 'GET', req.url ?? '/', body);
      if (!live) {
        const answer = recorded[key];
        if (!answer) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          return res.end(`not recorded: ${key}`);
        }
        res.writeHead(answer.status, { 'content-type': answer.contentType });
        return res.end(answer.body);
      }
      const headers = { ...req.headers, host: `127.0.0.1:${promPort}` };
      const out = request({ host: '127.0.0.1', port: promPort, method: req.method, path: req.url, headers }, (up) => {
        const parts: Buffer[] = [];
        up.on('data', (c: Buffer) => parts.push(c));
        up.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          const contentType = String(up.headers['content-type'] ?? 'application/json');
          recorded[key] = { status: up.statusCode ?? 500, contentType, body: text };
          res.writeHead(up.statusCode ?? 500, { 'content-type': contentType });
          res.end(text);
        });
      });
      out.on('error', (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    replaying: !live,
    seen,
    snapshots: () => (dir && existsSync(join(dir, 'data', 'snapshots')) ? readdirSync(join(dir, 'data', 'snapshots')) : []),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (child) {
        const exited = new Promise((resolve) => child!.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (live && process.env.DASHGATE_RECORD === '1') {
        const previous = existsSync(FIXTURE) ? (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, Answer>) : {};
        const merged = { ...previous, ...recorded };
        writeFileSync(FIXTURE, `${JSON.stringify(Object.fromEntries(Object.keys(merged).sort().map((k) => [k, merged[k]])), null, 1)}\n`);
      }
    },
  };
}
