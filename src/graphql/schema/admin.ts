import { builder } from '../builder.ts';
import { requireServerAdmin } from '../context.ts';
import { settingsBag } from '../../config/redact.ts';
import { adminStats, type AdminStats } from '../../services/stats.ts';
import { createUser, deleteUser, updatePassword, updatePermissions } from '../../services/users.ts';

const AdminStatsType = builder.objectRef<AdminStats>('AdminStats').implement({
  description: 'Usage counters of the whole server (all orgs).',
  fields: (t) => ({
    userCount: t.int({ description: 'Users (service accounts excluded).', resolve: (s) => s.user_count }),
    orgCount: t.int({ resolve: (s) => s.org_count }),
    dashboardCount: t.int({ description: 'Dashboards, folders excluded.', resolve: (s) => s.dashboard_count }),
    dbSnapshotCount: t.int({ resolve: (s) => s.db_snapshot_count }),
    dbTagCount: t.int({ description: 'Distinct dashboard tags.', resolve: (s) => s.db_tag_count }),
    dataSourceCount: t.int({ resolve: (s) => s.data_source_count }),
    playlistCount: t.int({ resolve: (s) => s.playlist_count }),
    starredDbCount: t.int({ description: 'Dashboards starred by at least one user.', resolve: (s) => s.starred_db_count }),
    serviceAdminCount: t.int({ description: 'Users holding the server-admin permission.', resolve: (s) => s.service_admin_count }),
  }),
});

const Message = builder.objectRef<{ message: string }>('Message').implement({
  description: 'A confirmation.',
  fields: (t) => ({ message: t.exposeString('message') }),
});

const CreatedUser = builder.objectRef<{ id: number; message: string }>('CreatedUser').implement({
  description: 'The id of a user just created.',
  fields: (t) => ({ id: t.exposeInt('id'), message: t.exposeString('message') }),
});

const AdminCreateUserInput = builder.inputType('AdminCreateUserInput', {
  description: 'A new global user. The login defaults to the e-mail.',
  fields: (t) => ({
    name: t.string({ required: false }),
    email: t.string({ required: false }),
    login: t.string({ required: false }),
    password: t.string({ required: false, description: 'At least 4 characters.' }),
    orgId: t.int({ required: false, description: 'The org to join; defaults to `[users] auto_assign_org_id`.' }),
  }),
});

builder.queryFields((t) => ({
  adminSettings: t.field({
    type: 'JSONObject',
    description: 'The effective settings: section -> key -> string value, secrets masked. Server admins only (Basic auth).',
    resolve: (_root, _args, ctx) => {
      requireServerAdmin(ctx);
      return settingsBag(ctx.services.settings);
    },
  }),
  adminStats: t.field({
    type: AdminStatsType,
    description: 'Usage counters. Server admins only (Basic auth).',
    resolve: (_root, _args, ctx) => {
      requireServerAdmin(ctx);
      return adminStats(ctx.em);
    },
  }),
}));

builder.mutationFields((t) => ({
  adminCreateUser: t.field({
    type: CreatedUser,
    args: { input: t.arg({ type: AdminCreateUserInput, required: true }) },
    description: 'Creates a global user in the default (or given) org with the auto-assign role.',
    resolve: async (_root, { input }, ctx) => {
      requireServerAdmin(ctx);
      const user = await createUser(ctx.em, input, ctx.services.settings.users);
      return { id: user.id, message: 'User created' };
    },
  }),
  adminUpdateUserPassword: t.field({
    type: Message,
    args: { id: t.arg.int({ required: true }), password: t.arg.string({ required: true }) },
    description: 'Sets a user\'s password; the old one stops working at once on every instance.',
    resolve: async (_root, { id, password }, ctx) => {
      requireServerAdmin(ctx);
      await updatePassword(ctx.em, id, password);
      return { message: 'User password updated' };
    },
  }),
  adminUpdateUserPermissions: t.field({
    type: Message,
    args: {
      id: t.arg.int({ required: true }),
      isServiceAdmin: t.arg.boolean({ required: false, description: 'Grant (true) or revoke (false) the server-admin permission.' }),
      isGrafanaAdmin: t.arg.boolean({ required: false, description: 'The brand-named alias of `isServiceAdmin`, accepted for legacy clients.' }),
    },
    description: 'Grants or revokes the server-admin permission. The last server admin cannot be demoted.',
    resolve: async (_root, args, ctx) => {
      requireServerAdmin(ctx);
      await updatePermissions(ctx.em, args.id, Boolean(args.isServiceAdmin ?? args.isGrafanaAdmin ?? false));
      return { message: 'User permissions updated' };
    },
  }),
  adminDeleteUser: t.field({
    type: Message,
    args: { id: t.arg.int({ required: true }) },
    description: 'Deletes a user with its memberships, stars and tokens.',
    resolve: async (_root, { id }, ctx) => {
      requireServerAdmin(ctx);
      await deleteUser(ctx.em, id);
      return { message: 'User deleted' };
    },
  }),
}));
