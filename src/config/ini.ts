/**
 * A small parser for the go-ini dialect Grafana-style config files use: `[section]` headers,
 * `key = value` lines and full-line `;`/`#` comments. Keys before the first header belong to the
 * `DEFAULT` section, which is always present and always first.
 *
 * Deliberately not supported: inline comments (so a `#` or `;` inside a password needs no quoting),
 * `:` as a delimiter, multi-line values and boolean keys without `=`.
 */

export const DEFAULT_SECTION = 'DEFAULT';

/** Sections and keys in first-seen order (Maps keep insertion order; a repeated key keeps its place). */
export type IniSections = Map<string, Map<string, string>>;

/** The effective settings as sections of key/value pairs, in file order (DEFAULT first). */
export type RawSettings = ReadonlyArray<readonly [section: string, entries: ReadonlyArray<readonly [key: string, value: string]>]>;

const SECTION_LINE = /^\[([^\]]*)\]$/;

export function parseIni(text: string, fileName: string): IniSections {
  const sections: IniSections = new Map([[DEFAULT_SECTION, new Map()]]);
  let current = sections.get(DEFAULT_SECTION)!;
  // A leading byte-order mark would otherwise become part of the first key.
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);

  lines.forEach((rawLine, index) => {
    const line = rawLine.trim();
    if (line === '' || line.startsWith(';') || line.startsWith('#')) return;
    const where = `${fileName}:${index + 1}`;

    const header = SECTION_LINE.exec(line);
    if (header) {
      const name = header[1].trim();
      if (name === '') throw new Error(`${where}: empty section name`);
      current = sections.get(name) ?? new Map();
      sections.set(name, current);
      return;
    }

    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`${where}: expected "[section]" or "key = value", got ${JSON.stringify(line)}`);
    const key = line.slice(0, eq).trim();
    if (key === '') throw new Error(`${where}: missing key before "="`);
    current.set(key, unquote(line.slice(eq + 1).trim()));
  });

  return sections;
}

/** Strips one pair of surrounding `"""` or `"` quotes, which let a value keep its outer spaces. */
function unquote(value: string): string {
  if (value.length >= 6 && value.startsWith('"""') && value.endsWith('"""')) return value.slice(3, -3);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) return value.slice(1, -1);
  return value;
}
