import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's folder, where package.json and conf/ are: the nearest one above this module. The
 * module sits at a different depth under src/ (tests, the CLI) than in the bundle `npm start` runs
 * (dist/), so a fixed `../..` would be right in one of them only.
 */
export const PROJECT_ROOT: string = findRoot(dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** A path inside the project's folder. */
export const projectPath = (...parts: string[]): string => join(PROJECT_ROOT, ...parts);
