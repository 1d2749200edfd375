import { readFileSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { projectPath } from './project-root.ts';

/** The package version, read once. */
export const VERSION: string = (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string }).version;

/** The git commit the server runs from, when started from a checkout; otherwise "unknown". */
export const COMMIT: string = readCommit();

function readCommit(): string {
  try {
    const { gitDir, commonDir } = gitDirs(pathToFileURL(projectPath('.git')));
    const head = readFileSync(new URL('HEAD', gitDir), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head;
    const ref = head.slice(5);
    // A worktree keeps its HEAD, but its branches and packed refs live in the common folder.
    for (const dir of [gitDir, commonDir]) {
      try {
        return readFileSync(new URL(ref, dir), 'utf8').trim();
      } catch {
        // not a loose ref here
      }
    }
    const packed = readFileSync(new URL('packed-refs', commonDir), 'utf8');
    return packed.split('\n').find((line) => line.endsWith(` ${ref}`))?.split(' ')[0] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `.git` is a folder in a clone, and a `gitdir:` file pointing at the folder in a worktree. */
function gitDirs(dotGit: URL): { gitDir: URL; commonDir: URL } {
  if (statSync(dotGit).isDirectory()) {
    const dir = new URL(`${dotGit.href}/`);
    return { gitDir: dir, commonDir: dir };
  }
  const pointer = readFileSync(dotGit, 'utf8').trim().replace(/^gitdir:\s*/, '');
  const gitDir = new URL(`${pathToFileURL(pointer).href}/`);
  let commonDir = gitDir;
  try {
    commonDir = new URL(`${readFileSync(new URL('commondir', gitDir), 'utf8').trim()}/`, gitDir);
  } catch {
    // no commondir: everything is in gitDir
  }
  return { gitDir, commonDir };
}
