import { BatchedMigration } from './batched-migration.ts';

/**
 * GraphQL's `orgMembersChanged` subscription follows an org's members on every instance, whoever
 * changes them: this server, the CLI or a hand-written SQL statement. Each message names the org
 * and the user (`<orgId>:<userId>`; `*` after a truncate, when every org must look again);
 * listeners read the member back, so no field travels in it. A profile change of a user is
 * announced in each org it belongs to, and only when a field members show changed: logins
 * refreshing `last_seen_at` stay quiet. Deleting a user or an org reaches `org_user` through its
 * cascade, so removals are announced there.
 */
export class Migration20261125100000_org_members_notify extends BatchedMigration {
  override name = 'Migration20261125100000_org_members_notify';

  override up(): void {
    this.addSql(`
      create function dashgate_notify_org_members_changed() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          perform pg_notify('dashgate_org_members_changed', '*');
        elsif tg_table_name = 'org_user' then
          if tg_op <> 'INSERT' then
            perform pg_notify('dashgate_org_members_changed', old.org_id || ':' || old.user_id);
          end if;
          if tg_op <> 'DELETE' then
            perform pg_notify('dashgate_org_members_changed', new.org_id || ':' || new.user_id);
          end if;
        else
          perform pg_notify('dashgate_org_members_changed', ou.org_id || ':' || new.id)
             from org_user ou where ou.user_id = new.id;
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger org_user_members_changed after insert or update or delete on "org_user"
      for each row execute function dashgate_notify_org_members_changed();`);
    this.addSql(`create trigger org_user_members_truncated after truncate on "org_user"
      for each statement execute function dashgate_notify_org_members_changed();`);
    this.addSql(`create trigger user_member_profile_changed after update of uid, login, email, name, is_disabled on "user"
      for each row when ((old.uid, old.login, old.email, old.name, old.is_disabled) is distinct from (new.uid, new.login, new.email, new.name, new.is_disabled))
      execute function dashgate_notify_org_members_changed();`);
  }

  override down(): void {
    this.addSql('drop function dashgate_notify_org_members_changed() cascade;');
  }
}
