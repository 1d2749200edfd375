import { BatchedMigration } from './batched-migration.ts';

/**
 * Every instance's proxy caches data sources (src/proxy/cache.ts) and GraphQL subscribers follow
 * them (src/live/). This trigger tells them all when a row changes, whoever writes: this server,
 * the CLI or a hand-written SQL statement (before, only the server's own writes notified, so a URL
 * or secret changed with psql went unnoticed until restart). The payload is
 * `<org id>:<id>:<created|updated|deleted>`, as the service used to send it; a TRUNCATE says
 * `all`. NOTIFY is sent on commit and folds duplicates within a transaction.
 */
export class Migration20261126000100_datasource_change_notify extends BatchedMigration {
  override name = 'Migration20261126000100_datasource_change_notify';

  override up(): void {
    this.addSql(`
      create function dashgate_notify_datasource_changed() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          perform pg_notify('dashgate_datasource_changed', 'all');
          return null;
        end if;
        if tg_op = 'INSERT' then
          perform pg_notify('dashgate_datasource_changed', new.org_id || ':' || new.id || ':created');
        elsif tg_op = 'DELETE' then
          perform pg_notify('dashgate_datasource_changed', old.org_id || ':' || old.id || ':deleted');
        else
          -- A row given another id or org by hand: gone from where it was.
          if old.id <> new.id or old.org_id <> new.org_id then
            perform pg_notify('dashgate_datasource_changed', old.org_id || ':' || old.id || ':deleted');
          end if;
          perform pg_notify('dashgate_datasource_changed', new.org_id || ':' || new.id || ':updated');
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger data_source_changed after insert or update or delete on "data_source"
      for each row execute function dashgate_notify_datasource_changed();`);
    this.addSql(`create trigger data_source_truncated after truncate on "data_source"
      for each statement execute function dashgate_notify_datasource_changed();`);
  }

  override down(): void {
    this.addSql('drop function dashgate_notify_datasource_changed() cascade;');
  }
}
