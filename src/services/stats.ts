import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';

/**
 * The usage counters: spec 2.3's (REST renames them to its snake_case wire names) and the current
 * original server's (REST also sends them under its camelCase names, which today's scripts read).
 */
export interface AdminStats {
  userCount: number;
  orgCount: number;
  dashboardCount: number;
  dbSnapshotCount: number;
  dbTagCount: number;
  dataSourceCount: number;
  playlistCount: number;
  starredDbCount: number;
  serviceAdminCount: number;
  starCount: number;
  alertCount: number;
  adminCount: number;
  editorCount: number;
  viewerCount: number;
  activeUsers: number;
  activeAdmins: number;
  activeEditors: number;
  activeViewers: number;
  activeSessions: number;
  dailyActiveUsers: number;
  dailyActiveAdmins: number;
  dailyActiveEditors: number;
  dailyActiveViewers: number;
  dailyActiveSessions: number;
  monthlyActiveUsers: number;
  activeDevices: number;
}

/**
 * Every counter in one statement. Service accounts are not users here, as in the original. Each
 * user is counted once, under the highest role they hold in any org (admins, editors, viewers;
 * a `None` member counts as a viewer, as the original's role counter counts every role below
 * Editor), and a user in no org under none of them;
 * "active" is seen in the last 30 days, "daily" in the last 24 hours, "monthly" since the 1st of
 * this month, all from `last_seen_at`. This server keeps no login sessions and has no anonymous
 * access, so sessions and devices are always 0.
 */
const STATS: PreparedStatement = {
  name: 'dashgate_admin_stats_v3',
  text: `
    with people as (
      select u.last_seen_at as seen,
             coalesce(max(case when ou.role = 'Admin' then 3 when ou.role = 'Editor' then 2 when ou.role is not null then 1 end), 0) as rank
        from "user" u left join org_user ou on ou.user_id = u.id
       where not u.is_service_account
       group by u.id
    )
    select
      (select count(*) from people) as "userCount",
      (select count(*) from org) as "orgCount",
      (select count(*) from dashboard where not is_folder) as "dashboardCount",
      (select count(*) from dashboard_snapshot) as "dbSnapshotCount",
      (select count(distinct term) from dashboard_tag) as "dbTagCount",
      (select count(*) from data_source) as "dataSourceCount",
      (select count(*) from playlist) as "playlistCount",
      (select count(distinct dashboard_id) from star) as "starredDbCount",
      (select count(*) from "user" where is_admin and not is_service_account) as "serviceAdminCount",
      (select count(*) from star) as "starCount",
      (select count(*) from alert) as "alertCount",
      count(*) filter (where rank = 3) as "adminCount",
      count(*) filter (where rank = 2) as "editorCount",
      count(*) filter (where rank = 1) as "viewerCount",
      count(*) filter (where seen > now() - interval '30 days') as "activeUsers",
      count(*) filter (where rank = 3 and seen > now() - interval '30 days') as "activeAdmins",
      count(*) filter (where rank = 2 and seen > now() - interval '30 days') as "activeEditors",
      count(*) filter (where rank = 1 and seen > now() - interval '30 days') as "activeViewers",
      0 as "activeSessions",
      count(*) filter (where seen > now() - interval '24 hours') as "dailyActiveUsers",
      count(*) filter (where rank = 3 and seen > now() - interval '24 hours') as "dailyActiveAdmins",
      count(*) filter (where rank = 2 and seen > now() - interval '24 hours') as "dailyActiveEditors",
      count(*) filter (where rank = 1 and seen > now() - interval '24 hours') as "dailyActiveViewers",
      0 as "dailyActiveSessions",
      count(*) filter (where seen > date_trunc('month', now())) as "monthlyActiveUsers",
      0 as "activeDevices"
    from people`,
};

export async function adminStats(em: EntityManager): Promise<AdminStats> {
  const [row] = await queryPrepared<Record<keyof AdminStats, string>>(em, STATS);
  const stats = {} as AdminStats;
  for (const [key, value] of Object.entries(row!)) stats[key as keyof AdminStats] = Number(value);
  return stats;
}
