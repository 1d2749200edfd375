import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';

const run = promisify(execFile);
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's Chromium (no browser downloads of Playwright's own). `.ci/run` installs it before the
 * suite; this covers a plain `npm test` on a machine without it.
 */
export async function ensureChromium(): Promise<void> {
  if (existsSync(CHROMIUM)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-qq'], { env, timeout: 300_000, maxBuffer: 64 << 20 });
  await run('apt-get', ['install', '-y', '-qq', 'chromium'], { env, timeout: 600_000, maxBuffer: 64 << 20 });
}

export async function launchChromium(): Promise<Browser> {
  await ensureChromium();
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
