import { BatchedMigration } from './batched-migration.ts';

/**
 * Preferences, as the original keeps them: of an org (no user, no team), of a user in an org, or
 * of a team; one row per owner. Theme, timezone, week start and the home dashboard are columns;
 * the rest (language, query history, cookie and navigation preferences) is `json_data`. A row goes
 * with its org, its user or its team.
 */
export class Migration20261128000200_preferences extends BatchedMigration {
  override name = 'Migration20261128000200_preferences';

  override up(): void {
    this.addSql(`
      create table "preferences" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "user_id" integer null references "user" ("id") on delete cascade,
        "team_id" integer null,
        "version" integer not null default 0,
        "home_dashboard_id" bigint not null default 0,
        "home_dashboard_uid" text not null default '',
        "timezone" text not null default '',
        "week_start" text not null default '',
        "theme" text not null default '',
        "json_data" jsonb not null default '{}',
        "created" timestamptz not null default now(),
        "updated" timestamptz not null default now(),
        check (num_nonnulls("user_id", "team_id") <= 1),
        foreign key ("team_id", "org_id") references "team" ("id", "org_id") on delete cascade
      );`);
    this.addSql(`create unique index "preferences_owner_unique" on "preferences" ("org_id", coalesce("user_id", 0), coalesce("team_id", 0));`);
    this.addSql(`create index "preferences_user_id_idx" on "preferences" ("user_id") where "user_id" is not null;`);
    this.addSql(`create index "preferences_team_id_idx" on "preferences" ("team_id") where "team_id" is not null;`);
  }

  override down(): void {
    this.addSql('drop table if exists "preferences";');
  }
}
