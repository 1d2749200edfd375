import { BatchedMigration } from './batched-migration.ts';

/**
 * Data sources provisioned from a file with `prune: true` are marked, as in the original server
 * (`data_source.is_prunable`): once no file declares them any more, provisioning deletes them.
 */
export class Migration20261124120000_data_source_prunable extends BatchedMigration {
  override name = 'Migration20261124120000_data_source_prunable';

  override up(): void {
    this.addSql(`alter table "data_source" add column "is_prunable" boolean not null default false;`);
  }

  override down(): void {
    this.addSql(`alter table "data_source" drop column "is_prunable";`);
  }
}
