import { builder, type FieldsOf } from '../../builder.ts';
import { serverAdminFor, signedInUser } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import { MESSAGES } from '../../../errors/messages.ts';
import {
  ageOf, avatarUrl, changeOwnPassword, getUserProfile, lookupUserProfile, searchUsers, setCurrentOrg,
  updateUser, userOrgs, type UserOrg, type UserProfile, type UserSearchHit, type UserSearchPage,
} from '../../../services/user-profiles.ts';
import { MessageType } from '../message.ts';

/** Who may read users other than oneself: server admins (the user itself reads its own through `viewer`). */
export const USERS_READ = serverAdminFor('users:read');

/** Who may call each root field; REST rows running these fields declare the same rules. */
const USER_ACCESS = {
  read: USERS_READ,
  write: serverAdminFor('users:write'),
  self: signedInUser,
};
const { read, write, self } = USER_ACCESS;

/** The signed-in user's id (the `self` rule admits users only). */
const selfId = (ctx: RequestContext): number => ctx.caller.userId!;

/** Go's zero time, which the original reports for a user never seen. */
const NEVER = '0001-01-01T00:00:00Z';

export function avatarOf(ctx: RequestContext, email: string): string {
  const { rootUrl } = ctx.services.settings.server;
  return avatarUrl(email, { disableGravatar: ctx.services.settings.security.disableGravatar, subPath: new URL(rootUrl).pathname.replace(/\/$/, '') });
}

/** The fields a user shows, but its id: shared by the REST shape and the graph's node. */
export const userProfileFields = (t: FieldsOf<UserProfile>) => ({
  uid: t.exposeString('uid', { description: 'Stable string identifier, assigned by the server.' }),
  email: t.exposeString('email', { description: 'Unique, case-insensitively.' }),
  name: t.exposeString('name', { description: 'Display name.' }),
  login: t.exposeString('login', { description: 'Sign-in name; unique, case-insensitively, also against e-mails.' }),
  theme: t.exposeString('theme', { description: 'UI theme preference; empty for the default.' }),
  orgId: t.int({ nullable: true, description: 'The org the user acts in when a request names none; null when it belongs to no org.', resolve: (u) => u.orgId }),
  isServiceAdmin: t.exposeBoolean('isGrafanaAdmin', { description: 'Holds the server-admin permission (`isGrafanaAdmin` in the REST API).' }),
  isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled users cannot sign in.' }),
  isExternal: t.boolean({ description: 'Always false: users are managed here, not synced from an external provider.', resolve: () => false }),
  isExternallySynced: t.boolean({ description: 'Always false (no external provider).', resolve: () => false }),
  isGrafanaAdminExternallySynced: t.boolean({ description: 'Always false (no external provider).', resolve: () => false }),
  authLabels: t.stringList({ description: 'External providers the user signs in with; always empty.', resolve: () => [] }),
  updatedAt: t.string({ description: 'Last change (ISO 8601).', resolve: (u) => u.updatedAt.toISOString() }),
  createdAt: t.string({ description: 'Creation (ISO 8601).', resolve: (u) => u.createdAt.toISOString() }),
  avatarUrl: t.string({ description: 'Path of the user\'s avatar image.', resolve: (u, _args, ctx) => avatarOf(ctx, u.email) }),
});

export const UserProfileType = builder.objectRef<UserProfile>('UserProfile').implement({
  description: 'A user (never a service account) with its server-wide attributes.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The user\'s id.' }),
    ...userProfileFields(t),
  }),
});

