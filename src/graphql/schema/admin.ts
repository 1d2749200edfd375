import { builder } from '../builder.ts';
import { serverAdmin } from '../../auth/access.ts';
import { mutate, UserErrorType, type Payload } from './payloads.ts';
import type { ProvisioningCounts } from '../../runtime.ts';
import { adminSettings } from '../../services/settings.ts';
import { adminStats, type AdminStats } from '../../services/stats.ts';

const AdminStatsType = builder.objectRef<AdminStats>('AdminStats').implement({
  description: 'Usage counters of the whole server (all orgs), computed from the stored rows.',
  fields: (t) => ({
    userCount: t.exposeInt('userCount', { description: 'Users (service accounts excluded).' }),
    orgCount: t.exposeInt('orgCount', { description: 'Organizations.' }),
    dashboardCount: t.exposeInt('dashboardCount', { description: 'Dashboards, folders excluded.' }),
    dbSnapshotCount: t.exposeInt('dbSnapshotCount', { description: 'Dashboard snapshots.' }),
    dbTagCount: t.exposeInt('dbTagCount', { description: 'Distinct dashboard tag terms.' }),
    dataSourceCount: t.exposeInt('dataSourceCount', { description: 'Data sources of every org.' }),
    playlistCount: t.exposeInt('playlistCount', { description: 'Playlists.' }),
    starredDbCount: t.exposeInt('starredDbCount', { description: 'Dashboards starred by at least one user.' }),
    serviceAdminCount: t.exposeInt('serviceAdminCount', { description: 'Users holding the server-admin permission.' }),
    starCount: t.exposeInt('starCount', { description: 'Stars (a user starring a dashboard).' }),
    alertCount: t.exposeInt('alertCount', { description: 'Alert rules.' }),
    adminCount: t.exposeInt('adminCount', { description: 'Users whose highest role in any org is Admin.' }),
    editorCount: t.exposeInt('editorCount', { description: 'Users whose highest role in any org is Editor.' }),
    viewerCount: t.exposeInt('viewerCount', { description: 'Users whose highest role in any org is Viewer.' }),
    activeUsers: t.exposeInt('activeUsers', { description: 'Users seen in the last 30 days.' }),
    activeAdmins: t.exposeInt('activeAdmins', { description: 'Of those, Admins (highest role).' }),
    activeEditors: t.exposeInt('activeEditors', { description: 'Of those, Editors (highest role).' }),
    activeViewers: t.exposeInt('activeViewers', { description: 'Of those, Viewers (highest role).' }),
    activeSessions: t.exposeInt('activeSessions', { description: 'Always 0: this server keeps no login sessions.' }),
    dailyActiveUsers: t.exposeInt('dailyActiveUsers', { description: 'Users seen in the last 24 hours.' }),
    dailyActiveAdmins: t.exposeInt('dailyActiveAdmins', { description: 'Of those, Admins (highest role).' }),
    dailyActiveEditors: t.exposeInt('dailyActiveEditors', { description: 'Of those, Editors (highest role).' }),
    dailyActiveViewers: t.exposeInt('dailyActiveViewers', { description: 'Of those, Viewers (highest role).' }),
    dailyActiveSessions: t.exposeInt('dailyActiveSessions', { description: 'Always 0: this server keeps no login sessions.' }),
    monthlyActiveUsers: t.exposeInt('monthlyActiveUsers', { description: 'Users seen since the 1st of this month.' }),
    activeDevices: t.exposeInt('activeDevices', { description: 'Always 0: this server has no anonymous access.' }),
  }),
});

type Counts = { [K in keyof ProvisioningCounts]: number | null };

const DataSourceProvisioningReloadPayload = builder.objectRef<Payload<Counts>>('DataSourceProvisioningReloadPayload').implement({
  description: 'How many data sources the reload changed, or why it changed nothing (a bad file, named with its file:line:column).',
  fields: (t) => ({
    created: t.int({ nullable: true, description: 'Data sources created; null when `userErrors` says why nothing changed.', resolve: (p) => p.created }),
    updated: t.int({ nullable: true, description: 'Data sources updated; null when `userErrors` says why nothing changed.', resolve: (p) => p.updated }),
    unchanged: t.int({ nullable: true, description: 'Data sources declared as they already were; null when `userErrors` says why nothing changed.', resolve: (p) => p.unchanged }),
    deleted: t.int({ nullable: true, description: 'Data sources deleted by `deleteDatasources`; null when `userErrors` says why nothing changed.', resolve: (p) => p.deleted }),
    pruned: t.int({ nullable: true, description: 'Data sources provisioned with `prune: true` and declared in no file any more, deleted; null when `userErrors` says why nothing changed.', resolve: (p) => p.pruned }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

builder.mutationFields((t) => ({
  dataSourceProvisioningReload: t.field({
    extensions: { access: serverAdmin },
    type: DataSourceProvisioningReloadPayload,
    description: 'Re-reads `<[paths] provisioning>/datasources` and applies it in one transaction; a bad file changes nothing and is reported with its file:line:column. Server admins only (Basic credentials).',
    resolve: (_root, _args, ctx) => mutate(ctx, () => ctx.services.provisioning.reloadDataSources(), (summary) => summary,
      { created: null, updated: null, unchanged: null, deleted: null, pruned: null }),
  }),
}));

builder.queryFields((t) => ({
  adminSettings: t.field({
    extensions: { access: serverAdmin },
    type: 'JSONObject',
    description: 'The effective settings: section -> key -> string value, secrets masked. Server admins only (Basic credentials).',
    resolve: (_root, _args, ctx) => {
      return adminSettings(ctx.services.settings);
    },
  }),
  adminStats: t.field({
    extensions: { access: serverAdmin },
    type: AdminStatsType,
    description: 'Usage counters. Server admins only (Basic credentials).',
    resolve: (_root, _args, ctx) => {
      return adminStats(ctx.em);
    },
  }),
}));
