import { BatchedMigration } from './batched-migration.ts';

/**
 * Teams (an org's groups of members) and who may query, edit or administer each data source, as
 * the original's teams and its data source resource permissions.
 *
 * - A team belongs to one org; a member must be a member of that org (so removing a user from the
 *   org, deleting the user or deleting the org removes the memberships by cascade).
 * - A data source permission grants one level (1 Query, 2 Edit, 3 Admin) to exactly one of a user
 *   (of the data source's org), a team (of that org) or a built-in role. Every new data source,
 *   however it is written (API, provisioning, CLI, SQL), starts with the original's defaults through
 *   a trigger: Viewers and Editors may query; org Admins administer every data source anyway.
 * - Every committed change that can change what someone may do with a data source (a grant, a
 *   membership, a team deleted) notifies `dashgate_datasource_access_changed` with the org id,
 *   so every instance's access cache forgets what it knew before the next request.
 */
export class Migration20261127000000_teams extends BatchedMigration {
  override name = 'Migration20261127000000_teams';

  override up(): void {
    this.addSql(`
      create table "team" (
        "id" serial primary key,
        "uid" varchar(40) not null,
        "org_id" integer not null references "org" ("id") on delete cascade,
        "name" varchar(190) not null,
        "email" varchar(190) not null default '',
        "created" timestamptz not null default now(),
        "updated" timestamptz not null default now(),
        unique ("id", "org_id"),
        unique ("org_id", "uid")
      );`);
    // Names are unique in an org case-insensitively, as the original's lookups compare them.
    this.addSql(`create unique index "team_org_name_lower_unique" on "team" ("org_id", lower("name"));`);
    this.addSql(`
      create table "team_member" (
        "team_id" integer not null,
        "org_id" integer not null,
        "user_id" integer not null,
        "permission" smallint not null default 0 check ("permission" in (0, 4)),
        "created" timestamptz not null default now(),
        primary key ("team_id", "user_id"),
        foreign key ("team_id", "org_id") references "team" ("id", "org_id") on delete cascade,
        foreign key ("org_id", "user_id") references "org_user" ("org_id", "user_id") on delete cascade
      );`);
    this.addSql(`create index "team_member_user_id_idx" on "team_member" ("user_id", "org_id");`);
    this.addSql(`
      create table "data_source_permission" (
        "id" serial primary key,
        "data_source_id" integer not null references "data_source" ("id") on delete cascade,
        "org_id" integer not null,
        "user_id" integer null,
        "team_id" integer null,
        "built_in_role" varchar(20) null check ("built_in_role" in ('Viewer', 'Editor', 'Admin')),
        "level" smallint not null check ("level" in (1, 2, 3)),
        "created" timestamptz not null default now(),
        check (num_nonnulls("user_id", "team_id", "built_in_role") = 1),
        foreign key ("org_id", "user_id") references "org_user" ("org_id", "user_id") on delete cascade,
        foreign key ("team_id", "org_id") references "team" ("id", "org_id") on delete cascade
      );`);
    this.addSql(`create unique index "data_source_permission_user_unique" on "data_source_permission" ("data_source_id", "user_id") where "user_id" is not null;`);
    this.addSql(`create unique index "data_source_permission_team_unique" on "data_source_permission" ("data_source_id", "team_id") where "team_id" is not null;`);
    this.addSql(`create unique index "data_source_permission_role_unique" on "data_source_permission" ("data_source_id", "built_in_role") where "built_in_role" is not null;`);
    this.addSql(`create index "data_source_permission_team_idx" on "data_source_permission" ("team_id") where "team_id" is not null;`);
    this.addSql(`create index "data_source_permission_user_idx" on "data_source_permission" ("user_id") where "user_id" is not null;`);

    // The original's defaults, for data sources written any way at all.
    this.addSql(`
      create function dashgate_data_source_default_permissions() returns trigger language plpgsql as $$
      begin
        insert into data_source_permission (data_source_id, org_id, built_in_role, level)
          values (new.id, new.org_id, 'Viewer', 1), (new.id, new.org_id, 'Editor', 1);
        return null;
      end $$;`);
    this.addSql(`create trigger data_source_default_permissions after insert on "data_source"
      for each row execute function dashgate_data_source_default_permissions();`);
    this.addSql(`
      insert into data_source_permission (data_source_id, org_id, built_in_role, level)
        select id, org_id, r.role, 1 from data_source cross join (values ('Viewer'), ('Editor')) as r(role);`);

    this.addSql(`
      create function dashgate_notify_datasource_access_changed() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          perform pg_notify('dashgate_datasource_access_changed', 'all');
        elsif tg_op = 'DELETE' then
          perform pg_notify('dashgate_datasource_access_changed', old.org_id::text);
        else
          perform pg_notify('dashgate_datasource_access_changed', new.org_id::text);
          if tg_op = 'UPDATE' and old.org_id <> new.org_id then
            perform pg_notify('dashgate_datasource_access_changed', old.org_id::text);
          end if;
        end if;
        return null;
      end $$;`);
    for (const table of ['data_source_permission', 'team_member']) {
      this.addSql(`create trigger ${table}_access_changed after insert or update or delete on "${table}"
        for each row execute function dashgate_notify_datasource_access_changed();`);
      this.addSql(`create trigger ${table}_access_truncated after truncate on "${table}"
        for each statement execute function dashgate_notify_datasource_access_changed();`);
    }
  }

  override down(): void {
    this.addSql('drop table if exists "data_source_permission", "team_member", "team" cascade;');
    this.addSql('drop function if exists dashgate_notify_datasource_access_changed() cascade;');
    this.addSql('drop function if exists dashgate_data_source_default_permissions() cascade;');
  }
}
