import { describe, expect, it } from '@jest/globals';
import { describeStatement } from '../../src/db/tracing.ts';

describe('SQL statement spans', () => {
  it.each([
    ['select "d0".* from "data_source" as "d0" where "d0"."org_id" = $1 limit $2', 'SELECT', 'data_source'],
    ['insert into "user" ("login", "password") values ($1, $2) returning "id"', 'INSERT', 'user'],
    ['update "data_source" set "version" = $1 where "id" = $2', 'UPDATE', 'data_source'],
    ['delete from public.api_key where id = $1', 'DELETE', 'api_key'],
    ['  SELECT count(*) FROM "team_member"', 'SELECT', 'team_member'],
    ['begin', 'BEGIN', null],
    ['commit', 'COMMIT', null],
    ['select pg_advisory_xact_lock(1684107112)', 'SELECT', null],
    ['with x as (select 1) select * from x', 'WITH', null],
  ])('names %s by its kind and table', (text, operation, table) => {
    expect(describeStatement(text)).toEqual({ operation, table });
  });

  it('finds the table after a long column list', () => {
    const columns = Array.from({ length: 17 }, (_, i) => `"ds"."column_${i}" as "propertyName${i}"`).join(', ');
    expect(describeStatement(`select ${columns} from "data_source" as "ds" where "ds"."org_id" = $1`)).toEqual({ operation: 'SELECT', table: 'data_source' });
  });

  it('looks only near the start of a long statement', () => {
    expect(describeStatement(`select ${'a, '.repeat(500)} b from far_away`)).toEqual({ operation: 'SELECT', table: null });
  });
});
