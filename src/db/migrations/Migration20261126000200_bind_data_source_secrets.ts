import { BatchedMigration } from './batched-migration.ts';
import { dataSourceSecretBinding, SecretBox } from '../secrets.ts';

interface Row {
  id: number;
  org_id: number;
  uid: string;
  secure_json_data: Record<string, string>;
}

/**
 * Seals every stored data source secret again, now bound to its org, data source uid and key name
 * (see db/secrets.ts), so that a blob copied to another row or key no longer opens. Needs
 * `[security] secret_key`: the server and the CLI hand it over through `migrationsWithKey`. A
 * secret that does not open with the configured key (sealed with another one) is left as it is:
 * it was unreadable before and stays so, and its name still shows in `secureJsonFields`, so it
 * can be sent again. Runs in the migration's transaction: all rows or none.
 */
export class Migration20261126000200_bind_data_source_secrets extends BatchedMigration {
  override name = 'Migration20261126000200_bind_data_source_secrets';
  protected secretKey: string | null = null;

  /** This migration with the key it needs; without one it fails on a database holding secrets. */
  static withKey(secretKey: string | null): typeof Migration20261126000200_bind_data_source_secrets {
    return class extends Migration20261126000200_bind_data_source_secrets {
      protected override secretKey = secretKey;
    };
  }

  override async up(): Promise<void> {
    const rows = (await this.execute(`select id, org_id, uid, secure_json_data from "data_source" where "secure_json_data" <> '{}'::jsonb order by id for update`)) as unknown as Row[];
    if (rows.length === 0) return;
    if (!this.secretKey) throw new Error('sealing data source secrets to their rows needs [security] secret_key; run migrations through the server or `dashgate migrate`');
    const box = new SecretBox(this.secretKey);
    for (const row of rows) {
      const sealed: Record<string, string> = {};
      for (const [key, blob] of Object.entries(row.secure_json_data)) {
        let plaintext: string;
        try {
          plaintext = box.decrypt(blob, ''); // as sealed before the binding: no associated data
        } catch {
          sealed[key] = blob;
          continue;
        }
        sealed[key] = box.encrypt(plaintext, dataSourceSecretBinding(row.org_id, row.uid, key));
      }
      await this.execute(`update "data_source" set "secure_json_data" = ?::jsonb where "id" = ?`, [JSON.stringify(sealed), row.id]);
    }
  }
}
