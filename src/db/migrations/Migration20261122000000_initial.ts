import { BatchedMigration } from './batched-migration.ts';

/** The initial schema. Foreign keys cascade so that deleting an org or user removes what hangs off it. */
export class Migration20261122000000_initial extends BatchedMigration {
  override name = 'Migration20261122000000_initial';

  override up(): void {
    this.addSql(`
      create table "org" (
        "id" serial primary key,
        "name" varchar(190) not null unique,
        "created" timestamptz not null default now(),
        "updated" timestamptz not null default now()
      );`);
    this.addSql(`
      create table "user" (
        "id" serial primary key,
        "login" varchar(190) not null,
        "email" varchar(190) not null,
        "name" varchar(255) not null default '',
        "password_hash" text null,
        "is_admin" boolean not null default false,
        "is_disabled" boolean not null default false,
        "is_service_account" boolean not null default false,
        "org_id" integer not null references "org" ("id") on delete restrict,
        "last_seen_at" timestamptz null,
        "created" timestamptz not null default now(),
        "updated" timestamptz not null default now()
      );`);
    // Logins and e-mails are unique case-insensitively, as the original server's lower-casing gives.
    this.addSql(`create unique index "user_login_lower_unique" on "user" (lower("login"));`);
    this.addSql(`create unique index "user_email_lower_unique" on "user" (lower("email"));`);
    this.addSql(`create index "user_is_admin_idx" on "user" ("is_admin") where "is_admin";`);
    this.addSql(`
      create table "org_user" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "user_id" integer not null references "user" ("id") on delete cascade,
        "role" varchar(20) not null check ("role" in ('Viewer', 'Editor', 'Admin')),
        "created" timestamptz not null default now(),
        unique ("org_id", "user_id")
      );`);
    this.addSql(`create index "org_user_user_id_idx" on "org_user" ("user_id");`);
    this.addSql(`
      create table "api_key" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "name" varchar(190) not null,
        "key_hash" varchar(64) not null unique,
        "role" varchar(20) not null check ("role" in ('Viewer', 'Editor', 'Admin')),
        "service_account_id" integer null references "user" ("id") on delete cascade,
        "expires" timestamptz null,
        "is_revoked" boolean not null default false,
        "last_used_at" timestamptz null,
        "created" timestamptz not null default now(),
        unique ("org_id", "name")
      );`);
    this.addSql(`
      create table "data_source" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "uid" varchar(40) not null,
        "name" varchar(190) not null,
        "type" varchar(255) not null,
        "access" varchar(255) not null,
        "url" text not null default '',
        "user" varchar(255) not null default '',
        "database" varchar(255) not null default '',
        "basic_auth" boolean not null default false,
        "basic_auth_user" varchar(255) not null default '',
        "with_credentials" boolean not null default false,
        "is_default" boolean not null default false,
        "json_data" jsonb null,
        "secure_json_data" jsonb not null default '{}',
        "version" integer not null default 1,
        "read_only" boolean not null default false,
        "created" timestamptz not null default now(),
        "updated" timestamptz not null default now(),
        constraint "data_source_org_id_name_unique" unique ("org_id", "name"),
        constraint "data_source_org_id_uid_unique" unique ("org_id", "uid")
      );`);
    // At most one default per org, enforced by the database as well as by the service.
    this.addSql(`create unique index "data_source_one_default_per_org" on "data_source" ("org_id") where "is_default";`);
    this.addSql(`
      create table "dashboard" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "uid" varchar(40) not null,
        "title" varchar(255) not null,
        "is_folder" boolean not null default false,
        "data" jsonb not null default '{}',
        "created" timestamptz not null default now(),
        "updated" timestamptz not null default now(),
        unique ("org_id", "uid")
      );`);
    this.addSql(`
      create table "dashboard_tag" (
        "id" serial primary key,
        "dashboard_id" integer not null references "dashboard" ("id") on delete cascade,
        "term" varchar(255) not null
      );`);
    this.addSql(`
      create table "dashboard_snapshot" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "dashboard_id" integer null references "dashboard" ("id") on delete set null,
        "name" varchar(255) not null,
        "key" varchar(190) not null unique,
        "created" timestamptz not null default now()
      );`);
    this.addSql(`
      create table "playlist" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "name" varchar(255) not null,
        "interval" varchar(255) not null default '5m'
      );`);
    this.addSql(`
      create table "star" (
        "id" serial primary key,
        "user_id" integer not null references "user" ("id") on delete cascade,
        "dashboard_id" integer not null references "dashboard" ("id") on delete cascade,
        unique ("user_id", "dashboard_id")
      );`);
    this.addSql(`
      create table "alert" (
        "id" serial primary key,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "dashboard_id" integer null references "dashboard" ("id") on delete cascade,
        "panel_id" integer not null default 0,
        "name" varchar(255) not null,
        "state" varchar(50) not null default 'unknown',
        "new_state_date" timestamptz not null default now(),
        "created" timestamptz not null default now()
      );`);
    this.addSql(`
      create table "alert_pause_state" (
        "id" integer primary key check ("id" = 1),
        "paused" boolean not null default false,
        "updated" timestamptz not null default now()
      );`);
    this.addSql(`insert into "alert_pause_state" ("id", "paused") values (1, false);`);
    this.addSql(`
      create table "login_attempt" (
        "id" bigserial primary key,
        "username" varchar(190) not null,
        "ip_address" varchar(64) not null default '',
        "created" timestamptz not null default now()
      );`);
    this.addSql(`create index "login_attempt_username_created_idx" on "login_attempt" ("username", "created");`);
  }
}
