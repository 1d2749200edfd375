import { describe, expect, it } from '@jest/globals';
import {
  anonymous, authorize, orgMember, orgRole, orgRoleOrServerAdmin, perField, sameAccess, serverAdmin, serverAdminFor, signedIn, signedInUser, type Access,
} from '../../src/auth/access.ts';
import type { Principal } from '../../src/auth/principal.ts';

const user = (orgRole: Principal['orgRole'], isServerAdmin = false): Principal =>
  ({ kind: 'user', userId: 7, login: 'u', orgId: 1, orgRole, isServerAdmin, method: 'basic' });
const token = (orgRole: Principal['orgRole']): Principal =>
  ({ kind: 'service-account', userId: 9, login: 'sa-1-robot', orgId: 1, orgRole, isServerAdmin: false, method: 'token' });

const CALLERS: Record<string, Principal | null> = {
  anonymous: null,
  'no member': user(null),
  'None member': user('None'),
  Viewer: user('Viewer'),
  Editor: user('Editor'),
  Admin: user('Admin'),
  'server admin, no role': user(null, true),
  'None token': token('None'),
  'Admin token': token('Admin'),
  // A token can never hold the server-admin permission; were one to claim it, it is still refused.
  'token claiming server admin': { ...token('Admin'), isServerAdmin: true },
};

/** The status each caller gets: 0 admitted, else the error's status. */
const TABLE: Array<[string, Access, Record<keyof typeof CALLERS, number>]> = [
  ['anonymous', anonymous, { anonymous: 0, 'no member': 0, 'None member': 0, Viewer: 0, Editor: 0, Admin: 0, 'server admin, no role': 0, 'None token': 0, 'Admin token': 0, 'token claiming server admin': 0 }],
  ['per field', perField, { anonymous: 0, 'no member': 0, 'None member': 0, Viewer: 0, Editor: 0, Admin: 0, 'server admin, no role': 0, 'None token': 0, 'Admin token': 0, 'token claiming server admin': 0 }],
  ['signed in', signedIn, { anonymous: 401, 'no member': 0, 'None member': 0, Viewer: 0, Editor: 0, Admin: 0, 'server admin, no role': 0, 'None token': 0, 'Admin token': 0, 'token claiming server admin': 0 }],
  ['org Viewer', orgRole('Viewer', 'x:read'), { anonymous: 401, 'no member': 403, 'None member': 403, Viewer: 0, Editor: 0, Admin: 0, 'server admin, no role': 403, 'None token': 403, 'Admin token': 0, 'token claiming server admin': 0 }],
  ['org Editor', orgRole('Editor', 'x:write'), { anonymous: 401, 'no member': 403, 'None member': 403, Viewer: 403, Editor: 0, Admin: 0, 'server admin, no role': 403, 'None token': 403, 'Admin token': 0, 'token claiming server admin': 0 }],
  ['org Admin', orgRole('Admin', 'x:delete'), { anonymous: 401, 'no member': 403, 'None member': 403, Viewer: 403, Editor: 403, Admin: 0, 'server admin, no role': 403, 'None token': 403, 'Admin token': 0, 'token claiming server admin': 0 }],
  ['server admin', serverAdmin, { anonymous: 401, 'no member': 403, 'None member': 403, Viewer: 403, Editor: 403, Admin: 403, 'server admin, no role': 0, 'None token': 403, 'Admin token': 403, 'token claiming server admin': 403 }],
  ['server admin, naming the action', serverAdminFor('users:read'), { anonymous: 401, 'no member': 403, 'None member': 403, Viewer: 403, Editor: 403, Admin: 403, 'server admin, no role': 0, 'None token': 403, 'Admin token': 403, 'token claiming server admin': 403 }],
  ['org Admin or server admin', orgRoleOrServerAdmin('Admin', 'org.users:read'), { anonymous: 401, 'no member': 403, 'None member': 403, Viewer: 403, Editor: 403, Admin: 0, 'server admin, no role': 0, 'None token': 403, 'Admin token': 0, 'token claiming server admin': 0 }],
  // Every member, whatever its role (None included): the resource's own grants then decide.
  ['org member', orgMember('datasources:read'), { anonymous: 401, 'no member': 403, 'None member': 0, Viewer: 0, Editor: 0, Admin: 0, 'server admin, no role': 403, 'None token': 0, 'Admin token': 0, 'token claiming server admin': 0 }],
  ['signed-in user', signedInUser, { anonymous: 401, 'no member': 0, 'None member': 0, Viewer: 0, Editor: 0, Admin: 0, 'server admin, no role': 0, 'None token': 403, 'Admin token': 403, 'token claiming server admin': 403 }],
];

describe('authorize', () => {
  it.each(TABLE)('%s', (_name, access, expected) => {
    const got = Object.fromEntries(Object.entries(CALLERS).map(([caller, principal]) => [caller, authorize(principal, access)?.status ?? 0]));
    expect(got).toEqual(expected);
  });

  it('words its refusals as the original server does', () => {
    expect(authorize(null, signedIn)?.body).toEqual({ extra: null, message: 'Unauthorized', messageId: 'auth.unauthorized', statusCode: 401, traceID: '' });
    expect(authorize(user('Viewer'), serverAdmin)?.message).toBe('Permission denied');
    const denied = authorize(user('Viewer'), orgRole('Admin', 'datasources:create'));
    expect(denied?.body).toMatchObject({
      title: 'Access denied',
      message: "You'll need additional permissions to perform this action. Permissions needed: datasources:create",
    });
    expect(String(denied?.body?.accessErrorId)).toMatch(/^ACE\d{10}$/);
    expect(authorize(user('Admin'), serverAdminFor('orgs:delete'))?.message).toBe("You'll need additional permissions to perform this action. Permissions needed: orgs:delete");
    expect(authorize(token('Admin'), signedInUser)?.body).toBeUndefined();
    expect(authorize(token('Admin'), signedInUser)?.message).toBe('Endpoint only available for users');
  });
});

describe('sameAccess', () => {
  it('compares rules by kind, role and action', () => {
    expect(sameAccess(orgRole('Viewer', 'a'), orgRole('Viewer', 'a'))).toBe(true);
    expect(sameAccess(orgRole('Viewer', 'a'), orgRole('Editor', 'a'))).toBe(false);
    expect(sameAccess(orgRole('Viewer', 'a'), orgRole('Viewer', 'b'))).toBe(false);
    expect(sameAccess(serverAdmin, { kind: 'server-admin' })).toBe(true);
    expect(sameAccess(serverAdmin, signedIn)).toBe(false);
    expect(sameAccess(anonymous, perField)).toBe(false);
    expect(sameAccess(serverAdmin, serverAdminFor('users:read'))).toBe(false);
    expect(sameAccess(serverAdminFor('users:read'), serverAdminFor('users:read'))).toBe(true);
    expect(sameAccess(orgRole('Admin', 'a'), orgRoleOrServerAdmin('Admin', 'a'))).toBe(false);
    expect(sameAccess(signedInUser, signedIn)).toBe(false);
  });
});
