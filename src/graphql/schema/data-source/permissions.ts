import { orgMember } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import { allows } from '../../../services/data-source-access.ts';
import type { DataSourceRef } from '../../../services/data-sources.ts';
import {
  callerLevel, listPermissions, PERMISSIONS_DESCRIPTION, setPermission, setPermissions, type Assignee, type PermissionEntry,
} from '../../../services/data-source-permissions.ts';
import { orgActors } from '../../access.ts';
import { builder } from '../../builder.ts';
import { decodeNodeId, fitsInt4, keyNumbers } from '../../node-ids.ts';
import { databaseId, mutate, rowId, UserErrorType, type Payload } from '../payloads.ts';
import { avatarOf } from '../user/profile.ts';
import { DataSourceType, loadDataSources, type DataSourceNode } from './node.ts';

/**
 * Who may query, edit or administer each data source (the original's
 * `/api/access-control/datasources/...`): its grants on the node, and one mutation per kind of
 * change. Every member of the org passes the gate; the data source's own Admin permission (org
 * Admins always hold it) is checked when it is loaded.
 */
export const PERMISSIONS_READ = orgMember('datasources.permissions:read');
export const PERMISSIONS_WRITE = orgMember('datasources.permissions:write');

const PermissionEntryType = builder.objectRef<PermissionEntry>('DataSourcePermission').implement({
  description: 'One grant on a data source: to a user, a team or a built-in role, at Query, Edit or Admin.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: '0 for the org Admins\' own, which is not managed.' }),
    roleName: t.exposeString('roleName', { description: 'The managed role holding the grant (`managed:users:<id>:permissions`, ...), or `basic:admin` for the org Admins\' own.' }),
    isManaged: t.exposeBoolean('isManaged', { description: 'False for the org Admins\' own, which cannot be changed.' }),
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

builder.objectField(DataSourceType, 'permissions', (t) => t.field({
  type: [PermissionEntryType],
  nullable: true,
  description: 'Who may query, edit or administer it (`GET /api/access-control/datasources/:uid`): users by login, teams by name, built-in roles, then the org Admins\' own. '
    + 'Org members of any role (`None` included) (datasources.permissions:read) whom its permissions let administer it (org Admins by default); null for anyone else.',
  extensions: { access: PERMISSIONS_READ },
  resolve: async (ds, _args, ctx) => {
    const [caller] = await orgActors(ctx, [ds.orgId]);
    return caller && allows(await callerLevel(ctx.em, caller, ds.databaseId), 'admin') ? listPermissions(ctx.em, ds.orgId, ds.databaseId) : null;
  },
}));

builder.queryField('dataSourcePermissionsDescription', (t) => t.field({
  type: PermissionsDescriptionType,
  description: 'What can be granted on data sources, and to whom, as `GET /api/access-control/datasources/description`. Org members of any role (`None` included) (datasources.permissions:read).',
  extensions: { access: PERMISSIONS_READ },
  resolve: () => PERMISSIONS_DESCRIPTION,
}));

const PermissionInput = builder.inputType('DataSourcePermissionInput', {
  description: 'One grant: exactly one of `userId`, `teamId`, `builtInRole`, and a `permission` (empty removes it).',
  fields: (t) => ({
    userId: t.id({ required: false, description: 'A user of the org (`User.id`), or a service account (`ServiceAccount.id`).' }),
    teamId: t.id({ required: false, description: 'A team of the org (`Team.id`).' }),
    builtInRole: t.string({ required: false, description: '`Viewer` or `Editor` (the org Admins\' own cannot be changed).' }),
    permission: t.string({ required: false, description: '`Query`, `Edit` or `Admin`; empty (or absent) removes the grant.' }),
  }),
});

const PermissionsInput = builder.inputType('DataSourcePermissionsInput', {
  description: 'Several grants at once; those not listed stay as they are.',
  fields: (t) => ({ permissions: t.field({ type: [PermissionInput], required: false, description: 'The grants to set.' }) }),
});

