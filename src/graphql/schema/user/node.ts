import { listUserProfiles, lookupUserProfile, type UserProfile } from '../../../services/user-profiles.ts';
import { builder } from '../../builder.ts';
import { nodeKey } from '../../node-ids.ts';
import { pageOf } from '../../paging.ts';
import { ActorInterface } from '../actor.ts';
import { connection } from '../connections.ts';
import { userById } from './loaders.ts';
import { userProfileFields, USERS_READ } from './profile.ts';


export const User = builder.node(builder.objectRef<UserProfile>('User'), {
  description: 'A user (never a service account). Seen by the user itself and server admins (users:read).',
  interfaces: [ActorInterface],
  id: nodeKey((u) => u.id),
  loadMany: (keys, ctx) => Promise.all(keys.map((key) => userById(ctx).load(Number(key)))),
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The numeric id REST paths take (`/api/users/:id`).' }),
    ...userProfileFields(t),
  }),
});

export const UserConnection = connection('UserConnection', User, 'users');

builder.queryFields((t) => ({
  allUsers: t.connection({
    type: User,
    description: 'Every user (never a service account) by login. Server admins only (users:read).',
    args: { query: t.arg.string({ required: false, description: 'Only users whose login, e-mail or name contains it, in any case.' }) },
    extensions: { access: USERS_READ },
    resolve: async (_root, args, ctx) => pageOf('Query.allUsers', await listUserProfiles(ctx.em, args.query ?? ''), args),
  }, UserConnection),
  userByLoginOrEmail: t.field({
    type: User,
    args: { loginOrEmail: t.arg.string({ required: false, description: 'A login, or else an e-mail, in any case.' }) },
    description: 'A user by login or e-mail, as `GET /api/users/lookup`. Server admins only (users:read).',
    extensions: { access: USERS_READ },
    resolve: (_root, { loginOrEmail }, ctx) => lookupUserProfile(ctx.em, loginOrEmail),
  }),
}));
