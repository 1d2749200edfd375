import { builder } from '../builder.ts';
import { isServerAdmin, orgRoleOrServerAdmin, serverAdminFor, signedIn } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { accessDenied } from '../../errors/domain.ts';
import type { OrgMember } from '../../services/org-members.ts';
import { getOrgByName, searchOrgs, type OrgDetails } from '../../services/organizations.ts';
import { ageOf } from '../../services/user-profiles.ts';
import { loadMemberships } from '../node-loaders.ts';
import { nodeKey } from '../node-ids.ts';
import { avatarOf } from './user/profile.ts';

/**
 * Who may call each root field; REST rows running these fields declare the same rules. Fields on
 * an org named by id admit any signed-in caller and check the role held in that org themselves
 * (it depends on the data); org creation depends on `[users] allow_org_create`.
 */
export const ORG_ACCESS = {
  list: serverAdminFor('orgs:read'),
  delete: serverAdminFor('orgs:delete'),
  byId: signedIn,
  create: signedIn,
  currentRead: orgRoleOrServerAdmin('Viewer', 'orgs:read'),
  currentWrite: orgRoleOrServerAdmin('Admin', 'orgs:write'),
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

const OrgAddressType = builder.objectRef<OrgDetails['address']>('OrganizationAddress').implement({
  description: 'A postal address; not kept by this server, so always empty.',
  fields: (t) => ({
    address1: t.exposeString('address1', { description: 'Always empty.' }),
    address2: t.exposeString('address2', { description: 'Always empty.' }),
    city: t.exposeString('city', { description: 'Always empty.' }),
    zipCode: t.exposeString('zipCode', { description: 'Always empty.' }),
    state: t.exposeString('state', { description: 'Always empty.' }),
    country: t.exposeString('country', { description: 'Always empty.' }),
  }),
});

export const OrganizationType = builder.objectRef<{ id: number; name: string; address?: OrgDetails['address'] }>('Organization').implement({
  description: 'An organization: the unit that owns data sources, tokens and service accounts, with members in roles.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The org\'s id (`/api/orgs/:orgId`, `X-Grafana-Org-Id`).' }),
    name: t.exposeString('name', { description: 'Unique among orgs.' }),
    address: t.field({
      type: OrgAddressType,
      description: 'Its postal address: not kept, so always empty.',
      resolve: (o) => o.address ?? { address1: '', address2: '', city: '', zipCode: '', state: '', country: '' },
    }),
  }),
});

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

builder.queryFields((t) => ({
  organizations: t.field({
    deprecationReason: 'Use `allOrganizations`, a connection.',
    type: [OrganizationType],
    args: {
      query: t.arg.string({ required: false, description: 'Only orgs whose name starts with it.' }),
      name: t.arg.string({ required: false, description: 'Only the org of exactly this name.' }),
      page: t.arg.int({ required: false, description: 'Page number from 0 (default 0).' }),
      perPage: t.arg.int({ required: false, description: 'Page size; 0 or absent means 1000.' }),
    },
    description: 'Every org by id, one page at a time (a page past the end is empty), as `GET /api/orgs`. Server admins only (orgs:read).',
    extensions: { access: ORG_ACCESS.list },
    resolve: (_root, args, ctx) => searchOrgs(ctx.em, args),
  }),
  organizationByName: t.field({
    type: OrganizationType,
    args: { name: t.arg.string({ required: true, description: 'The exact name.' }) },
    description: 'An org by name, as `GET /api/orgs/name/:name`. Server admins only (orgs:read).',
    extensions: { access: ORG_ACCESS.list },
    resolve: (_root, { name }, ctx) => getOrgByName(ctx.em, name),
  }),
}));
