import { Migration20261122000000_initial } from './Migration20261122000000_initial.ts';
import { Migration20261123000000_auth_change_notify } from './Migration20261123000000_auth_change_notify.ts';
import { Migration20261124100000_alerts_paused_notify } from './Migration20261124100000_alerts_paused_notify.ts';
import { Migration20261124120000_data_source_prunable } from './Migration20261124120000_data_source_prunable.ts';
import { Migration20261124200000_identity } from './Migration20261124200000_identity.ts';
import { Migration20261125100000_org_members_notify } from './Migration20261125100000_org_members_notify.ts';
import { Migration20261126000000_json_data_object } from './Migration20261126000000_json_data_object.ts';
import { Migration20261126000100_datasource_change_notify } from './Migration20261126000100_datasource_change_notify.ts';
import { Migration20261126000200_bind_data_source_secrets } from './Migration20261126000200_bind_data_source_secrets.ts';
import { Migration20261126000300_login_attempt_reservation } from './Migration20261126000300_login_attempt_reservation.ts';
import { Migration20261127000000_teams } from './Migration20261127000000_teams.ts';
import { Migration20261128000000_team_members_any_org } from './Migration20261128000000_team_members_any_org.ts';
import { Migration20261128000100_none_role } from './Migration20261128000100_none_role.ts';
import { Migration20261128000200_preferences } from './Migration20261128000200_preferences.ts';
import { Migration20261128100000_live_query_sharing } from './Migration20261128100000_live_query_sharing.ts';

/** Every migration, in order (MIGRATION_NAMES lists their names). Explicit: no file globbing at start-up. */
export const MIGRATIONS = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
  { name: 'Migration20261123000000_auth_change_notify', class: Migration20261123000000_auth_change_notify },
  { name: 'Migration20261124100000_alerts_paused_notify', class: Migration20261124100000_alerts_paused_notify },
  { name: 'Migration20261124120000_data_source_prunable', class: Migration20261124120000_data_source_prunable },
  { name: 'Migration20261124200000_identity', class: Migration20261124200000_identity },
  { name: 'Migration20261125100000_org_members_notify', class: Migration20261125100000_org_members_notify },
  { name: 'Migration20261126000000_json_data_object', class: Migration20261126000000_json_data_object },
  { name: 'Migration20261126000100_datasource_change_notify', class: Migration20261126000100_datasource_change_notify },
  { name: 'Migration20261126000200_bind_data_source_secrets', class: Migration20261126000200_bind_data_source_secrets },
  { name: 'Migration20261126000300_login_attempt_reservation', class: Migration20261126000300_login_attempt_reservation },
  { name: 'Migration20261127000000_teams', class: Migration20261127000000_teams },
  { name: 'Migration20261128000000_team_members_any_org', class: Migration20261128000000_team_members_any_org },
  { name: 'Migration20261128000100_none_role', class: Migration20261128000100_none_role },
  { name: 'Migration20261128000200_preferences', class: Migration20261128000200_preferences },
  { name: 'Migration20261128100000_live_query_sharing', class: Migration20261128100000_live_query_sharing },
];

/** MIGRATIONS, with `[security] secret_key` handed to those that re-seal stored secrets. */
export function migrationsWithKey(secretKey: string | null): typeof MIGRATIONS {
  return MIGRATIONS.map((entry) =>
    entry.class === Migration20261126000200_bind_data_source_secrets ? { ...entry, class: Migration20261126000200_bind_data_source_secrets.withKey(secretKey) } : entry);
}
