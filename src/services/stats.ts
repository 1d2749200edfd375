import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';

/** The usage counters of spec 2.3 (REST renames them to the spec's snake_case wire names). */
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
}

/** Every counter in one statement. Service accounts are not users here, as in the original. */
const STATS: PreparedStatement = {
  name: 'dashgate_admin_stats',
  text: `
    select
      (select count(*) from "user" where not is_service_account) as "userCount",
      (select count(*) from org) as "orgCount",
      (select count(*) from dashboard where not is_folder) as "dashboardCount",
      (select count(*) from dashboard_snapshot) as "dbSnapshotCount",
      (select count(distinct term) from dashboard_tag) as "dbTagCount",
      (select count(*) from data_source) as "dataSourceCount",
      (select count(*) from playlist) as "playlistCount",
      (select count(distinct dashboard_id) from star) as "starredDbCount",
      (select count(*) from "user" where is_admin and not is_service_account) as "serviceAdminCount"`,
};

export async function adminStats(em: EntityManager): Promise<AdminStats> {
  const [row] = await queryPrepared<Record<keyof AdminStats, string>>(em, STATS);
  const stats = {} as AdminStats;
  for (const [key, value] of Object.entries(row!)) stats[key as keyof AdminStats] = Number(value);
  return stats;
}
