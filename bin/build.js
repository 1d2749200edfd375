// Compiles src/ into dist/, which `npm start` runs: the server then loads plain JavaScript, and
// Node never starts its TypeScript stripper, which stays in memory once started (about 25 MiB of
// an idle server's RSS, with the sources it keeps). `npm install` runs it (the `prepare` script);
// `npm start` runs it again when src/ changed since.
//
// Types are replaced by blanks (Node's own stripper, whose output keeps every line and column),
// and relative `.ts` module specifiers become `.js` (the same length), so a stack trace through
// dist/ points at the same line and column of the same file under src/.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
/** A sibling of src/, so that paths the code builds from its own URL (`../../conf/...`) still resolve. */
export const DIST = join(ROOT, 'dist');
const STAMP = '.sources';

/** Every source file under src/, relative, sorted. */
function sources() {
  return readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)))
    .sort();
}

/** What dist/ was built from: this build, and every source's path, size and modification time. */
function fingerprint() {
  const hash = createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url)));
  for (const file of sources()) {
    const { size, mtimeMs } = statSync(join(SRC, file));
    hash.update(`${file}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Whether dist/ was built from the sources as they are now. */
export function distIsCurrent() {
  try {
    return readFileSync(join(DIST, STAMP), 'utf8') === fingerprint();
  } catch {
    return false;
  }
}

// A relative specifier ending in .ts, in `from '…'`, `import '…'` and `import('…')` (any quotes).
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(['"`])(\.\.?\/[^'"`\n]*)\.ts\2/g;

/** One module: types blanked, relative `.ts` specifiers made `.js`. */
export async function compile(source, file) {
  const code = stripTypeScriptTypes(source, { mode: 'strip', sourceUrl: file });
  const rewritten = code.replace(SPECIFIER, (_match, lead, quote, path) => `${lead}${quote}${path}.js${quote}`);
  // Anything left would load TypeScript again at run time (or fail to load).
  const left = /(\bfrom\s*|\bimport\s*\(?\s*)(['"`])[^'"`\n]*\.ts\2/.exec(rewritten);
  if (left) throw new Error(`${file}: a module specifier the build cannot rewrite: ${left[0]}`);
  return rewritten;
}

/**
 * Builds into a fresh folder, then puts it in place of dist/, so that dist/ is never half written;
 * builders racing each other each put a whole build in place.
 */
export async function build() {
  const stamp = fingerprint();
  const temporary = `${DIST}.building-${process.pid}`;
  rmSync(temporary, { recursive: true, force: true });
  for (const file of sources()) {
    const out = join(temporary, file.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, await compile(readFileSync(join(SRC, file), 'utf8'), join(SRC, file)));
  }
  writeFileSync(join(temporary, STAMP), stamp);
  const previous = `${DIST}.previous-${process.pid}`;
  try {
    renameSync(DIST, previous);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  renameSync(temporary, DIST);
  rmSync(previous, { recursive: true, force: true });
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  // Node warns that its stripper is experimental; the build checks its output itself.
  process.removeAllListeners('warning');
  build().catch((error) => {
    console.error(`dashgate: building dist/ from src/ failed: ${error.message}`);
    process.exit(1);
  });
}
