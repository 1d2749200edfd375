import { builder } from '../builder.ts';
import { requireServerAdmin } from '../context.ts';
import { adminSettings } from '../../services/settings.ts';
import { adminStats, type AdminStats } from '../../services/stats.ts';

const AdminStatsType = builder.objectRef<AdminStats>('AdminStats').implement({
  description: 'Usage counters of the whole server (all orgs), computed from the stored rows.',
  fields: (t) => ({
    userCount: t.int({ description: 'Users (service accounts excluded).', resolve: (s) => s.user_count }),
    orgCount: t.int({ description: 'Organizations.', resolve: (s) => s.org_count }),
    dashboardCount: t.int({ description: 'Dashboards, folders excluded.', resolve: (s) => s.dashboard_count }),
    dbSnapshotCount: t.int({ description: 'Dashboard snapshots.', resolve: (s) => s.db_snapshot_count }),
    dbTagCount: t.int({ description: 'Distinct dashboard tag terms.', resolve: (s) => s.db_tag_count }),
    dataSourceCount: t.int({ description: 'Data sources of every org.', resolve: (s) => s.data_source_count }),
    playlistCount: t.int({ description: 'Playlists.', resolve: (s) => s.playlist_count }),
    starredDbCount: t.int({ description: 'Dashboards starred by at least one user.', resolve: (s) => s.starred_db_count }),
    serviceAdminCount: t.int({ description: 'Users holding the server-admin permission.', resolve: (s) => s.service_admin_count }),
  }),
});

builder.queryFields((t) => ({
  adminSettings: t.field({
    type: 'JSONObject',
    description: 'The effective settings: section -> key -> string value, secrets masked. Server admins only (Basic auth).',
    resolve: (_root, _args, ctx) => {
      requireServerAdmin(ctx);
      return adminSettings(ctx.services.settings);
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
