import { serverAdmin, serverAdminFor, signedInUser } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import { badRequest } from '../../../errors/domain.ts';
import { MESSAGES } from '../../../errors/messages.ts';
import { changeOwnPassword, setCurrentOrg, updateUser } from '../../../services/user-profiles.ts';
import { createUser, deleteUser, setUserDisabled, updatePassword, updatePermissions } from '../../../services/users.ts';
import { builder } from '../../builder.ts';
import { userById } from './loaders.ts';
import { databaseId, deletePayload, mutate, nodePayload, remove, rowId } from '../payloads.ts';
import { User } from './node.ts';
import { UpdateUserInput } from './profile.ts';

/**
 * Mutations of users: server admins' (`/api/admin/users`, `/api/users/:id`) on a user named by its
 * global id, and the signed-in user's own (`/api/user`), each with its REST row's rule.
 */

const UserPayload = nodePayload('UserPayload', 'user', User, 'user');
const UserDeletePayload = deletePayload('UserDeletePayload', 'deletedUserId', 'user');

const UserCreateInput = builder.inputType('UserCreateInput', {
  description: 'A new user. Either `login` or `email` is needed; the login defaults to the e-mail.',
  fields: (t) => ({
    name: t.string({ required: false, description: 'Display name.' }),
    email: t.string({ required: false, description: 'Defaults to the login. Unique, case-insensitively.' }),
    login: t.string({ required: false, description: 'Login name (trimmed). Unique, case-insensitively, also against e-mails.' }),
    password: t.string({ required: true, description: 'At least 4 characters; stored only as an argon2id hash.' }),
    organizationId: t.id({ required: false, description: 'The org to join (`Organization.id`); by default `[users] auto_assign_org_id`.' }),
  }),
});

const UserPasswordUpdateInput = builder.inputType('UserPasswordUpdateInput', {
  description: 'A user\'s new password.',
  fields: (t) => ({ password: t.string({ required: true, description: 'At least 4 characters.' }) }),
});

const UserPermissionsUpdateInput = builder.inputType('UserPermissionsUpdateInput', {
  description: 'Whether a user holds the server-admin permission.',
  fields: (t) => ({ isServiceAdmin: t.boolean({ required: true, description: 'Grant (true) or revoke (false).' }) }),
});

const ViewerPasswordChangeInput = builder.inputType('ViewerPasswordChangeInput', {
  description: 'The signed-in user\'s current password and its new one.',
  fields: (t) => ({
    oldPassword: t.string({ required: true, description: 'The current password; a user error when it does not match.' }),
    newPassword: t.string({ required: true, description: 'At least 4 characters.' }),
  }),
});

const idArg = 'The user\'s global id (`User.id`).';

const readUser = async (ctx: RequestContext, id: number) => ({ user: await userById(ctx).load(id) });
/** Changes user `id`, then reads it back as the graph does. */
const userChange = (ctx: RequestContext, id: number, change: () => Promise<unknown>) => mutate(ctx, change, () => readUser(ctx, id), { user: null });
/** The signed-in user's id (the `signedInUser` rule admits users only). */
const selfId = (ctx: RequestContext): number => ctx.caller.userId!;

