import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ADMIN } from '../support/server.ts';
import { DATA_SOURCE_CHANGED, subscribe } from '../support/sse.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const root = new URL('../..', import.meta.url).pathname;
let dir = '';
let upstream: Upstream | null = null;
let child: ChildProcess | null = null;

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await upstream?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (check()) resolve();
      else if (Date.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(poll, 20);
    };
    poll();
  });
}

/** Whether a TCP connection to the port is refused (rather than accepted). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('graceful shutdown on SIGTERM', () => {
  it('refuses new connections, ends subscriptions with a final event, drains in-flight requests (proxied and database-bound), cuts the rest at the timeout, stops PostgreSQL and exits 0', async () => {
    // The upstream answers /slow when released and never answers /hang.
    let releaseSlow: () => void = () => {};
    const slowReleased = new Promise<void>((resolve) => (releaseSlow = resolve));
    upstream = await startUpstream((req, res) => {
      if (req.url?.startsWith('/slow')) {
        void slowReleased.then(() => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('slow upstream answered');
        });
      }
    });

    dir = await mkdtemp(join(tmpdir(), 'dashgate-shutdown-'));
    await chmod(dir, 0o755); // reachable by the postgres user the embedded cluster runs as under root
    const port = await freePort();
    await mkdir(join(dir, 'provisioning', 'datasources'), { recursive: true });
    await writeFile(join(dir, 'provisioning', 'datasources', 'upstream.yaml'),
      `apiVersion: 1\ndatasources:\n  - { name: upstream, uid: upstream, type: loki, url: "${upstream.url}" }\n`);
    const config = join(dir, 'custom.ini');
    await writeFile(config, `[paths]\ndata = ${dir}/data\nprovisioning = ${dir}/provisioning\n[server]\nhttp_addr = 127.0.0.1\nhttp_port = ${port}\nshutdown_timeout_seconds = 4\n[log]\nlevel = info\n[security]\nsecret_key = shutdown-test-key-0123456789abcdef\n`);

    const server = spawn(process.execPath, ['--experimental-async-context-frame', 'src/main.ts', '--config', config], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    child = server;
    let output = '';
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    await until(() => output.includes('dashgate listening') || server.exitCode !== null, 'start-up', 90_000);
    expect(output).toContain('dashgate listening');
    const postmasterPid = Number((await readFile(join(dir, 'data', 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    expect(isAlive(postmasterPid)).toBe(true);

    const base = `http://127.0.0.1:${port}`;
    // In flight at the signal: a proxied call waiting on its upstream, one that never ends, and a
    // REST upload whose body is still arriving (it needs the database after the signal).
    const slow = fetch(`${base}/api/datasources/proxy/uid/upstream/slow`, { headers: { authorization: ADMIN } });
    const hang = fetch(`${base}/api/datasources/proxy/uid/upstream/hang`, { headers: { authorization: ADMIN } }).then(
      (res) => res.text().then(() => 'completed'),
      () => 'cut',
    );
    const body = JSON.stringify({ name: 'added-while-stopping', type: 'loki', access: 'proxy' });
    const upload = request(`${base}/api/datasources`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const uploaded = new Promise<{ status: number; text: string }>((resolve, reject) => {
      upload.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      upload.on('error', reject);
    });
    upload.write(body.slice(0, 10));
    await until(() => upstream!.requests.length === 2, 'both proxied calls to reach the upstream');
    // A subscription never finishes by itself: shutdown ends it with a final event, well within the timeout.
    const subscription = await subscribe({ url: base }, DATA_SOURCE_CHANGED);
    expect(subscription.status).toBe(200);

    const signalledAt = Date.now();
    server.kill('SIGTERM');
    await until(() => output.includes('shutting down'), 'the shutdown to begin');
    expect(await refused(port)).toBe(true);
    const last = await subscription.waitFor((event) => event.data?.errors !== undefined, 3000);
    expect(last.data.errors[0]).toMatchObject({ message: 'Server shutting down; subscribe again', extensions: { code: 'UNAVAILABLE' } });
    await subscription.ended;
    expect(subscription.events.at(-1)!.event).toBe('complete');
    expect(Date.now() - signalledAt).toBeLessThan(3000);

    upload.end(body.slice(10));
    const added = await uploaded;
    expect(added.status).toBe(200);
    expect(JSON.parse(added.text)).toMatchObject({ message: 'Datasource added', name: 'added-while-stopping' });

    releaseSlow();
    const slowResponse = await slow;
    expect(slowResponse.status).toBe(200);
    expect(await slowResponse.text()).toBe('slow upstream answered');

    // The call that never ends is cut once shutdown_timeout_seconds have passed, then the process exits 0.
    expect(await hang).toBe('cut');
    expect(await exited).toBe(0);
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(4_000);
    expect(output).toContain('drain timed out');
    expect(output).toContain('"msg":"stopped"');
    expect(isAlive(postmasterPid)).toBe(false);
    await expect(readFile(join(dir, 'data', 'postgres', 'postmaster.pid'))).rejects.toThrow(/ENOENT/);
  }, 180_000);
});