const PermissionsPayload = builder.objectRef<Payload<{ dataSource: DataSourceNode | null }>>('DataSourcePermissionsPayload').implement({
  description: 'The data source whose grants changed (its `permissions` as they are now), or why they did not.',
  fields: (t) => ({
    dataSource: t.field({ type: DataSourceType, nullable: true, description: 'The data source; null when `userErrors` says why not.', resolve: (p) => p.dataSource }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

/**
 * The user row a global id names: a user's or a service account's (both are users to grant to);
 * one of another type (or past int4) names none, and is refused as an unknown user is.
 */
function userRowId(globalId: string | number): number {
  const { typename, id } = decodeNodeId(String(globalId));
  const [n] = keyNumbers(id);
  return (typename === 'User' || typename === 'ServiceAccount') && n !== undefined && fitsInt4(n) && !id.includes(':') ? n : -1;
}

/** One grant of the input, as the service takes it: ids given that name nothing are still given (and refused as unknown). */
function grant(item: { userId?: string | number | null; teamId?: string | number | null; builtInRole?: string | null; permission?: string | null }) {
  return {
    userId: item.userId == null ? null : userRowId(item.userId),
    teamId: item.teamId == null ? null : (databaseId(item.teamId, 'Team') ?? -1),
    builtInRole: item.builtInRole ?? null,
    permission: item.permission ?? null,
  };
}

const KEYS = {
  dataSourceId: 'The data source\'s global id (`DataSource.id`), in the org the request acts in.',
  uid: 'Or its uid.',
};

/** The data source a mutation names, if the caller may administer it (404 / 403 otherwise). */
async function administered(ctx: RequestContext, keys: { dataSourceId?: string | number | null; uid?: string | null }) {
  const ref: DataSourceRef = keys.dataSourceId != null ? { id: rowId(keys.dataSourceId, 'DataSource') } : { uid: keys.uid ?? '' };
  return ctx.services.dataSources.getFor(ctx.em, ctx.caller, ref, 'admin');
}

const readBack = (ctx: RequestContext) => async (id: number) => ({ dataSource: (await loadDataSources(ctx, [String(id)]))[0] ?? null });

builder.mutationFields((t) => ({
  dataSourcePermissionSet: t.field({
    type: PermissionsPayload,
    args: {
      dataSourceId: t.arg.id({ required: false, description: KEYS.dataSourceId }),
      uid: t.arg.string({ required: false, description: KEYS.uid }),
      input: t.arg({ type: PermissionInput, required: true, description: 'The grant: to one user, team or built-in role.' }),
    },
    description: 'Grants a user, a team or a built-in role a level on a data source, or removes its grant, as `POST /api/access-control/datasources/:uid/users/:userId` '
      + '(`/teams/:teamId`, `/builtInRoles/:builtInRole`). Org members of any role (`None` included) pass the gate (datasources.permissions:write); the data source\'s permissions then require Admin (org Admins by default).',
    extensions: { access: PERMISSIONS_WRITE },
    resolve: async (_root, { dataSourceId, uid, input }, ctx) => {
      const { userId, teamId, builtInRole, permission } = grant(input);
      const assignee: Assignee = userId !== null ? { userId } : teamId !== null ? { teamId } : { builtInRole: builtInRole ?? '' };
      return mutate(ctx, async () => {
        const ds = await administered(ctx, { dataSourceId, uid });
        await setPermission(ctx.em, ds.orgId, ds.id, assignee, permission);
        return ds.id;
      }, readBack(ctx), { dataSource: null });
    },
  }),
  dataSourcePermissionsSet: t.field({
    type: PermissionsPayload,
    args: {
      dataSourceId: t.arg.id({ required: false, description: KEYS.dataSourceId }),
      uid: t.arg.string({ required: false, description: KEYS.uid }),
      input: t.arg({ type: PermissionsInput, required: true, description: 'The grants.' }),
    },
    description: 'Sets several grants on a data source at once, in one transaction, as `POST /api/access-control/datasources/:uid`. Org members of any role (`None` included) pass the gate '
      + '(datasources.permissions:write); the data source\'s permissions then require Admin (org Admins by default).',
    extensions: { access: PERMISSIONS_WRITE },
    resolve: async (_root, { dataSourceId, uid, input }, ctx) => {
      return mutate(ctx, async () => {
        const ds = await administered(ctx, { dataSourceId, uid });
        await setPermissions(ctx.em, ds.orgId, ds.id, (input.permissions ?? []).map(grant));
        return ds.id;
      }, readBack(ctx), { dataSource: null });
    },
  }),
}));
