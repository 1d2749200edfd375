import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { DIST, distIsCurrent, install, UNBUNDLED, vendorFile } from '../../bin/build.js';

// `npm start` runs dist/: src/ bundled into dist/main.js and its chunks, importing the packages
// through dist/vendor/, where they are bundled once (bin/build.js).

/** Every module specifier a file of dist/ imports, statically or dynamically. */
function specifiers(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  return [...code.matchAll(/(?:^|[\s;])(?:import|export)\s*(?:[\w*${},\s]+from\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm)].map((m) => (m[1] ?? m[2])!);
}

const own = () => readdirSync(DIST).filter((name) => name.endsWith('.js')).map((name) => join(DIST, name));

/** What a Node process gets from importing each of `modules` (paths or package names): its export names. */
function exportsOf(modules: string[]): Record<string, string[]> {
  const script = `const out = {}; for (const m of ${JSON.stringify(modules)}) out[m] = Object.keys(await import(m)).sort(); console.log(JSON.stringify(out));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: join(DIST, '..'), encoding: 'utf8' });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as Record<string, string[]>;
}

describe('the build of dist/', () => {
  it('is current, with the server at dist/main.js', () => {
    expect(distIsCurrent()).toBe(true);
    expect(existsSync(join(DIST, 'main.js'))).toBe(true);
  });

  it('imports packages only through dist/vendor/, except those loaded as installed', () => {
    const seen = new Set<string>();
    for (const file of own()) {
      for (const specifier of specifiers(file)) {
        if (specifier.startsWith('node:')) continue;
        seen.add(specifier);
        if (specifier.startsWith('./')) expect({ file, specifier, exists: existsSync(join(DIST, specifier)) }).toEqual({ file, specifier, exists: true });
        else expect({ file, specifier, unbundled: UNBUNDLED.some((name) => (name.endsWith('/') ? specifier.startsWith(name) : specifier === name || specifier.startsWith(`${name}/`))) }).toEqual({ file, specifier, unbundled: true });
      }
    }
    // No TypeScript left to load at run time.
    expect([...seen].filter((s) => s.endsWith('.ts'))).toEqual([]);
    expect([...seen].filter((s) => s.startsWith('./vendor/')).length).toBeGreaterThan(10);
  });

  it("gives each package's vendor module the exports Node's own import of it has", () => {
    const packages = ['pg', 'pino', 'yaml', 'graphql', '@mikro-orm/postgresql', 'graphql-yoga', 'prom-client', 'dataloader'];
    const bundled = exportsOf(packages.map((name) => join(DIST, 'vendor', vendorFile(name))));
    const installed = exportsOf(packages);
    for (const name of packages) {
      // graphql is bundled as ES modules, whose namespace has no CommonJS `default` or `__esModule`.
      const expected = installed[name]!.filter((key) => key !== '__esModule' && (name !== 'graphql' || key !== 'default'));
      expect({ name, exports: bundled[join(DIST, 'vendor', vendorFile(name))] }).toEqual({ name, exports: expected });
    }
  });

  it('holds one graphql, so every package sees the same schema classes', () => {
    // (GraphiQL's page carries a browser bundle of its own as a string, never run here.)
    const files = readdirSync(join(DIST, 'vendor'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.js') && e.name !== vendorFile('@graphql-yoga/render-graphiql'));
    const definitions = files.flatMap((e) => [...readFileSync(join(e.parentPath, e.name), 'utf8').matchAll(/\bGraphQLSchema = class\b|\bclass GraphQLSchema\b/g)]);
    expect(definitions).toHaveLength(1);
  });

  it('leaves out fast-json-stringify and ajv, which graphql-jit loads only for an option dashgate never sets', () => {
    const files = readdirSync(join(DIST, 'vendor'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.js'));
    const bundled = files.flatMap((e) => [...readFileSync(join(e.parentPath, e.name), 'utf8').matchAll(/^\s*\/\/ (?:\.\.\/)*node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]!));
    expect(bundled).toContain('graphql-jit');
    expect(bundled.filter((name) => name === 'ajv' || name === 'fast-json-stringify')).toEqual([]);
  });

  it("keeps the previous build's files when a new one is put in place, so a server started from it still loads its chunks", () => {
    const root = mkdtempSync(join(tmpdir(), 'dashgate-install-'));
    try {
      const dist = join(root, 'dist');
      const make = (generation: number, files: string[]) => {
        const built = join(root, `built-${generation}`);
        for (const file of files) {
          mkdirSync(join(built, file, '..'), { recursive: true });
          writeFileSync(join(built, file), `generation ${generation}`);
        }
        install(built, dist);
      };
      const list = () => readdirSync(dist, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dist.length + 1)).sort();
      make(1, ['main.js', 'chunk-A.js', 'vendor/chunks/chunk-V1.js', '.sources']);
      make(2, ['main.js', 'chunk-B.js', 'vendor/chunks/chunk-V2.js', '.sources']);
      expect(list()).toEqual(['.files.json', '.sources', 'chunk-A.js', 'chunk-B.js', 'main.js', 'vendor/chunks/chunk-V1.js', 'vendor/chunks/chunk-V2.js']);
      expect(readFileSync(join(dist, 'main.js'), 'utf8')).toBe('generation 2');
      make(3, ['main.js', 'chunk-C.js', 'vendor/chunks/chunk-V2.js', '.sources']);
      // The first build's own files go; the second's stay beside the third's.
      expect(list()).toEqual(['.files.json', '.sources', 'chunk-B.js', 'chunk-C.js', 'main.js', 'vendor/chunks/chunk-V2.js']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
