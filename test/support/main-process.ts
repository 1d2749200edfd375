import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';

const root = new URL('../..', import.meta.url).pathname;

/** The server in a process of its own, as `npm start` runs it (bin/start.js, which runs dist/). */
export interface MainProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines (stdout). */
  logs(): Array<Record<string, unknown>>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/** `openFiles`: the process's open-file limit (`ulimit -n`), set by the shell that then becomes it. */
export function spawnMain(options: { config?: string; env?: Record<string, string>; openFiles?: number } = {}): MainProcess {
  const args = ['--experimental-async-context-frame', 'bin/start.js', ...(options.config ? ['--config', options.config] : [])];
  const spawnOptions = { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } };
  const child = options.openFiles === undefined
    ? spawn(process.execPath, args, spawnOptions)
    : spawn('/bin/sh', ['-c', `ulimit -n ${options.openFiles} && exec "$0" "$@"`, process.execPath, ...args], spawnOptions);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    logs: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    exited,
  };
}

/** Resolves once the server logs that it listens; rejects if it exits first or takes over `ms`. */
export async function listening(main: MainProcess, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  let exited = false;
  void main.exited.then(() => (exited = true));
  while (!main.stdout().includes('dashgate listening')) {
    if (exited) throw new Error(`exited with ${main.child.exitCode} before listening:\n${main.stdout()}\n${main.stderr()}`);
    if (Date.now() > deadline) throw new Error(`not listening after ${ms} ms:\n${main.stdout()}\n${main.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Ends the process with SIGTERM (SIGKILL if it lingers) and returns its exit code. */
export async function stopMain(main: MainProcess, ms = 60_000): Promise<number | null> {
  if (main.child.exitCode !== null || main.child.signalCode !== null) return main.child.exitCode;
  main.child.kill('SIGTERM');
  const timer = setTimeout(() => main.child.kill('SIGKILL'), ms);
  try {
    return await main.exited;
  } finally {
    clearTimeout(timer);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A listening socket on 127.0.0.1:`port`, retried while the port is still taken (up to `ms`). */
export async function occupy(port: number, ms = 5_000): Promise<Server> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await new Promise<Server>((resolve, reject) => {
        const server = createServer((socket) => socket.destroy());
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve(server));
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

/** The process id of the postmaster running the cluster in `dir` (first line of its postmaster.pid). */
export async function postmasterPid(dir: string): Promise<number> {
  return Number.parseInt((await readFile(`${dir}/postmaster.pid`, 'utf8')).split('\n')[0]!, 10);
}
