import { describe, expect, it } from '@jest/globals';
import { mergeOrgMemberEvents, parseOrgMemberNotice, type OrgMemberEvent } from '../../../src/live/feeds/org-members.ts';

describe('org member notices', () => {
  it.each([
    ['1:2', { orgId: 1, userId: 2 }],
    [' 10:20 ', { orgId: 10, userId: 20 }],
    ['*', { orgId: null, userId: null }],
  ])('%j', (payload, notice) => {
    expect(parseOrgMemberNotice(payload)).toEqual(notice);
  });

  it.each(['', '1', '1:', ':2', '1:2:3', 'a:b', '-1:2', '99999999999999999999:1'])('names no member: %j', (payload) => {
    expect(parseOrgMemberNotice(payload)).toBeNull();
  });
});

describe('org member events waiting for a slow reader', () => {
  const event = (kind: OrgMemberEvent['kind'], login: string): OrgMemberEvent => ({ kind, orgId: 1, userId: 2, login, member: null });

  it.each([
    ['ADDED', 'REMOVED', null],
    ['ADDED', 'UPDATED', 'ADDED'],
    ['REMOVED', 'ADDED', 'UPDATED'],
    ['UPDATED', 'REMOVED', 'REMOVED'],
    ['UPDATED', 'UPDATED', 'UPDATED'],
  ] as const)('%s then %s: %s', (older, newer, merged) => {
    const result = mergeOrgMemberEvents(event(older, 'old'), event(newer, 'new'));
    if (merged === null) expect(result).toBeNull();
    else expect(result).toMatchObject({ kind: merged, login: 'new' });
  });
});
