import { describe, expect, it } from '@jest/globals';
import { BASIC_ROLES, isBasicRole, ORG_ROLES, roleAtLeast, type BasicRole, type HeldRole } from '../src/roles.ts';

describe('roles', () => {
  it('lists the basic roles weakest first, None below the three that carry permissions', () => {
    expect([BASIC_ROLES, ORG_ROLES]).toEqual([['None', 'Viewer', 'Editor', 'Admin'], ['Viewer', 'Editor', 'Admin']]);
  });

  it('orders them, and someone who is no member holds nothing, not even None', () => {
    const held: HeldRole[] = [null, ...BASIC_ROLES];
    const table = held.map((have) => BASIC_ROLES.map((need: BasicRole) => (roleAtLeast(have, need) ? 1 : 0)).join(''));
    expect(table).toEqual(['0000', '1000', '1100', '1110', '1111']);
  });

  it.each([['None', true], ['Admin', true], ['admin', false], ['', false], [null, false], [3, false], ['GrafanaAdmin', false]])('%j is a basic role: %p', (value, is) => {
    expect(isBasicRole(value)).toBe(is);
  });
});
