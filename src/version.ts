import { readFileSync } from 'node:fs';

/** The package version, read once. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The git commit the server runs from, when started from a checkout; otherwise "unknown". */
export const COMMIT: string = readCommit();

function readCommit(): string {
  try {
    const git = new URL('../.git/', import.meta.url);
    const head = readFileSync(new URL('HEAD', git), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head;
    const ref = head.slice(5);
    try {
      return readFileSync(new URL(ref, git), 'utf8').trim();
    } catch {
      const packed = readFileSync(new URL('packed-refs', git), 'utf8');
      return packed.split('\n').find((line) => line.endsWith(` ${ref}`))?.split(' ')[0] ?? 'unknown';
    }
  } catch {
    return 'unknown';
  }
}
