// `npm start`: runs the server from dist/ (src/ compiled by bin/build.js), compiling it first in a
// process of its own when src/ changed since the last build, so that this process never loads
// TypeScript tooling.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { distIsCurrent } from './build.js';

if (!distIsCurrent()) {
  const built = spawnSync(process.execPath, [fileURLToPath(new URL('./build.js', import.meta.url))], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
await import('../dist/main.js');
