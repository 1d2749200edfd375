import { builder } from '../builder.ts';
import { serverAdmin } from '../../auth/access.ts';
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
  }),
});

builder.queryFields((t) => ({
  adminSettings: t.field({
    extensions: { access: serverAdmin },
    type: 'JSONObject',
    description: 'The effective settings: section -> key -> string value, secrets masked. Server admins only (Basic auth).',
    resolve: (_root, _args, ctx) => {
      return adminSettings(ctx.services.settings);
    },
  }),
  adminStats: t.field({
    extensions: { access: serverAdmin },
    type: AdminStatsType,
    description: 'Usage counters. Server admins only (Basic auth).',
    resolve: (_root, _args, ctx) => {
      return adminStats(ctx.em);
    },
  }),
}));
