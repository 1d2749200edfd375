import { Migration } from '@mikro-orm/migrations';

/** Whether PostgreSQL sees a statement's end: a `;` that no line comment swallows. */
const terminated = (sql: string) => sql.endsWith(';') && !/--[^\n]*$/.test(sql);

/**
 * A migration whose `addSql` statements reach PostgreSQL as one multi-statement query (the simple
 * protocol runs them in order, inside the migration's transaction, and stops at the first error)
 * instead of a round trip each: a new database's migrations, some 120 statements, then cost a
 * fraction of the time. Anything but a plain SQL string keeps a query of its own, in its place.
 */
export abstract class BatchedMigration extends Migration {
  override getQueries(): ReturnType<Migration['getQueries']> {
    const batched: ReturnType<Migration['getQueries']> = [];
    let run: string[] = [];
    const flush = () => {
      if (run.length) batched.push(run.join('\n'));
      run = [];
    };
    for (const query of super.getQueries()) {
      if (typeof query !== 'string') {
        flush();
        batched.push(query);
        continue;
      }
      const sql = query.trim();
      if (sql) run.push(terminated(sql) ? sql : `${sql}\n;`);
    }
    flush();
    return batched;
  }
}
