import { describe, expect, it } from '@jest/globals';
import { expandEnv } from '../../src/provisioning/expand.ts';

const env = Object.freeze({ HOST: 'db.local', PORT: '5432', EMPTY: '', DOLLAR: '$HOST' });

describe('expandEnv', () => {
  it.each([
    ['no variables', 'no variables'],
    ['$HOST:$PORT', 'db.local:5432'],
    ['${HOST}x', 'db.localx'],
    ['$HOSTx', ''], // the longest name, unset
    ['$$HOST', '$HOST'],
    ['$$$HOST', '$db.local'],
    ['$UNSET-$EMPTY-', '--'],
    // A value is not expanded again.
    ['$DOLLAR', '$HOST'],
    // Not a reference: left as written.
    ['$1 and $ and ${bad-name} and $', '$1 and $ and ${bad-name} and $'],
    ['${HOST', '${HOST'],
  ])('%j -> %j', (text, expected) => {
    expect(expandEnv(text, env)).toBe(expected);
  });
});
