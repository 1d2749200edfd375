import { describe, expect, it } from '@jest/globals';
import { allows, effectiveLevel, heldRoles, levelName, levelNumber, type Grant, type Grantee, type LevelNumber } from '../../src/services/data-source-access.ts';

const DEFAULTS: Grant[] = [{ builtInRole: 'Viewer', level: 1 }, { builtInRole: 'Editor', level: 1 }];
const viewer = (extra: Partial<Grantee> = {}): Grantee => ({ orgRole: 'Viewer', userId: 7, teamIds: [], ...extra });

describe('effectiveLevel', () => {
  const cases: Array<[string, Grantee, Grant[], LevelNumber]> = [
    ['defaults: a Viewer may query', viewer(), DEFAULTS, 1],
    ['defaults: an Editor may query, not edit', viewer({ orgRole: 'Editor' }), DEFAULTS, 1],
    ['an org Admin administers whatever the grants say', viewer({ orgRole: 'Admin' }), [], 3],
    ['no role in the org and no grant: nothing', viewer({ orgRole: 'None' }), DEFAULTS, 0],
    ['Viewer grant removed: a Viewer has nothing', viewer(), [{ builtInRole: 'Editor', level: 1 }], 0],
    ['Viewer grant removed: an Editor still queries through its own', viewer({ orgRole: 'Editor' }), [{ builtInRole: 'Editor', level: 1 }], 1],
    ['a Viewer grant reaches Editors (roles include the weaker ones)', viewer({ orgRole: 'Editor' }), [{ builtInRole: 'Viewer', level: 2 }], 2],
    ['an Editor grant does not reach Viewers', viewer(), [{ builtInRole: 'Editor', level: 2 }], 0],
    ['a user grant applies to that user', viewer(), [{ userId: 7, level: 2 }], 2],
    ['a user grant does not apply to another', viewer({ userId: 8 }), [{ userId: 7, level: 2 }], 0],
    ['an API key (no user) never matches a user grant', viewer({ userId: null }), [{ userId: 7, level: 3 }], 0],
    ['a team grant applies to its members', viewer({ teamIds: [3, 4] }), [{ teamId: 4, level: 3 }], 3],
    ['a team grant does not apply to others', viewer({ teamIds: [3] }), [{ teamId: 4, level: 3 }], 0],
    ['the highest of several grants wins', viewer({ teamIds: [4] }), [...DEFAULTS, { userId: 7, level: 2 }, { teamId: 4, level: 3 }], 3],
    ['a user with no role but a grant has it', viewer({ orgRole: 'None' }), [{ userId: 7, level: 1 }], 1],
  ];
  it.each(cases)('%s', (_name, grantee, grants, expected) => {
    expect(effectiveLevel(grantee, grants)).toBe(expected);
  });
});

describe('levels and actions', () => {
  it.each([
    [0, 'read', false], [1, 'read', true], [1, 'query', true], [1, 'write', false], [1, 'delete', false],
    [2, 'write', true], [2, 'delete', true], [2, 'admin', false], [3, 'admin', true],
  ] as const)('level %i allows %s: %s', (level, action, expected) => {
    expect(allows(level, action)).toBe(expected);
  });

  it('names levels as the original does, both ways', () => {
    expect([levelName(0), levelName(1), levelName(2), levelName(3)]).toEqual(['', 'Query', 'Edit', 'Admin']);
    expect([levelNumber('Query'), levelNumber('Edit'), levelNumber('Admin')]).toEqual([1, 2, 3]);
  });

  it('lists the roles a role holds', () => {
    expect(heldRoles('None')).toEqual([]);
    expect(heldRoles('Viewer')).toEqual(['Viewer']);
    expect(heldRoles('Editor')).toEqual(['Viewer', 'Editor']);
    expect(heldRoles('Admin')).toEqual(['Viewer', 'Editor', 'Admin']);
  });
});
