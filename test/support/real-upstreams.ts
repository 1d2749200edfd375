import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Shared by the helpers that run Debian's InfluxDB and Graphite for a test file: is the binary
 * there (else the test says so once and skips its real-upstream cases), wait until it answers,
 * stop it.
 */
export function missing(binaries: readonly string[], what: string): boolean {
  // DASHGATE_TEST_NO_UPSTREAMS=1 runs the suite as a machine without the packages would.
  const absent = process.env.DASHGATE_TEST_NO_UPSTREAMS === '1' ? [...binaries] : binaries.filter((b) => !existsSync(b));
  if (absent.length === 0) return false;
  const why = process.env.DASHGATE_TEST_NO_UPSTREAMS === '1' ? 'DASHGATE_TEST_NO_UPSTREAMS=1' : `${absent.join(', ')} not installed (.ci/run installs it)`;
  console.log(`${what}: ${why}, skipping the cases against a real ${what}`);
  return true;
}

export async function until(probe: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => output };
}

export async function stop(child: ChildProcess, ms = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await exited;
  clearTimeout(timer);
}
