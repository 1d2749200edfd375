/**
 * `--config FILE` / `--config=FILE` (or single-dash, as Go's flag package allows) anywhere on a
 * command line; the last one wins. The rest is returned in order, for the command line's own use.
 */
export function splitConfigArgument(argv: readonly string[]): { configFile: string | null; rest: string[] } {
  let configFile: string | null = null;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const match = /^--?config(?:=(.*))?$/.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const value = match[1] ?? argv[++i];
    if (!value) throw new Error(`${arg} needs a file name`);
    configFile = value;
  }
  return { configFile, rest };
}
