// `npm start`: runs the server from dist/ (bin/build.js), building it first when src/ or the
// installed packages changed since the last build. The build runs here, in esbuild's own process
// (stopped once done), so a start after a change does not pay for starting a second Node.
import { enableCompileCache } from 'node:module';
import { build, distIsCurrent } from './build.js';

if (!distIsCurrent()) {
  try {
    await build();
  } catch (error) {
    console.error(`dashgate: building dist/ from src/ failed: ${error.message}`);
    process.exit(1);
  }
}
// Before the server's first module, so that V8's compiled code is kept for all of them (main.js
// turns it on too, but only once the modules it imports statically are loaded).
enableCompileCache();
await import('../dist/main.js');
