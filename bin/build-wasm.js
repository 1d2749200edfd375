// Assembles the WebAssembly text modules under src/ (`*.wat`) into `<name>.wasm.ts` beside each:
// the module's bytes as base64, so that the bundle carries them and no file is looked up at run
// time. `npm run wasm` writes them; a test checks that each committed one is what its text makes.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');

/** Every `.wat` file under src/, as its path. */
export function watFiles() {
  return readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.wat'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** The TypeScript module that carries the assembled bytes of the text module at `wat`. */
export async function wasmModuleSource(wat) {
  const { default: init } = await import('wabt');
  const wabt = await init();
  const parsed = wabt.parseWat(relative(ROOT, wat), readFileSync(wat, 'utf8'), { simd: true });
  try {
    parsed.validate();
    const { buffer } = parsed.toBinary({});
    const base64 = Buffer.from(buffer).toString('base64');
    const lines = base64.match(/.{1,100}/g).map((line) => `  '${line}'`).join(',\n');
    return `// Assembled from ${relative(SRC, wat).split('\\').join('/').replace(/^.*\//, '')} by bin/build-wasm.js (npm run wasm): do not edit.\n`
      + `export const WASM_BASE64 = [\n${lines},\n].join('');\n`;
  } finally {
    parsed.destroy();
  }
}

export const wasmModulePath = (wat) => wat.replace(/\.wat$/, '.wasm.ts');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const wat of watFiles()) {
    writeFileSync(wasmModulePath(wat), await wasmModuleSource(wat));
    console.log(`wrote ${relative(ROOT, wasmModulePath(wat))}`);
  }
}
