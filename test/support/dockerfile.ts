import { readFileSync } from 'node:fs';

/**
 * Just enough of the Dockerfile syntax to carry out this project's Dockerfile without Docker: no
 * engine runs where the tests do, so test/system/image-install.test.ts performs its steps itself.
 * Anything this reader does not know fails loudly rather than being skipped.
 */

export interface Instruction {
  keyword: string;
  /** `--name=value` flags before the arguments (`--from`, `--chown`, `--mount`, `--interval`...). */
  flags: Record<string, string>;
  /** The rest of the line: the arguments as written, continuations joined. */
  text: string;
  /** The arguments in exec (JSON array) form, or null for shell form. */
  exec: string[] | null;
}

export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

export function readDockerfile(path: string): Stage[] {
  return parseDockerfile(readFileSync(path, 'utf8'));
}

export function parseDockerfile(source: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of source.split('\n')) {
    const line = raw.trimEnd();
    if (!pending && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (pending && line.trimStart().startsWith('#')) continue; // comments inside a continued instruction
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push((pending + line).trim());
    pending = '';
  }
  if (pending) throw new Error('Dockerfile ends inside a continued line');

  const stages: Stage[] = [];
  for (const line of logical) {
    const [, word, rest = ''] = /^(\S+)\s*(.*)$/.exec(line)!;
    const keyword = word!.toUpperCase();
    let text = rest;
    const flags: Record<string, string> = {};
    for (let flag = /^--([a-z-]+)=(\S+)\s+/.exec(text); flag; flag = /^--([a-z-]+)=(\S+)\s+/.exec(text)) {
      flags[flag[1]!] = flag[2]!;
      text = text.slice(flag[0].length);
    }
    if (keyword === 'FROM') {
      const [, image, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(text) ?? [];
      if (!image) throw new Error(`cannot read: ${line}`);
      stages.push({ image, name: name ?? null, instructions: [] });
      continue;
    }
    if (stages.length === 0) throw new Error(`${keyword} before FROM`);
    let exec: string[] | null = null;
    // HEALTHCHECK's command follows its own keyword, CMD.
    const command = keyword === 'HEALTHCHECK' ? text.replace(/^CMD\s+/, '') : text;
    if (command.startsWith('[')) exec = JSON.parse(command) as string[];
    stages.at(-1)!.instructions.push({ keyword, flags, text: command, exec });
  }
  return stages;
}

/**
 * Whether `.dockerignore` leaves `path` (relative, `/`-separated) out of the build context: the
 * last pattern matching the path or one of its parent folders decides, `!` re-includes; `*` and
 * `?` stay within one path segment, `**` spans any.
 */
export function dockerIgnores(patterns: string, path: string): boolean {
  const rules = patterns
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const include = line.startsWith('!');
      const pattern = (include ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
      const source = pattern
        .split('')
        .map((c, i, all) => (c === '*' ? (all[i + 1] === '*' ? '' : all[i - 1] === '*' ? '.*' : '[^/]*') : c === '?' ? '[^/]' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('');
      return { include, regex: new RegExp(`^${source}$`) };
    });
  const segments = path.split('/');
  const candidates = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const rule of rules) {
    if (candidates.some((candidate) => rule.regex.test(candidate))) ignored = !rule.include;
  }
  return ignored;
}
