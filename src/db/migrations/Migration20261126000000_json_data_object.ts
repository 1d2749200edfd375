import { BatchedMigration } from './batched-migration.ts';

/**
 * A data source's `jsonData` is always an object, as the original server stores at least `{}`:
 * rows saved without one (SQL NULL or a JSON null) become `{}`, and the column no longer takes NULL.
 */
export class Migration20261126000000_json_data_object extends BatchedMigration {
  override name = 'Migration20261126000000_json_data_object';

  override up(): void {
    this.addSql(`update "data_source" set "json_data" = '{}' where "json_data" is null or "json_data" = 'null'::jsonb;`);
    this.addSql(`alter table "data_source" alter column "json_data" set default '{}', alter column "json_data" set not null;`);
  }

  override down(): void {
    this.addSql(`alter table "data_source" alter column "json_data" drop not null, alter column "json_data" drop default;`);
  }
}
