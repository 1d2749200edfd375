import { describe, expect, it } from '@jest/globals';
import { splitConfigArgument } from '../../src/config/argv.ts';

describe('splitConfigArgument', () => {
  it.each<[string[], string | null, string[]]>([
    [[], null, []],
    [['migrate'], null, ['migrate']],
    [['--config', 'a.ini', 'migrate'], 'a.ini', ['migrate']],
    [['migrate', '--config=b.ini'], 'b.ini', ['migrate']],
    [['-config', 'c.ini'], 'c.ini', []],
    [['-config=d.ini', 'token', 'create'], 'd.ini', ['token', 'create']],
    // The last one wins.
    [['--config', 'a.ini', '--config=b.ini'], 'b.ini', []],
    // Only the exact option: others pass through.
    [['--configs', 'x', '--config-file=y'], null, ['--configs', 'x', '--config-file=y']],
  ])('%j', (argv, configFile, rest) => {
    expect(splitConfigArgument(argv)).toEqual({ configFile, rest });
  });

  it.each([[['--config']], [['--config=']], [['migrate', '-config']]])('refuses %j without a file name', (argv) => {
    expect(() => splitConfigArgument(argv)).toThrow(`${argv.at(-1)!.replace(/=$/, '=')} needs a file name`);
  });
});
