import { BatchedMigration } from './batched-migration.ts';

/**
 * The `None` basic role (the original's since v10): a member of an org, or a token, with no
 * permission of its own, who sees only what teams and per-resource grants give it.
 */
export class Migration20261128000100_none_role extends BatchedMigration {
  override name = 'Migration20261128000100_none_role';

  override up(): void {
    for (const table of ['org_user', 'api_key']) {
      this.addSql(`alter table "${table}" drop constraint "${table}_role_check";`);
      this.addSql(`alter table "${table}" add constraint "${table}_role_check" check ("role" in ('None', 'Viewer', 'Editor', 'Admin'));`);
    }
  }

  override down(): void {
    for (const table of ['org_user', 'api_key']) {
      this.addSql(`update "${table}" set "role" = 'Viewer' where "role" = 'None';`);
      this.addSql(`alter table "${table}" drop constraint "${table}_role_check";`);
      this.addSql(`alter table "${table}" add constraint "${table}_role_check" check ("role" in ('Viewer', 'Editor', 'Admin'));`);
    }
  }
}
