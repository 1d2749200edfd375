import { builder } from '../builder.ts';
import { orgMember } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { MESSAGES } from '../../errors/messages.ts';
import { allows } from '../../services/data-source-access.ts';
import type { DataSourceRecord } from '../../services/data-sources.ts';
import {
  callerLevel, listPermissions, PERMISSIONS_DESCRIPTION, setPermission, setPermissions, type Assignee, type PermissionEntry,
} from '../../services/data-source-permissions.ts';
import { DataSourceType } from './data-source.ts';
import { MessageType } from './message.ts';
import { avatarOf } from './user-profile.ts';

/**
 * Who may query, edit or administer each data source (the original's
 * `/api/access-control/datasources/...`). Every member passes the gate; the data source's own
 * Admin permission (org Admins always hold it) is checked when it is loaded.
 */
export const DATA_SOURCE_PERMISSION_ACCESS = {
  read: orgMember('datasources.permissions:read'),
  write: orgMember('datasources.permissions:write'),
};
const { read, write } = DATA_SOURCE_PERMISSION_ACCESS;

const PermissionEntryType = builder.objectRef<PermissionEntry>('DataSourcePermission').implement({
  description: 'One grant on a data source: to a user, a team or a built-in role, at Query, Edit or Admin.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: '0 for the org Admins\' own, which is not managed.' }),
    roleName: t.exposeString('roleName', { description: 'The managed role holding the grant (`managed:users:<id>:permissions`, ...), or `basic:admin` for the org Admins\' own.' }),
    isManaged: t.exposeBoolean('isManaged', { description: 'False for the org Admins\' own, which cannot be changed.' }),
    isInherited: t.exposeBoolean('isInherited', { description: 'Always false: grants are made on the data source itself.' }),
    isServiceAccount: t.exposeBoolean('isServiceAccount', { description: 'Whether the user granted is a service account.' }),
    userId: t.exposeInt('userId', { nullable: true, description: 'The user granted; null for a team or role grant.' }),
    userLogin: t.exposeString('userLogin', { nullable: true, description: 'Its login.' }),
    userAvatarUrl: t.string({ nullable: true, description: 'Path of its avatar image.', resolve: (p, _args, ctx) => (p.userId === null ? null : avatarOf(ctx, p.userEmail ?? '')) }),
    teamId: t.exposeInt('teamId', { nullable: true, description: 'The team granted; null for a user or role grant.' }),
    teamAvatarUrl: t.string({ nullable: true, description: 'Path of its avatar image.', resolve: (p, _args, ctx) => (p.teamId === null ? null : avatarOf(ctx, p.teamEmail || p.team || '')) }),
    team: t.exposeString('team', { nullable: true, description: 'Its name.' }),
    builtInRole: t.exposeString('builtInRole', { nullable: true, description: 'The org role granted (`Viewer`, `Editor`, `Admin`); null for a user or team grant.' }),
    actions: t.stringList({ description: 'The actions the level allows (`datasources:query`, `datasources:write`, ...).', resolve: (p) => [...p.actions] }),
    permission: t.exposeString('permission', { description: '`Query`, `Edit` or `Admin`.' }),
  }),
});

const PermissionsDescriptionType = builder.objectRef<typeof PERMISSIONS_DESCRIPTION>('DataSourcePermissionsDescription').implement({
  description: 'What data source permissions can be granted, and to whom.',
  fields: (t) => ({
    assignments: t.field({ type: 'JSONObject', description: 'Who can be granted: `users`, `serviceAccounts`, `teams`, `builtInRoles`.', resolve: (d) => d.assignments }),
    permissions: t.stringList({ description: 'The levels: `Query`, `Edit`, `Admin`.', resolve: (d) => d.permissions }),
  }),
});

const PermissionInput = builder.inputType('DataSourcePermissionInput', {
  description: 'One grant: exactly one of `userId`, `teamId`, `builtInRole`, and a `permission` (empty removes it).',
  fields: (t) => ({
    userId: t.int({ required: false, description: 'A user (or service account) of the org.' }),
    teamId: t.int({ required: false, description: 'A team of the org.' }),
    builtInRole: t.string({ required: false, description: '`Viewer`, `Editor` or `Admin`.' }),
    permission: t.string({ required: false, description: '`Query`, `Edit` or `Admin`; empty removes the grant.' }),
  }),
});

builder.objectField(DataSourceType, 'permissions', (t) => t.field({
  type: [PermissionEntryType],
  nullable: true,
  description: 'Who may query, edit or administer it; null unless the caller may administer it.',
  resolve: async (ds: DataSourceRecord, _args, ctx) =>
    allows(await callerLevel(ctx.em, ctx.caller, ds.id), 'admin') ? listPermissions(ctx.em, ds.orgId, ds.id) : null,
}));

