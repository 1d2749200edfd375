import { builder } from '../../builder.ts';
import { isServerAdmin, orgRoleOrServerAdmin, serverAdminFor, signedIn } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import { accessDenied } from '../../../errors/domain.ts';
import type { OrgMember } from '../../../services/org-members.ts';
import { ageOf } from '../../../services/user-profiles.ts';
import { loadMemberships } from './loaders.ts';
import { nodeKey } from '../../node-ids.ts';
import { avatarOf } from '../user/profile.ts';

/**
 * Who may call each root field; REST rows running these fields declare the same rules. Fields on
 * an org named by id admit any signed-in caller and check the role held in that org themselves
 * (it depends on the data); org creation depends on `[users] allow_org_create`.
 */
export const ORG_ACCESS = {
  list: serverAdminFor('orgs:read'),
  delete: serverAdminFor('orgs:delete'),
  create: signedIn,
  currentRead: orgRoleOrServerAdmin('Viewer', 'orgs:read'),
  write: orgRoleOrServerAdmin('Admin', 'orgs:write'),
  membersRead: orgRoleOrServerAdmin('Admin', 'org.users:read'),
  membersAdd: orgRoleOrServerAdmin('Admin', 'org.users:add'),
  membersWrite: orgRoleOrServerAdmin('Admin', 'org.users:write'),
  membersRemove: orgRoleOrServerAdmin('Admin', 'org.users:remove'),
};

/**
 * Who may create an org (`ORG_ACCESS.create` admits every signed-in caller): a server admin, or any
 * user when `[users] allow_org_create` is on; 403 naming orgs:create otherwise. Answers the user
 * who becomes its Admin, if the creator is one.
 */
export function orgCreator(ctx: RequestContext): number | null {
  const caller = ctx.caller;
  const isUser = caller.kind === 'user' && caller.userId !== null;
  if (!isServerAdmin(caller) && !(ctx.services.settings.users.allowOrgCreate && isUser)) throw accessDenied('orgs:create');
  return isUser ? caller.userId : null;
}

export const OrgMemberType = builder.node(builder.objectRef<OrgMember>('OrganizationMember'), {
  description: 'A user\'s membership of an org (service accounts are listed with their own API). A node: seen by its own user, the org\'s Admins and server admins.',
  id: nodeKey((m: OrgMember) => `${m.orgId}:${m.userId}`),
  loadMany: (keys, ctx) => loadMemberships(ctx, keys),
  fields: (t) => ({
    orgId: t.exposeInt('orgId', { description: 'The org\'s id.' }),
    userId: t.exposeInt('userId', { description: 'The user\'s id.' }),
    uid: t.exposeString('uid', { description: 'The user\'s uid.' }),
    email: t.exposeString('email', { description: 'The user\'s e-mail.' }),
    name: t.exposeString('name', { description: 'The user\'s display name.' }),
    avatarUrl: t.string({ description: 'Path of the user\'s avatar image.', resolve: (m, _args, ctx) => avatarOf(ctx, m.email) }),
    login: t.exposeString('login', { description: 'The user\'s login.' }),
    role: t.exposeString('role', { description: '`None` (a member with no permission of its own), `Viewer`, `Editor` or `Admin`.' }),
    lastSeenAt: t.string({ description: 'Last activity (ISO 8601); `0001-01-01T00:00:00Z` when never seen.', resolve: (m) => m.lastSeenAt?.toISOString() ?? '0001-01-01T00:00:00Z' }),
    created: t.string({ description: 'When the user was created (ISO 8601).', resolve: (m) => m.created.toISOString() }),
    lastSeenAtAge: t.string({ description: 'How long ago, e.g. `10 years`; `?` when never seen.', resolve: (m) => ageOf(m.lastSeenAt) }),
    isDisabled: t.exposeBoolean('isDisabled', { description: 'Whether the user is disabled.' }),
    authLabels: t.stringList({ description: 'Always empty (no external provider).', resolve: () => [] }),
    isExternallySynced: t.boolean({ description: 'Always false (no external provider).', resolve: () => false }),
    isProvisioned: t.boolean({ description: 'Always false.', resolve: () => false }),
  }),
});
