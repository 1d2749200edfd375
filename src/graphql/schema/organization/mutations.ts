import type { RequestContext } from '../../../context.ts';
import { addOrgMember, removeOrgMember, updateOrgMemberRole } from '../../../services/org-members.ts';
import { createOrg, deleteOrg, updateOrg } from '../../../services/organizations.ts';
import { builder } from '../../builder.ts';
import { memberActor } from '../../access.ts';
import { decodeNodeId, encodeNodeId, fitsInt4, keyNumbers } from '../../node-ids.ts';
import { loadMemberships, orgById } from './loaders.ts';
import { deletePayload, mutate, nodePayload, remove, rowId, UserErrorType, type Payload } from '../payloads.ts';
import { OrganizationType } from './node.ts';
import { ORG_ACCESS, OrgMemberType, orgCreator } from './membership.ts';

/**
 * Mutations of orgs and their members, as the REST rows on `/api/orgs/:orgId` and `/api/org`: an
 * org is named by its global id, the org the request acts in included (`viewer.currentOrganization.id`),
 * and the role needed is checked in that org (server admins hold it in every org), as the rows on
 * an org by id do; for the org the request acts in that is the same rule as the `/api/org` rows.
 */

const OrganizationPayload = nodePayload('OrganizationPayload', 'organization', OrganizationType, 'org');
const OrganizationDeletePayload = deletePayload('OrganizationDeletePayload', 'deletedOrganizationId', 'org');
const OrganizationMemberPayload = nodePayload('OrganizationMemberPayload', 'member', OrgMemberType, 'membership');

