import { BatchedMigration } from './batched-migration.ts';

/**
 * Brute-force protection that holds under concurrency, on any number of instances. A password is
 * checked only after `dashgate_reserve_login_attempt` has recorded a pending attempt for it, and
 * that function counts and inserts as one step per login (a transaction-scoped advisory lock, and
 * a fresh snapshot for the count once the lock is held), so at most the configured number of
 * attempts are ever pending or failed in the window, however many arrive at once. A wrong password
 * turns its attempt into a failure (pending = false); a right one deletes it, freeing its slot.
 *
 * The auth trigger (migration 20261123) now announces a failure when it becomes one, not when it
 * is reserved: cached credentials of the login must go then, and a successful login must not
 * evict its own.
 */
export class Migration20261126000300_login_attempt_reservation extends BatchedMigration {
  override name = 'Migration20261126000300_login_attempt_reservation';

  override up(): void {
    this.addSql(`alter table "login_attempt" add column "pending" boolean not null default false;`);
    this.addSql(`drop trigger login_attempt_auth_changed on "login_attempt";`);
    this.addSql(`create trigger login_attempt_auth_changed after insert on "login_attempt"
      for each row when (not new.pending) execute function dashgate_notify_auth_changed();`);
    this.addSql(`create trigger login_attempt_failed after update of pending on "login_attempt"
      for each row when (old.pending and not new.pending) execute function dashgate_notify_auth_changed();`);
    // Recent attempts of a login (from one address, or from any): those that failed, and checks
    // under way. A pending attempt older than 30 seconds belongs to a check that never finished
    // (its process died): it counts as a failure.
    this.addSql(`
      create function dashgate_login_attempt_counts(p_username text, p_ip_address text, p_by_address boolean, p_window interval,
                                                    out failed integer, out under_way integer)
        language sql stable as $$
        select (count(*) filter (where not "pending" or "created" <= now() - interval '30 seconds'))::int,
               (count(*) filter (where "pending" and "created" > now() - interval '30 seconds'))::int
          from "login_attempt"
         where "username" = p_username and "created" > now() - p_window
           and (not p_by_address or "ip_address" = p_ip_address)
      $$;`);
    // 0x6c61 ("la") namespaces the per-login lock among two-key advisory locks; the count runs in
    // a statement of its own once the lock is held, so it sees every reservation made before.
    // `now()` is the statement's start, as for "created": a long wait only widens the window.
    // `busy`: the failures are below the limit, but checks under way hold every other slot, so
    // the caller may try again once one ends.
    this.addSql(`
      create function dashgate_reserve_login_attempt(p_username text, p_ip_address text, p_by_address boolean, p_max_attempts integer, p_window interval,
                                                     out reserved bigint, out busy boolean)
        language plpgsql volatile as $$
      declare
        failed integer;
        under_way integer;
      begin
        perform pg_advisory_xact_lock(27745, hashtext(p_username)); -- 27745 = 0x6c61
        select c.failed, c.under_way into failed, under_way from dashgate_login_attempt_counts(p_username, p_ip_address, p_by_address, p_window) c;
        busy := failed < p_max_attempts and failed + under_way >= p_max_attempts;
        if failed + under_way >= p_max_attempts then
          return;
        end if;
        insert into "login_attempt" ("username", "ip_address", "pending") values (p_username, p_ip_address, true)
          returning "id" into reserved;
      end $$;`);
  }

  override down(): void {
    this.addSql('drop function dashgate_reserve_login_attempt(text, text, boolean, integer, interval);');
    this.addSql('drop function dashgate_login_attempt_counts(text, text, boolean, interval);');
    this.addSql('drop trigger login_attempt_failed on "login_attempt";');
    this.addSql('drop trigger login_attempt_auth_changed on "login_attempt";');
    this.addSql(`create trigger login_attempt_auth_changed after insert on "login_attempt"
      for each row execute function dashgate_notify_auth_changed();`);
    this.addSql('alter table "login_attempt" drop column "pending";');
  }
}
