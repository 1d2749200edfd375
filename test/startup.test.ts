import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ADMIN } from './support/server.ts';

const root = new URL('..', import.meta.url).pathname;
let dir = '';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `src/main.ts` the way `npm start` does and resolves once it logs that it listens. */
function start(config: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--experimental-async-context-frame', 'src/main.ts', '--config', config], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
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
  it('initialises, reuses its data, survives a SIGKILLed run and shuts down cleanly', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashgate-start-'));
    await chmod(dir, 0o755); // reachable by the postgres user the embedded cluster runs as under root
    const port = await freePort();
    const config = join(dir, 'custom.ini');
    await writeFile(config, `[paths]\ndata = ${dir}/data\n[server]\nhttp_addr = 127.0.0.1\nhttp_port = ${port}\n[log]\nlevel = info\n[security]\nsecret_key = startup-test-key-0123456789\n`);

    const first = await start(config);
    const created = await fetch(`http://127.0.0.1:${port}/api/datasources`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'survives-restarts', type: 'loki', access: 'proxy' }),
    });
    expect(created.status).toBe(200);
    // SIGKILL: no cleanup at all; the embedded postmaster is left running with its lock file.
    first.child.kill('SIGKILL');
    await exited(first.child);

    const second = await start(config);
    const list = await fetch(`http://127.0.0.1:${port}/api/datasources`, { headers: { authorization: ADMIN } });
    expect((await list.json()).map((d: { name: string }) => d.name)).toEqual(['survives-restarts']);
    second.child.kill('SIGTERM');
    expect(await exited(second.child)).toBe(0);
  }, 180_000);
});
