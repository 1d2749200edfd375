import { BatchedMigration } from './batched-migration.ts';

/**
 * A team may have members who are not members of its org, as the original's team membership rule
 * allows (it checks only that the user exists): the membership now hangs off the user, not off an
 * org membership. Such a membership gives nothing in the org (its data source grants apply to
 * members of the org only, see data-source-permissions.ts), and it goes when the user does.
 *
 * Leaving an org still ends the user's memberships of that org's teams, as the original's
 * `RemoveOrgUser` deletes them, whichever way the membership goes (API, CLI, SQL).
 */
export class Migration20261128000000_team_members_any_org extends BatchedMigration {
  override name = 'Migration20261128000000_team_members_any_org';

  override up(): void {
    this.addSql('alter table "team_member" drop constraint "team_member_org_id_user_id_fkey";');
    this.addSql(`alter table "team_member" add constraint "team_member_user_id_fkey"
      foreign key ("user_id") references "user" ("id") on delete cascade;`);
    this.addSql(`
      create function dashgate_team_members_leave_org() returns trigger language plpgsql as $$
      begin
        delete from team_member where org_id = old.org_id and user_id = old.user_id;
        return null;
      end $$;`);
    this.addSql(`create trigger org_user_team_members_leave after delete on "org_user"
      for each row execute function dashgate_team_members_leave_org();`);
  }

  override down(): void {
    this.addSql('drop trigger if exists org_user_team_members_leave on "org_user";');
    this.addSql('drop function if exists dashgate_team_members_leave_org();');
    this.addSql('delete from team_member tm where not exists (select 1 from org_user ou where ou.org_id = tm.org_id and ou.user_id = tm.user_id);');
    this.addSql('alter table "team_member" drop constraint "team_member_user_id_fkey";');
    this.addSql(`alter table "team_member" add constraint "team_member_org_id_user_id_fkey"
      foreign key ("org_id", "user_id") references "org_user" ("org_id", "user_id") on delete cascade;`);
  }
}
