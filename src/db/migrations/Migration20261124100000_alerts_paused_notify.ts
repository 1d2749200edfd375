import { BatchedMigration } from './batched-migration.ts';

/**
 * GraphQL's `alertsPausedChanged` subscription follows the pause switch on every instance, whoever
 * flips it: this server, the CLI or a hand-written SQL statement. Listeners read the switch back,
 * so the message carries nothing; NOTIFY folds repeats within a transaction into one.
 */
export class Migration20261124100000_alerts_paused_notify extends BatchedMigration {
  override name = 'Migration20261124100000_alerts_paused_notify';

  override up(): void {
    this.addSql(`
      create function dashgate_notify_alerts_paused_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('dashgate_alerts_paused_changed', '');
        return null;
      end $$;`);
    this.addSql(`create trigger alert_pause_state_changed after insert or update or delete or truncate on "alert_pause_state"
      for each statement execute function dashgate_notify_alerts_paused_changed();`);
  }

  override down(): void {
    this.addSql('drop function dashgate_notify_alerts_paused_changed() cascade;');
  }
}
