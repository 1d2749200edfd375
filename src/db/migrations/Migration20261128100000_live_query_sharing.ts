import { BatchedMigration } from './batched-migration.ts';

/**
 * Live queries shared across instances (query/live/sharing.ts): who leads each shared query, and
 * the newest answer its leader fetched, for the other instances watching it. Both tables hold
 * only what a running deployment needs this minute, so they are unlogged: no WAL for answers
 * rewritten at every refresh, and emptied after a crash, which costs one refresh.
 *
 * - `live_query_lease`: one row per shared query (`key`, a digest of its share key). `holder` is
 *   the session advisory lock of the leading instance's listening connection: the holder is alive
 *   while that lock is held. `tick` is the last refresh it claimed (epoch ms).
 * - `live_query_answer`: one row per shared query, overwritten at every refresh (the newest
 *   answer only, so a slow reader skips to it); `answer` in query/live/answer-codec.ts's form,
 *   stored out of line without compression (written often, read a few times, soon replaced).
 *   Rows past `expires_at` (epoch ms) are swept.
 */
export class Migration20261128100000_live_query_sharing extends BatchedMigration {
  override name = 'Migration20261128100000_live_query_sharing';

  override up(): void {
    this.addSql(`
      create unlogged table "live_query_lease" (
        "key" text primary key,
        "holder" bigint not null,
        "tick" bigint not null,
        "refresh_ms" bigint not null
      );`);
    this.addSql(`
      create unlogged table "live_query_answer" (
        "key" text primary key,
        "org_id" integer not null,
        "tick" bigint not null,
        "expires_at" bigint not null,
        "answer" bytea not null
      );`);
    this.addSql(`alter table "live_query_answer" alter column "answer" set storage external;`);
  }

  override down(): void {
    this.addSql('drop table if exists "live_query_answer";');
    this.addSql('drop table if exists "live_query_lease";');
  }
}