const UserSearchHitType = builder.objectRef<UserSearchHit>('UserSearchHit').implement({
  description: 'A user found by a search.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The user\'s id.' }),
    uid: t.exposeString('uid', { description: 'Stable string identifier, assigned by the server.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    login: t.exposeString('login', { description: 'Sign-in name.' }),
    email: t.exposeString('email', { description: 'E-mail address.' }),
    avatarUrl: t.string({ description: 'Path of the user\'s avatar image.', resolve: (u, _args, ctx) => avatarOf(ctx, u.email) }),
    isServiceAdmin: t.exposeBoolean('isAdmin', { description: 'Holds the server-admin permission (`isAdmin` in the REST API).' }),
    isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled users cannot sign in.' }),
    lastSeenAt: t.string({ description: 'Last activity (ISO 8601); `0001-01-01T00:00:00Z` when never seen.', resolve: (u) => u.lastSeenAt?.toISOString() ?? NEVER }),
    lastSeenAtAge: t.string({ description: 'How long ago, e.g. `10 years`, `< 1 minute`; `?` when never seen.', resolve: (u) => ageOf(u.lastSeenAt) }),
    authLabels: t.stringList({ description: 'Always empty (no external provider).', resolve: () => [] }),
  }),
});

const UserSearchPageType = builder.objectRef<UserSearchPage>('UserSearchPage').implement({
  description: 'One page of a user search.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount', { description: 'Matches on all pages.' }),
    users: t.field({ type: [UserSearchHitType], description: 'This page\'s users, by login then e-mail.', resolve: (p) => p.users }),
    page: t.exposeInt('page', { description: 'This page\'s number, from 1.' }),
    perPage: t.exposeInt('perPage', { description: 'Page size.' }),
  }),
});

export const UserOrgType = builder.objectRef<UserOrg>('UserOrganization').implement({
  description: 'An org a user belongs to, with its role there.',
  fields: (t) => ({
    orgId: t.exposeInt('orgId', { description: 'The org\'s id.' }),
    name: t.exposeString('name', { description: 'The org\'s name.' }),
    role: t.exposeString('role', { description: '`None` (a member with no permission of its own), `Viewer`, `Editor` or `Admin`.' }),
  }),
});

export const UpdateUserInput = builder.inputType('UpdateUserInput', {
  description: 'New attributes of a user. The login defaults to the e-mail; a field left empty keeps its value.',
  fields: (t) => ({
    name: t.string({ required: false, description: 'Display name.' }),
    email: t.string({ required: false, description: 'Unique, case-insensitively.' }),
    login: t.string({ required: false, description: 'Unique, case-insensitively, also against e-mails.' }),
    theme: t.string({ required: false, description: 'UI theme preference.' }),
  }),
});

builder.queryFields((t) => {
  const paging = () => ({
    query: t.arg.string({ required: false, description: 'Matches logins, e-mails and names containing it, in any case.' }),
    page: t.arg.int({ required: false, description: 'Page number from 1 (default 1).' }),
    perPage: t.arg.int({ required: false, description: 'Page size; 0 or absent means 1000.' }),
  });
  return {
    users: t.field({
      deprecationReason: 'Use `allUsers`, a connection.',
      type: [UserSearchHitType],
      args: paging(),
      description: 'Users by login then e-mail, one page at a time (a page past the end is empty), as `GET /api/users`. Server admins only (users:read).',
      extensions: { access: read },
      resolve: async (_root, args, ctx) => (await searchUsers(ctx.em, args)).users,
    }),
    userSearch: t.field({
      deprecationReason: 'Use `allUsers`, a connection with `totalCount`.',
      type: UserSearchPageType,
      args: paging(),
      description: 'Like `users`, with the total number of matches, as `GET /api/users/search`. Server admins only (users:read).',
      extensions: { access: read },
      resolve: (_root, args, ctx) => searchUsers(ctx.em, args),
    }),
    userByLoginOrEmail: t.field({
      type: UserProfileType,
      args: { loginOrEmail: t.arg.string({ required: false, description: 'A login, or else an e-mail, in any case.' }) },
      description: 'A user by login or e-mail, as `GET /api/users/lookup`. Server admins only (users:read).',
      extensions: { access: read },
      resolve: (_root, { loginOrEmail }, ctx) => lookupUserProfile(ctx.em, loginOrEmail),
    }),
    userOrganizations: t.field({
      deprecationReason: 'Use `organizations` of a `User`, a connection with the role on each edge.',
      type: [UserOrgType],
      args: { id: t.arg.int({ required: true, description: 'The user\'s id.' }) },
      description: 'The orgs a user belongs to, by name, as `GET /api/users/:id/orgs`. Server admins only (users:read).',
      extensions: { access: read },
      resolve: (_root, { id }, ctx) => userOrgs(ctx.em, id),
    }),
    viewerOrganizations: t.field({
      deprecationReason: 'Use `viewer.organizations`, a connection with the role on each edge.',
      type: [UserOrgType],
      description: 'The signed-in user\'s orgs, by name, as `GET /api/user/orgs`. Signed-in users (Basic credentials; tokens are refused).',
      extensions: { access: self },
      resolve: (_root, _args, ctx) => userOrgs(ctx.em, selfId(ctx)),
    }),
  };
});

