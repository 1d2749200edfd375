/**
 * The names of dashgate's migrations, in order: enough to tell whether any is pending without
 * loading the migrations (index.ts lists them with their classes, in the same order).
 */
export const MIGRATION_NAMES: readonly string[] = [
  'Migration20261122000000_initial',
  'Migration20261123000000_auth_change_notify',
  'Migration20261124100000_alerts_paused_notify',
  'Migration20261124120000_data_source_prunable',
  'Migration20261124200000_identity',
  'Migration20261125100000_org_members_notify',
  'Migration20261126000000_json_data_object',
  'Migration20261126000100_datasource_change_notify',
  'Migration20261126000200_bind_data_source_secrets',
  'Migration20261126000300_login_attempt_reservation',
  'Migration20261127000000_teams',
  'Migration20261128000000_team_members_any_org',
  'Migration20261128000100_none_role',
  'Migration20261128000200_preferences',
  'Migration20261128100000_live_query_sharing',
];
