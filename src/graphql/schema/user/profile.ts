import { builder, type FieldsOf } from '../../builder.ts';
import { serverAdminFor } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import {
  ageOf, avatarUrl, searchUsers, type UserProfile, type UserSearchHit, type UserSearchPage,
} from '../../../services/user-profiles.ts';

/** Who may read users other than oneself: server admins (the user itself reads its own through `viewer`). */
export const USERS_READ = serverAdminFor('users:read');

/** Who may call the user search and lookup root fields. */
const read = USERS_READ;

/** Go's zero time, which the original reports for a user never seen. */
const NEVER = '0001-01-01T00:00:00Z';

export function avatarOf(ctx: RequestContext, email: string): string {
  const { rootUrl } = ctx.services.settings.server;
  return avatarUrl(email, { disableGravatar: ctx.services.settings.security.disableGravatar, subPath: new URL(rootUrl).pathname.replace(/\/$/, '') });
}

/** The fields of the graph's user, but its ids (REST's legacy constant fields are the REST layer's: src/rest/users.ts). */
export const userProfileFields = (t: FieldsOf<UserProfile>) => ({
  uid: t.exposeString('uid', { description: 'Stable string identifier, assigned by the server.' }),
  email: t.exposeString('email', { description: 'Unique, case-insensitively.' }),
  name: t.exposeString('name', { description: 'Display name.' }),
  login: t.exposeString('login', { description: 'Sign-in name; unique, case-insensitively, also against e-mails.' }),
  theme: t.exposeString('theme', { description: 'UI theme preference; empty for the default.' }),
  orgId: t.int({ nullable: true, description: 'The org the user acts in when a request names none; null when it belongs to no org.', resolve: (u) => u.orgId }),
  isServiceAdmin: t.exposeBoolean('isGrafanaAdmin', { description: 'Holds the server-admin permission (`isGrafanaAdmin` in the REST API).' }),
  isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled users cannot sign in.' }),
  updatedAt: t.string({ description: 'Last change (ISO 8601).', resolve: (u) => u.updatedAt.toISOString() }),
  createdAt: t.string({ description: 'Creation (ISO 8601).', resolve: (u) => u.createdAt.toISOString() }),
  avatarUrl: t.string({ description: 'Path of the user\'s avatar image.', resolve: (u, _args, ctx) => avatarOf(ctx, u.email) }),
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
      type: [UserSearchHitType],
      args: paging(),
      description: 'Users by login then e-mail, one page at a time (a page past the end is empty), as `GET /api/users`. Server admins only (users:read).',
      // REST's own paging (page numbers, a page past the end, perPage up to 1000 by default): no connection form.
      extensions: { access: read, restOnly: true },
      resolve: async (_root, args, ctx) => (await searchUsers(ctx.em, args)).users,
    }),
    userSearch: t.field({
      type: UserSearchPageType,
      args: paging(),
      description: 'Like `users`, with the total number of matches, as `GET /api/users/search`. Server admins only (users:read).',
      extensions: { access: read, restOnly: true },
      resolve: (_root, args, ctx) => searchUsers(ctx.em, args),
    }),
  };
});