builder.mutationFields((t) => ({
  userCreate: t.field({
    type: UserPayload,
    args: { input: t.arg({ type: UserCreateInput, required: true, description: 'The user.' }) },
    description: 'Creates a user in the given org, or the auto-assign org, with the auto-assign role, as `POST /api/admin/users`. Server admins only (Basic credentials).',
    extensions: { access: serverAdmin },
    resolve: (_root, { input: { organizationId, ...input } }, ctx) => {
      const orgId = organizationId == null ? null : databaseId(organizationId, 'Organization');
      return mutate(ctx, async () => {
        // Another type's id names no org: refused as an unknown org id is, not read as "the default org".
        if (organizationId != null && orgId === null) throw badRequest(MESSAGES.user.orgNotFound);
        return createUser(ctx.em, { ...input, orgId }, ctx.services.settings.users);
      }, (user) => readUser(ctx, user.id), { user: null });
    },
  }),
  userUpdate: t.field({
    type: UserPayload,
    args: { id: t.arg.id({ required: true, description: idArg }), input: t.arg({ type: UpdateUserInput, required: true, description: 'What to change.' }) },
    description: 'Changes a user\'s name, e-mail, login and theme, as `PUT /api/users/:id`. Server admins only (users:write).',
    extensions: { access: serverAdminFor('users:write') },
    resolve: (_root, { id, input }, ctx) => {
      const userId = rowId(id, 'User');
      return userChange(ctx, userId, () => updateUser(ctx.em, userId, input));
    },
  }),
  userDelete: t.field({
    type: UserDeletePayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Deletes a user with its memberships and stars, as `DELETE /api/admin/users/:id`; not the last server admin. Server admins only (Basic credentials).',
    extensions: { access: serverAdmin },
    resolve: (_root, { id }, ctx) => {
      const userId = rowId(id, 'User');
      return remove(ctx, 'deletedUserId', id, () => deleteUser(ctx.em, userId));
    },
  }),
  userDisable: t.field({
    type: UserPayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Disables a user, as `POST /api/admin/users/:id/disable`: its credentials are refused on every instance from the next request on; not the last enabled server admin. '
      + 'Server admins only (Basic credentials).',
    extensions: { access: serverAdmin },
    resolve: (_root, { id }, ctx) => {
      const userId = rowId(id, 'User');
      return userChange(ctx, userId, () => setUserDisabled(ctx.em, userId, true));
    },
  }),
  userEnable: t.field({
    type: UserPayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Enables a disabled user again, as `POST /api/admin/users/:id/enable`. Server admins only (Basic credentials).',
    extensions: { access: serverAdmin },
    resolve: (_root, { id }, ctx) => {
      const userId = rowId(id, 'User');
      return userChange(ctx, userId, () => setUserDisabled(ctx.em, userId, false));
    },
  }),
  userPasswordUpdate: t.field({
    type: UserPayload,
    args: { id: t.arg.id({ required: true, description: idArg }), input: t.arg({ type: UserPasswordUpdateInput, required: true, description: 'The new password.' }) },
    description: 'Sets a user\'s password, as `PUT /api/admin/users/:id/password`; the old one stops working at once on every instance. Server admins only (Basic credentials).',
    extensions: { access: serverAdmin },
    resolve: (_root, { id, input }, ctx) => {
      const userId = rowId(id, 'User');
      return userChange(ctx, userId, () => updatePassword(ctx.em, userId, input.password));
    },
  }),
  userPermissionsUpdate: t.field({
    type: UserPayload,
    args: { id: t.arg.id({ required: true, description: idArg }), input: t.arg({ type: UserPermissionsUpdateInput, required: true, description: 'The permission.' }) },
    description: 'Grants or revokes the server-admin permission, as `PUT /api/admin/users/:id/permissions`; the last server admin keeps it. Server admins only (Basic credentials).',
    extensions: { access: serverAdmin },
    resolve: (_root, { id, input }, ctx) => {
      const userId = rowId(id, 'User');
      return userChange(ctx, userId, () => updatePermissions(ctx.em, userId, input.isServiceAdmin));
    },
  }),
  viewerUpdate: t.field({
    type: UserPayload,
    args: { input: t.arg({ type: UpdateUserInput, required: true, description: 'What to change.' }) },
    description: 'Changes the signed-in user\'s own name, e-mail, login and theme, as `PUT /api/user`. Signed-in users (Basic credentials; no token).',
    extensions: { access: signedInUser },
    resolve: (_root, { input }, ctx) => userChange(ctx, selfId(ctx), () => updateUser(ctx.em, selfId(ctx), input)),
  }),
  viewerPasswordChange: t.field({
    type: UserPayload,
    args: { input: t.arg({ type: ViewerPasswordChangeInput, required: true, description: 'The old and the new password.' }) },
    description: 'Changes the signed-in user\'s password, as `PUT /api/user/password`; the old one stops working on every instance at once. Signed-in users (Basic credentials; no token).',
    extensions: { access: signedInUser },
    resolve: (_root, { input }, ctx) => userChange(ctx, selfId(ctx), () => changeOwnPassword(ctx.em, selfId(ctx), input.oldPassword, input.newPassword)),
  }),
  userOrganizationSwitch: t.field({
    type: UserPayload,
    args: {
      id: t.arg.id({ required: true, description: idArg }),
      organizationId: t.arg.id({ required: true, description: 'One of the user\'s orgs (`Organization.id`).' }),
    },
    description: 'Makes an org of a user the one its later requests act in when they name none, as `POST /api/users/:id/using/:orgId`; a user error (`Not a valid organization`) '
      + 'when the user is not a member of it. Server admins only (users:write).',
    extensions: { access: serverAdminFor('users:write') },
    resolve: (_root, { id, organizationId }, ctx) => {
      const userId = rowId(id, 'User');
      const orgId = rowId(organizationId, 'Organization');
      return userChange(ctx, userId, () => setCurrentOrg(ctx.em, userId, orgId));
    },
  }),
  viewerOrganizationSwitch: t.field({
    type: UserPayload,
    args: { organizationId: t.arg.id({ required: true, description: 'One of the signed-in user\'s orgs (`Organization.id`).' }) },
    description: 'Makes an org of the signed-in user the one its later requests act in when they name none, as `POST /api/user/using/:id` (this request keeps its org). '
      + 'Signed-in users (Basic credentials; no token).',
    extensions: { access: signedInUser },
    resolve: (_root, { organizationId }, ctx) => {
      const orgId = rowId(organizationId, 'Organization');
      return userChange(ctx, selfId(ctx), () => setCurrentOrg(ctx.em, selfId(ctx), orgId));
    },
  }),
}));
