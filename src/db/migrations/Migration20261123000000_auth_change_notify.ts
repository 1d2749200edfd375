import { BatchedMigration } from './batched-migration.ts';

/**
 * Every instance caches verified credentials (src/auth/principal-cache.ts). These triggers tell
 * them all when what a credential resolves to may have changed, whoever writes: this server, the
 * CLI or a hand-written SQL statement. NOTIFY is sent on commit and folds duplicates within a
 * transaction, so a bulk change costs one message.
 */
export class Migration20261123000000_auth_change_notify extends BatchedMigration {
  override name = 'Migration20261123000000_auth_change_notify';

  override up(): void {
    this.addSql(`
      create function dashgate_notify_auth_changed() returns trigger language plpgsql as $$
      begin
        if tg_table_name = 'login_attempt' then
          -- A failed login: only that login's cached credentials must go (it may now be blocked).
          perform pg_notify('dashgate_auth_changed', 'login:' || new.username);
        else
          perform pg_notify('dashgate_auth_changed', 'all');
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger user_auth_changed after insert or update or delete or truncate on "user"
      for each statement execute function dashgate_notify_auth_changed();`);
    this.addSql(`create trigger org_user_auth_changed after insert or update or delete or truncate on "org_user"
      for each statement execute function dashgate_notify_auth_changed();`);
    // Not on last_used_at: tokens refresh it as they are used, which changes nobody's rights.
    this.addSql(`create trigger api_key_auth_changed
      after insert or delete or truncate or update of org_id, name, key_hash, role, service_account_id, expires, is_revoked on "api_key"
      for each statement execute function dashgate_notify_auth_changed();`);
    this.addSql(`create trigger login_attempt_auth_changed after insert on "login_attempt"
      for each row execute function dashgate_notify_auth_changed();`);
  }

  override down(): void {
    this.addSql('drop function dashgate_notify_auth_changed() cascade;');
  }
}