const userIdArg = 'The user\'s id.';
const selfOnly = 'Signed-in users (Basic credentials; tokens are refused).';

builder.mutationFields((t) => ({
  updateViewer: t.field({
    deprecationReason: 'Use `viewerUpdate`: its payload carries the user\'s node and `userErrors`.',
    type: MessageType,
    args: { input: t.arg({ type: UpdateUserInput, required: true, description: 'What to change.' }) },
    description: `Changes the signed-in user's own name, e-mail, login and theme, as \`PUT /api/user\`. ${selfOnly}`,
    extensions: { access: self },
    resolve: async (_root, { input }, ctx) => {
      await updateUser(ctx.em, selfId(ctx), input);
      return { message: MESSAGES.user.updated };
    },
  }),
  changeViewerPassword: t.field({
    deprecationReason: 'Use `viewerPasswordChange`: a wrong old password is a user error there.',
    type: MessageType,
    args: {
      oldPassword: t.arg.string({ required: false, description: 'The current password; must match (401 otherwise).' }),
      newPassword: t.arg.string({ required: false, description: 'At least 4 characters.' }),
      confirmNew: t.arg.string({ required: false, description: 'Accepted and ignored, as by the original server.' }),
    },
    description: `Changes the signed-in user's password, as \`PUT /api/user/password\`; the old one stops working on every instance at once. ${selfOnly}`,
    extensions: { access: self },
    resolve: async (_root, { oldPassword, newPassword }, ctx) => {
      await changeOwnPassword(ctx.em, selfId(ctx), oldPassword ?? '', newPassword ?? '');
      return { message: MESSAGES.user.passwordChanged };
    },
  }),
  switchViewerOrganization: t.field({
    deprecationReason: 'Use `viewerOrganizationSwitch` with an `Organization` id.',
    type: MessageType,
    args: { orgId: t.arg.int({ required: true, description: 'One of the signed-in user\'s orgs.' }) },
    description: `Makes an org of the signed-in user the one its later requests act in when they name none, as \`POST /api/user/using/:id\`. ${selfOnly}`,
    extensions: { access: self },
    resolve: async (_root, { orgId }, ctx) => {
      await setCurrentOrg(ctx.em, selfId(ctx), orgId);
      return { message: MESSAGES.user.orgChanged };
    },
  }),
  switchUserOrganization: t.field({
    deprecationReason: 'Use `userOrganizationSwitch` with `User` and `Organization` ids.',
    type: MessageType,
    args: { id: t.arg.int({ required: true, description: userIdArg }), orgId: t.arg.int({ required: true, description: 'One of the user\'s orgs.' }) },
    description: 'Makes an org of a user the one its later requests act in when they name none, as `POST /api/users/:id/using/:orgId`; 401 `Not a valid organization` '
      + 'when the user is not a member of it (or does not exist). Server admins only (users:write).',
    extensions: { access: write },
    resolve: async (_root, { id, orgId }, ctx) => {
      await setCurrentOrg(ctx.em, id, orgId);
      return { message: MESSAGES.user.orgChanged };
    },
  }),
}));
