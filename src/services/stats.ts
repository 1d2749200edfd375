import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';

/** The usage counters of spec 2.3, in its snake_case wire names. */
export interface AdminStats {
  user_count: number;
  org_count: number;
  dashboard_count: number;
  db_snapshot_count: number;
  db_tag_count: number;
  data_source_count: number;
  playlist_count: number;
  starred_db_count: number;
  service_admin_count: number;
}

/** Every counter in one statement. Service accounts are not users here, as in the original. */
const STATS: PreparedStatement = {
  name: 'dashgate_admin_stats',
  text: `
    select
      (select count(*) from "user" where not is_service_account) as user_count,
      (select count(*) from org) as org_count,
      (select count(*) from dashboard where not is_folder) as dashboard_count,
      (select count(*) from dashboard_snapshot) as db_snapshot_count,
      (select count(distinct term) from dashboard_tag) as db_tag_count,
      (select count(*) from data_source) as data_source_count,
      (select count(*) from playlist) as playlist_count,
      (select count(distinct dashboard_id) from star) as starred_db_count,
      (select count(*) from "user" where is_admin and not is_service_account) as service_admin_count`,
};

export async function adminStats(em: EntityManager): Promise<AdminStats> {
  const [row] = await queryPrepared<Record<keyof AdminStats, string>>(em, STATS);
  const stats = {} as AdminStats;
  for (const [key, value] of Object.entries(row!)) stats[key as keyof AdminStats] = Number(value);
  return stats;
}
