import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { compile, DIST, distIsCurrent } from '../../bin/build.js';

// `npm start` runs dist/, src/ compiled by bin/build.js: types blanked, relative `.ts` specifiers
// made `.js`, every line and column where it was.

describe('the build of dist/', () => {
  it('blanks types in place and rewrites relative .ts specifiers only', async () => {
    const source = [
      "import type { A } from './a.ts';",
      "import { b, type C } from '../b/c.ts';",
      "export { d } from './d.ts';",
      "export * from \"./e.ts\";",
      "import './side-effect.ts';",
      "interface Shape { x: number }",
      "const later = () => import('./later.ts');",
      'const lazy = () => import(`../lazy.ts`);',
      "const named: string = 'not-a-module.ts';",
      "import pg from 'pg';",
      "export const f = (x: Shape): number => x.x + b;",
    ].join('\n');
    const out = await compile(source, '/virtual/x.ts');
    const lines = out.split('\n');
    expect(lines.slice(0, 11).map((line) => line.trimEnd())).toEqual([
      '',
      "import { b,        } from '../b/c.js';",
      "export { d } from './d.js';",
      'export * from "./e.js";',
      "import './side-effect.js';",
      '',
      "const later = () => import('./later.js');",
      'const lazy = () => import(`../lazy.js`);',
      "const named         = 'not-a-module.ts';",
      "import pg from 'pg';",
      'export const f = (x       )         => x.x + b;',
    ]);
    // Same positions: what a stack trace says of dist/ is true of src/.
    source.split('\n').forEach((line, i) => expect(lines[i]!.length).toBe(line.length));
  });

  it('refuses a specifier it cannot rewrite, rather than leave TypeScript to load at run time', async () => {
    await expect(compile("import x from 'some-package/x.ts';", '/virtual/y.ts')).rejects.toThrow(/cannot rewrite/);
    await expect(compile('const y = await import(`/abs/y.ts`);', '/virtual/y.ts')).rejects.toThrow(/cannot rewrite/);
  });

  it('is current, with a module for every source and no .ts specifier left', () => {
    expect(distIsCurrent()).toBe(true);
    const src = join(DIST, '..', 'src');
    const files = (dir: string, ext: string) => readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(ext)).map((e) => relative(dir, join(e.parentPath, e.name)).slice(0, -ext.length)).sort();
    expect(files(DIST, '.js')).toEqual(files(src, '.ts'));
    for (const file of files(DIST, '.js')) {
      expect({ file, left: /(from|import)\s*\(?\s*['"`][^'"`]*\.ts['"`]/.exec(readFileSync(join(DIST, `${file}.js`), 'utf8'))?.[0] ?? null }).toEqual({ file, left: null });
    }
  });
});
