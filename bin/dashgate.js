#!/usr/bin/env node
// Launcher of the dashgate CLI (`npx dashgate ...`): runs src/cli/main.ts on the project's pinned
// Node (22.17+, which runs TypeScript natively), whichever `node` started this script.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const pinned = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
const node = existsSync(pinned) ? pinned : process.execPath;
const cli = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

const child = spawn(node, ['--experimental-async-context-frame', cli, ...process.argv.slice(2)], { stdio: 'inherit' });
const forward = (signal) => child.kill(signal);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
child.on('error', (error) => {
  console.error(`dashgate: cannot start ${node}: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal, so callers see what happened to the CLI.
    for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(name, forward);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