/** The data source by uid, if the caller may administer it (404 / 403 otherwise). */
const administered = (ctx: RequestContext, uid: string) => ctx.services.dataSources.getFor(ctx.em, ctx.caller, { uid }, 'admin');

async function set(ctx: RequestContext, uid: string, assignee: Assignee, permission: string | null | undefined) {
  const ds = await administered(ctx, uid);
  const level = await setPermission(ctx.em, ds.orgId, ds.id, assignee, permission);
  return { message: level === 0 ? MESSAGES.permission.removed : MESSAGES.permission.updated };
}

const uidArg = 'The data source\'s uid.';
const permissionArg = '`Query`, `Edit` or `Admin`; empty removes the grant.';
const RULE = {
  read: 'Org members of any role (`None` included) pass the gate (datasources.permissions:read); the data source\'s permissions then require Admin (org Admins by default).',
  write: 'Org members of any role (`None` included) pass the gate (datasources.permissions:write); the data source\'s permissions then require Admin (org Admins by default).',
};

builder.queryFields((t) => ({
  dataSourcePermissions: t.field({
    type: [PermissionEntryType],
    args: { uid: t.arg.string({ required: true, description: uidArg }) },
    description: `Who may query, edit or administer a data source, as \`GET /api/access-control/datasources/:uid\`. ${RULE.read}`,
    extensions: { access: read },
    resolve: async (_root, { uid }, ctx) => {
      const ds = await administered(ctx, uid);
      return listPermissions(ctx.em, ds.orgId, ds.id);
    },
  }),
  dataSourcePermissionsDescription: t.field({
    type: PermissionsDescriptionType,
    description: 'What can be granted on data sources, and to whom, as `GET /api/access-control/datasources/description`. Org members of any role (`None` included) (datasources.permissions:read).',
    extensions: { access: read },
    resolve: () => PERMISSIONS_DESCRIPTION,
  }),
}));

builder.mutationFields((t) => ({
  setDataSourceUserPermission: t.field({
    type: MessageType,
    args: {
      uid: t.arg.string({ required: true, description: uidArg }),
      userId: t.arg.int({ required: true, description: 'A user (or service account) of the org.' }),
      permission: t.arg.string({ description: permissionArg }),
    },
    description: `Grants a user a level on a data source, or removes its grant, as \`POST /api/access-control/datasources/:uid/users/:userId\`. ${RULE.write}`,
    extensions: { access: write },
    resolve: (_root, { uid, userId, permission }, ctx) => set(ctx, uid, { userId }, permission),
  }),
  setDataSourceTeamPermission: t.field({
    type: MessageType,
    args: {
      uid: t.arg.string({ required: true, description: uidArg }),
      teamId: t.arg.int({ required: true, description: 'A team of the org.' }),
      permission: t.arg.string({ description: permissionArg }),
    },
    description: `Grants a team a level on a data source, or removes its grant, as \`POST /api/access-control/datasources/:uid/teams/:teamId\`. ${RULE.write}`,
    extensions: { access: write },
    resolve: (_root, { uid, teamId, permission }, ctx) => set(ctx, uid, { teamId }, permission),
  }),
  setDataSourceBuiltInRolePermission: t.field({
    type: MessageType,
    args: {
      uid: t.arg.string({ required: true, description: uidArg }),
      builtInRole: t.arg.string({ required: true, description: '`Viewer`, `Editor` or `Admin`.' }),
      permission: t.arg.string({ description: permissionArg }),
    },
    description: `Grants an org role a level on a data source, or removes its grant, as \`POST /api/access-control/datasources/:uid/builtInRoles/:builtInRole\`. ${RULE.write}`,
    extensions: { access: write },
    resolve: (_root, { uid, builtInRole, permission }, ctx) => set(ctx, uid, { builtInRole }, permission),
  }),
  setDataSourcePermissions: t.field({
    type: MessageType,
    args: {
      uid: t.arg.string({ required: true, description: uidArg }),
      permissions: t.arg({ type: [PermissionInput], description: 'The grants to set; those not listed stay as they are.' }),
    },
    description: `Sets several grants on a data source at once, as \`POST /api/access-control/datasources/:uid\`. ${RULE.write}`,
    extensions: { access: write },
    resolve: async (_root, { uid, permissions }, ctx) => {
      const ds = await administered(ctx, uid);
      await setPermissions(ctx.em, ds.orgId, ds.id, permissions ?? []);
      return { message: MESSAGES.permission.allUpdated };
    },
  }),
}));
