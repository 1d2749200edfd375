import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AUTH_CHANGE_CHANNEL } from '../../src/auth/principal-cache.ts';
import { startCountedApp, type CountedApp } from '../support/counted-app.ts';
import { ADMIN, gql } from '../support/server.ts';

/**
 * SQL statements per nested GraphQL query, counted with MikroORM's query logger: each level of the
 * graph is read in one statement for all its parents, so the count is the same whether a level
 * holds 1, 10 or 100 objects (no N+1).
 */
let counted: CountedApp;
let orm: MikroORM;
let server: { url: string };
const statementsSent = () => counted.statements();

beforeAll(async () => {
  counted = await startCountedApp();
  ({ orm, server } = counted);
  await seed();
});

afterAll(async () => {
  await counted.close();
});

/** Statements one request costs (the request's own, nothing else runs meanwhile), and its answer. */
async function cost<T extends { status: number }>(request: () => Promise<T>): Promise<[number, T]> {
  await request(); // a first call may refresh the caller's last-seen time
  const before = statementsSent();
  const res = await request();
  expect(res.status).toBe(200);
  return [statementsSent() - before, res];
}

/** 100 orgs of the admin, each with 100 data sources and the same 100 members; 100 service accounts of the main org with 100 tokens each. */
async function seed(): Promise<void> {
  const em = orm.em.fork();
  await em.execute(`insert into org (name) select 'gqc-' || lpad(n::text, 3, '0') from generate_series(1, 100) as n`);
  await em.execute(`insert into org_user (org_id, user_id, role) select id, 1, 'Admin' from org where name like 'gqc-%'`);
  await em.execute(`insert into "user" (login, email, org_id) select 'gqc-u' || n, 'gqc-u' || n || '@example.com', 1 from generate_series(1, 100) as n`);
  await em.execute(`insert into org_user (org_id, user_id, role)
    select o.id, u.id, 'Viewer' from org o cross join "user" u where o.name like 'gqc-%' and u.login like 'gqc-u%'`);
  await em.execute(`insert into data_source (org_id, uid, name, type, access, url, json_data)
    select o.id, 'gqc-' || n, 'gqc-' || lpad(n::text, 3, '0'), 'prometheus', 'proxy', 'http://p.example', '{}'::jsonb
      from org o cross join generate_series(1, 100) as n where o.name like 'gqc-%'`);
  await em.execute(`insert into "user" (login, email, name, org_id, is_service_account)
    select 'sa-1-gqc-' || n, 'sa-1-gqc-' || n, 'gqc-sa-' || lpad(n::text, 3, '0'), 1, true from generate_series(1, 100) as n`);
  await em.execute(`insert into org_user (org_id, user_id, role) select 1, id, 'Viewer' from "user" where login like 'sa-1-gqc-%'`);
  await em.execute(`insert into api_key (org_id, name, key_hash, role, service_account_id)
    select 1, u.login || '-' || n, md5(u.login || '-' || n), 'Viewer', u.id from "user" u cross join generate_series(1, 100) as n where u.login like 'sa-1-gqc-%'`);
}

const ORGS = `query($n: Int!) { allOrganizations(first: $n, query: "gqc-") { totalCount nodes { id name
  dataSources(first: $n) { totalCount nodes { id databaseId name organization { name } } }
  members(first: $n) { totalCount nodes { id login role user { login } organization { name } } } } } }`;
const ACCOUNTS = `query($n: Int!) { viewer { currentOrganization { serviceAccounts(first: $n, query: "gqc-") { totalCount nodes { id name
  organization { name } tokens(first: $n) { totalCount nodes { id name serviceAccount { name } } } } } } } }`;

/** The objects of each level the answer holds (as a check that the level really grew). */
function sizes(answer: unknown): number[] {
  const levels: number[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (Array.isArray(value)) {
      levels[depth] = (levels[depth] ?? 0) + value.length;
      for (const item of value) walk(item, depth + 1);
    } else if (value && typeof value === 'object') {
      for (const child of Object.values(value)) walk(child, depth);
    }
  };
  walk(answer, 0);
  return levels;
}

describe('statements per nested GraphQL query', () => {
  it('stay the same for 1, 10 and 100 orgs, each with 1, 10 and 100 data sources and members', async () => {
    const counts: number[] = [];
    for (const n of [1, 10, 100]) {
      const [count, res] = await cost(() => gql(server, ORGS, { n }));
      counts.push(count);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.allOrganizations.nodes).toHaveLength(n);
      expect(sizes(res.body.data)).toEqual([n, 2 * n * n]);
    }
    // Orgs, the caller's roles, data sources, members, then their orgs and users: one each.
    expect(counts).toEqual([6, 6, 6]);
  });

  it('stay the same for 1, 10 and 100 service accounts, each with 1, 10 and 100 tokens', async () => {
    const counts: number[] = [];
    for (const n of [1, 10, 100]) {
      const [count, res] = await cost(() => gql(server, ACCOUNTS, { n }));
      counts.push(count);
      expect(res.body.errors).toBeUndefined();
      expect(sizes(res.body.data)).toEqual([n, n * n]);
    }
    // Accounts, their tokens and their orgs, the tokens' accounts (the walk through viewer and
    // currentOrganization reads neither the caller's row nor its org's, and the caller's role in
    // the org the request acts in is its principal's: no statement for its roles).
    expect(counts).toEqual([4, 4, 4]);
  });

  it('walk from viewer to the org\'s data sources reading only the list', async () => {
    await orm.em.fork().execute(`insert into data_source (org_id, uid, name, type, access, url, json_data)
      select 1, 'gqc-main-' || n, 'gqc-main-' || n, 'loki', 'proxy', 'http://l.example', '{}'::jsonb from generate_series(1, 5) as n`);
    const walk = 'query($n: Int!) { viewer { currentOrganization { dataSources(first: $n) { totalCount nodes { id databaseId name } } } } }';
    const [count, res] = await cost(() => gql(server, walk, { n: 5 }));
    expect(res.body.errors).toBeUndefined();
    expect((res.body.data as any).viewer.currentOrganization.dataSources.nodes).toHaveLength(5);
    expect(count).toBe(1);
    // Asking for the org's name or the caller's login reads each row, once.
    const [named] = await cost(() => gql(server, 'query($n: Int!) { viewer { login currentOrganization { name dataSources(first: $n) { totalCount } } } }', { n: 5 }));
    expect(named).toBe(3);
  });

  it('stay the same for node reads of 1, 10 and 100 ids', async () => {
    const ids = (await gql(server, ORGS, { n: 100 })).body.data.allOrganizations.nodes
      .map((org: { dataSources: { nodes: Array<{ id: string }> } }) => org.dataSources.nodes[0]!.id);
    const counts: number[] = [];
    for (const n of [1, 10, 100]) {
      const query = 'query($ids: [ID!]!) { nodes(ids: $ids) { id ... on DataSource { organization { name } } } }';
      const [count, res] = await cost(() => gql(server, query, { ids: ids.slice(0, n) }));
      counts.push(count);
      expect(res.body.data.nodes.filter(Boolean)).toHaveLength(n);
    }
    // The data sources, the caller's roles, their orgs.
    expect(counts).toEqual([3, 3, 3]);
  });
});
