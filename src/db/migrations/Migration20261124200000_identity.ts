import { BatchedMigration } from './batched-migration.ts';

/**
 * Users and orgs as the identity API needs them:
 * - `uid`: the stable string id the original server reports beside the numeric one;
 * - `theme`: the user's UI theme preference, set through `PUT /api/user`;
 * - `org_id` (the org a user acts in by default) may be empty: a user removed from its last org,
 *   or whose current org is deleted, belongs nowhere until added again.
 */
export class Migration20261124200000_identity extends BatchedMigration {
  override name = 'Migration20261124200000_identity';

  override up(): void {
    this.addSql(`alter table "user" add column "uid" varchar(40) null;`);
    // 14 hex characters from a fresh random value per row: existing rows now, new rows by default.
    this.addSql(`update "user" set "uid" = substr(md5(random()::text || clock_timestamp()::text || "id"::text), 1, 14);`);
    this.addSql(`alter table "user" alter column "uid" set default substr(md5(random()::text || clock_timestamp()::text), 1, 14);`);
    this.addSql(`alter table "user" alter column "uid" set not null;`);
    this.addSql(`create unique index "user_uid_unique" on "user" ("uid");`);
    this.addSql(`alter table "user" add column "theme" varchar(255) not null default '';`);
    this.addSql(`alter table "user" alter column "org_id" drop not null;`);
    this.addSql(`alter table "user" drop constraint "user_org_id_fkey";`);
    this.addSql(`alter table "user" add constraint "user_org_id_fkey" foreign key ("org_id") references "org" ("id") on delete set null;`);
  }

  override down(): void {
    this.addSql(`update "user" set "org_id" = 1 where "org_id" is null;`);
    this.addSql(`alter table "user" drop constraint "user_org_id_fkey";`);
    this.addSql(`alter table "user" add constraint "user_org_id_fkey" foreign key ("org_id") references "org" ("id") on delete restrict;`);
    this.addSql(`alter table "user" alter column "org_id" set not null;`);
    this.addSql(`alter table "user" drop column "theme";`);
    this.addSql(`drop index "user_uid_unique";`);
    this.addSql(`alter table "user" drop column "uid";`);
  }
}
