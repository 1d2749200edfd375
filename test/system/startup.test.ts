import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ADMIN } from '../support/server.ts';

const root = new URL('../..', import.meta.url).pathname;
let dir = '';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts the server the way `npm start` does (dist/, through bin/start.js) and resolves once it logs that it listens. */
function start(config: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--experimental-async-context-frame', 'bin/start.js', '--config', config], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('dashgate listening')) {
        clearTimeout(timer);
        resolve({ child, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output}`));
    });
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm start on the embedded database', () => {
  it('initialises with a key of its own, reuses its data and key, survives a SIGKILLed run and shuts down cleanly', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashgate-start-'));
    await chmod(dir, 0o755); // reachable by the postgres user the embedded cluster runs as under root
    const port = await freePort();
    const config = join(dir, 'custom.ini');
    // No [security] secret_key and app_mode production, both the defaults: what `npm start` has.
    await writeFile(config, `[paths]\ndata = ${dir}/data\n[server]\nhttp_addr = 127.0.0.1\nhttp_port = ${port}\n[log]\nlevel = info\n`);
    const seen: IncomingHttpHeaders[] = [];
    const upstream = createHttpServer((req, res) => {
      seen.push(req.headers);
      res.end('{}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;

    const first = await start(config);
    expect(first.output()).not.toContain('public default');
    const keyFile = join(dir, 'data', 'secret_key');
    const key = (await readFile(keyFile, 'utf8')).trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const created = await fetch(`http://127.0.0.1:${port}/api/datasources`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'survives-restarts', type: 'loki', access: 'proxy', url: upstreamUrl, basicAuth: true, basicAuthUser: 'u', secureJsonData: { basicAuthPassword: 'kept-secret' } }),
    });
    expect(created.status).toBe(200);
    const id = (await created.json()).id;
    // SIGKILL: no cleanup at all; the embedded postmaster is left running with its lock file.
    first.child.kill('SIGKILL');
    await exited(first.child);

    const second = await start(config);
    const list = await fetch(`http://127.0.0.1:${port}/api/datasources`, { headers: { authorization: ADMIN } });
    expect((await list.json()).map((d: { name: string }) => d.name)).toEqual(['survives-restarts']);
    // The same key again: the secret sealed before the restart still opens.
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(key);
    const proxied = await fetch(`http://127.0.0.1:${port}/api/datasources/proxy/${id}/ready`, { headers: { authorization: ADMIN } });
    expect(proxied.status).toBe(200);
    expect(seen.at(-1)?.authorization).toBe(`Basic ${Buffer.from('u:kept-secret').toString('base64')}`);
    upstream.close();
    second.child.kill('SIGTERM');
    expect(await exited(second.child)).toBe(0);
  }, 180_000);
});
