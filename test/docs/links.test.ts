import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

// The README links into docs/ and the pages into one another: every relative link names a file
// that exists and, where it has one, a heading of that file.

const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = ['README.md', 'bench/README.md', 'examples/typed-client/README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replaceAll(' ', '-');
}

function headings(text: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#+ /.test(line)) out.add(anchor(line.replace(/^#+ /, '')));
  }
  return out;
}

function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
}

describe('documentation links', () => {
  it('finds the pages', () => {
    expect(pages).toEqual(expect.arrayContaining(['docs/rest.md', 'docs/graphql.md', 'docs/configuration.md', 'docs/operations.md', 'docs/development.md', 'docs/internals.md']));
  });

  it.each(pages)('%s: every relative link reaches a file and its heading', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const broken: string[] = [];
    for (const target of links(text)) {
      const [file, hash] = target.split('#') as [string, string | undefined];
      const path = file === '' ? join(root, page) : join(root, dirname(page), file);
      if (!existsSync(path)) broken.push(`${target}: no ${relative(root, path)}`);
      else if (hash && path.endsWith('.md') && !headings(readFileSync(path, 'utf8')).has(hash)) broken.push(`${target}: no such heading`);
    }
    expect(broken).toEqual([]);
  });
});