const OrganizationMemberRemovePayload = builder.objectRef<Payload<{ deletedMemberId: string | null; deletedUserId: string | null }>>('OrganizationMemberRemovePayload').implement({
  description: 'The global id of the membership removed (and of the user, when it was deleted with it), or why not.',
  fields: (t) => ({
    deletedMemberId: t.id({ nullable: true, description: 'The membership\'s global id, for clients to evict it; null when `userErrors` says why not.', resolve: (p) => p.deletedMemberId }),
    deletedUserId: t.id({
      nullable: true,
      description: 'The user\'s global id when it was deleted too: removed from the org the request acts in and left in no org (never a server admin), as `DELETE /api/org/users/:userId` does. Null otherwise.',
      resolve: (p) => p.deletedUserId,
    }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const OrganizationCreateInput = builder.inputType('OrganizationCreateInput', {
  description: 'A new org.',
  fields: (t) => ({ name: t.string({ required: true, description: 'Unique among orgs.' }) }),
});

const OrganizationUpdateInput = builder.inputType('OrganizationUpdateInput', {
  description: 'An org\'s new attributes.',
  fields: (t) => ({ name: t.string({ required: true, description: 'Unique among orgs.' }) }),
});

const OrganizationMemberAddInput = builder.inputType('OrganizationMemberAddInput', {
  description: 'An existing user to add to an org, with its role there.',
  fields: (t) => ({
    loginOrEmail: t.string({ required: true, description: 'The user\'s login or e-mail, in any case.' }),
    role: t.string({ required: true, description: '`None` (no permission of its own: only what teams and grants give), `Viewer`, `Editor` or `Admin`; not above the caller\'s own role there.' }),
  }),
});

const OrganizationMemberUpdateInput = builder.inputType('OrganizationMemberUpdateInput', {
  description: 'A member\'s new role.',
  fields: (t) => ({ role: t.string({ required: true, description: '`None` (no permission of its own: only what teams and grants give), `Viewer`, `Editor` or `Admin`; not above the caller\'s own role there.' }) }),
});

const orgIdArg = 'The org\'s global id (`Organization.id`).';
const memberIdArg = 'The membership\'s global id (`OrganizationMember.id`), which names the org and the user.';

/** The org and the user a membership's global id names; zeros (no row) for another type's id. */
function membershipOf(globalId: string | number): { orgId: number; userId: number } {
  const { typename, id } = decodeNodeId(String(globalId));
  const [orgId = 0, userId = 0] = typename === 'OrganizationMember' ? keyNumbers(id) : [];
  const inRange = (n: number) => (fitsInt4(n) ? n : 0);
  return { orgId: inRange(orgId), userId: inRange(userId) };
}

const readOrg = async (ctx: RequestContext, id: number) => ({ organization: await orgById(ctx).load(id) });
const readMember = async (ctx: RequestContext, orgId: number, userId: number) => ({ member: (await loadMemberships(ctx, [`${orgId}:${userId}`]))[0] ?? null });

builder.mutationFields((t) => ({
  organizationCreate: t.field({
    type: OrganizationPayload,
    args: { input: t.arg({ type: OrganizationCreateInput, required: true, description: 'The org.' }) },
    description: 'Creates an org with the caller, when a user, as its Admin, as `POST /api/orgs`. Any signed-in caller passes the gate; '
      + 'then server admins, or every user when `[users] allow_org_create` is on (orgs:create).',
    extensions: { access: ORG_ACCESS.create },
    resolve: (_root, { input }, ctx) => {
      const creator = orgCreator(ctx);
      return mutate(ctx, () => createOrg(ctx.em, input.name, creator), (id) => readOrg(ctx, id), { organization: null });
    },
  }),
  organizationUpdate: t.field({
    type: OrganizationPayload,
    args: { id: t.arg.id({ required: true, description: orgIdArg }), input: t.arg({ type: OrganizationUpdateInput, required: true, description: 'What to change.' }) },
    description: 'Renames an org, as `PUT /api/orgs/:orgId` (and `PUT /api/org` for the org the request acts in). Org Admins of that org and server admins (orgs:write).',
    extensions: { access: ORG_ACCESS.write, accessIn: 'id' },
    resolve: (_root, { id, input }, ctx) => {
      const orgId = rowId(id, 'Organization');
      return mutate(ctx, () => updateOrg(ctx.em, orgId, input.name), () => readOrg(ctx, orgId), { organization: null });
    },
  }),
  organizationDelete: t.field({
    type: OrganizationDeletePayload,
    args: { id: t.arg.id({ required: true, description: orgIdArg }) },
    description: 'Deletes an org with its data sources, tokens, service accounts and memberships, as `DELETE /api/orgs/:orgId`; not the org the request acts in. '
      + 'Server admins only (orgs:delete).',
    extensions: { access: ORG_ACCESS.delete },
    resolve: (_root, { id }, ctx) => {
      const orgId = rowId(id, 'Organization');
      return remove(ctx, 'deletedOrganizationId', id, () => deleteOrg(ctx.em, orgId, ctx.orgId));
    },
  }),
  organizationMemberAdd: t.field({
    type: OrganizationMemberPayload,
    args: {
      organizationId: t.arg.id({ required: true, description: orgIdArg }),
      input: t.arg({ type: OrganizationMemberAddInput, required: true, description: 'The user and its role.' }),
    },
    description: 'Adds an existing user to an org, as `POST /api/orgs/:orgId/users` (and `POST /api/org/users`). '
      + 'Org Admins of that org and server admins (org.users:add).',
    extensions: { access: ORG_ACCESS.membersAdd, accessIn: 'organizationId' },
    resolve: async (_root, { organizationId, input }, ctx) => {
      const orgId = rowId(organizationId, 'Organization');
      const actor = await memberActor(ctx, orgId);
      return mutate(ctx, () => addOrgMember(ctx.em, orgId, input, actor), (userId) => readMember(ctx, orgId, userId), { member: null });
    },
  }),
  organizationMemberUpdate: t.field({
    type: OrganizationMemberPayload,
    args: { id: t.arg.id({ required: true, description: memberIdArg }), input: t.arg({ type: OrganizationMemberUpdateInput, required: true, description: 'What to change.' }) },
    description: 'Changes a member\'s role, as `PATCH /api/orgs/:orgId/users/:userId` (and `PATCH /api/org/users/:userId`); the org\'s last Admin cannot be demoted. '
      + 'Org Admins of that org and server admins (org.users:write).',
    extensions: { access: ORG_ACCESS.membersWrite, accessIn: 'id' },
    resolve: async (_root, { id, input }, ctx) => {
      const { orgId, userId } = membershipOf(id);
      const actor = await memberActor(ctx, orgId);
      return mutate(ctx, () => updateOrgMemberRole(ctx.em, orgId, userId, input.role, actor), () => readMember(ctx, orgId, userId), { member: null });
    },
  }),
  organizationMemberRemove: t.field({
    type: OrganizationMemberRemovePayload,
    args: {
      id: t.arg.id({ required: true, description: memberIdArg }),
      deleteOrphanedUser: t.arg.boolean({
        required: false,
        description: 'Whether a user left in no org is deleted too (never a server admin). By default, when the org is the one the request acts in, '
          + 'as `DELETE /api/org/users/:userId` does; `DELETE /api/orgs/:orgId/users/:userId` never does.',
      }),
    },
    description: 'Removes a member from an org, as `DELETE /api/orgs/:orgId/users/:userId` and `DELETE /api/org/users/:userId`; the org\'s last Admin cannot be removed. '
      + 'A user left in no org may be deleted with it (`deleteOrphanedUser`). '
      + 'Org Admins of that org and server admins (org.users:remove).',
    extensions: { access: ORG_ACCESS.membersRemove, accessIn: 'id' },
    resolve: (_root, { id, deleteOrphanedUser }, ctx) => {
      const { orgId, userId } = membershipOf(id);
      return mutate(ctx, () => removeOrgMember(ctx.em, orgId, userId, { deleteOrphan: deleteOrphanedUser ?? orgId === ctx.orgId }),
        (userDeleted) => ({ deletedMemberId: String(id), deletedUserId: userDeleted ? encodeNodeId('User', userId) : null }),
        { deletedMemberId: null, deletedUserId: null });
    },
  }),
}));
