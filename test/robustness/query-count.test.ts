import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AUTH_CHANGE_CHANNEL } from '../../src/auth/principal-cache.ts';
import { startCountedApp, type CountedApp } from '../support/counted-app.ts';
import { ADMIN, basic, call, gql } from '../support/server.ts';

/**
 * SQL statements per request, counted with MikroORM's query logger: reads must cost the same
 * number of statements whatever the number of rows (no N+1). The bench measures the same at
 * 5,000 rows; this is its fast version.
 */
let counted: CountedApp;
let orm: MikroORM;
let server: { url: string };
let token = '';
const statementsSent = () => counted.statements();

beforeAll(async () => {
  counted = await startCountedApp();
  ({ orm, server } = counted);
  token = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { auth: ADMIN, body: { name: 'counter', role: 'Viewer' } })).body.key}`;
});

afterAll(async () => {
  await counted.close();
});

/** Statements one request costs (the request's own, nothing else runs meanwhile). */
async function cost(request: () => Promise<{ status: number }>): Promise<number> {
  await request(); // a first call may refresh the token's last-used time
  const before = statementsSent();
  const res = await request();
  expect(res.status).toBe(200);
  return statementsSent() - before;
}

async function addDataSources(count: number): Promise<void> {
  const em = orm.em.fork();
  await em.execute(
    `insert into data_source (org_id, uid, name, type, access, url, json_data)
     select 1, 'qc-' || n, 'qc-' || lpad(n::text, 4, '0'), 'prometheus', 'proxy', 'http://p.example', '{"a":1}'::jsonb
       from generate_series((select count(*) from data_source)::int + 1, (select count(*) from data_source)::int + ?) as n`,
    [count],
  );
}

describe('statements per request', () => {
  it('stay the same for a list of 1 and of 400 data sources, over REST and GraphQL', async () => {
    await addDataSources(1);
    const restOne = await cost(() => call(server, 'GET', '/api/datasources', { auth: token }));
    const graphqlOne = await cost(() => gql(server, '{ currentOrganization { dataSources { nodes { id name typeName secureJsonFields } } } }', {}, token));
    await addDataSources(399);
    expect((await call(server, 'GET', '/api/datasources', { auth: token })).body).toHaveLength(400);
    const restMany = await cost(() => call(server, 'GET', '/api/datasources', { auth: token }));
    const graphqlMany = await cost(() => gql(server, '{ currentOrganization { dataSources { nodes { id name typeName secureJsonFields } } } }', {}, token));
    // The select: a caller verified before costs no query.
    expect([restOne, restMany]).toEqual([1, 1]);
    expect([graphqlOne, graphqlMany]).toEqual([1, 1]);
  });

  it('stays one for the list of a Viewer whose own grants and teams decide what it sees', async () => {
    const created = await call(server, 'POST', '/api/admin/users', { auth: ADMIN, body: { login: 'qc-viewer', password: 'qc-viewer-pass' } });
    const userId = created.body.id as number;
    const em = orm.em.fork();
    // 50 teams, the user in 10 of them; the Viewers' default taken from every other data source,
    // a team grant on every data source, and a grant to the user on every tenth.
    await em.execute(`insert into team (uid, org_id, name) select 'qc-team-' || n, 1, 'qc-team-' || n from generate_series(1, 50) as n`);
    await em.execute(`insert into team_member (team_id, org_id, user_id) select id, 1, ? from team where name in (select 'qc-team-' || n from generate_series(1, 10) as n)`, [userId]);
    await em.execute(`delete from data_source_permission where built_in_role = 'Viewer' and data_source_id % 2 = 0`);
    await em.execute(`insert into data_source_permission (data_source_id, org_id, team_id, level)
      select d.id, 1, t.id, 1 from data_source d join team t on t.name = 'qc-team-' || (d.id % 50 + 1)`);
    await em.execute(`insert into data_source_permission (data_source_id, org_id, user_id, level) select id, 1, ?, 2 from data_source where id % 10 = 5`, [userId]);
    const auth = basic('qc-viewer', 'qc-viewer-pass');
    const visible = (await call(server, 'GET', '/api/datasources', { auth })).body as Array<{ id: number }>;
    const [{ expected }] = await em.execute<Array<{ expected: number }>>(
      `select count(*)::int as expected from data_source where id % 2 = 1 or (id % 50 + 1) <= 10 or id % 10 = 5`);
    expect(visible).toHaveLength(expected);
    expect(await cost(() => call(server, 'GET', '/api/datasources', { auth }))).toBe(1);
    expect(await cost(() => gql(server, '{ currentOrganization { dataSources { nodes { id name } } } }', {}, auth))).toBe(1);
  });

  it('is one for a read by id once the caller is known, token or Basic, and two for a caller not yet verified', async () => {
    const [{ id }] = await orm.em.fork().execute<Array<{ id: number }>>(`select id from data_source order by id limit 1`);
    const read = (auth: string) => call(server, 'GET', `/api/datasources/${id}`, { auth });
    expect(await cost(() => read(token))).toBe(1);
    expect(await cost(() => read(ADMIN))).toBe(1);
    // Told that credentials changed (as the triggers tell every instance), the server verifies
    // the caller afresh: the token lookup, then the select.
    await orm.em.fork().execute(`select pg_notify('${AUTH_CHANGE_CHANNEL}', 'all')`);
    const before = statementsSent();
    expect((await read(token)).status).toBe(200);
    expect(statementsSent() - before).toBe(2);
  });
  it('reads nothing back for a write whose REST answer is a message; the graph reads the node when asked for it', async () => {
    const created = await call(server, 'POST', '/api/teams', { auth: ADMIN, body: { name: 'qc-renamed-0' } });
    expect(created.status).toBe(200);
    const teamId = created.body.teamId as number;
    const globalId = (await gql(server, `{ currentOrganization { team(databaseId: ${teamId}) { id } } }`, {}, ADMIN)).body.data.currentOrganization.team.id as string;
    let n = 0;
    const rest = await cost(() => call(server, 'PUT', `/api/teams/${teamId}`, { auth: ADMIN, body: { name: `qc-renamed-${++n}` } }));
    const update = (selection: string) => () => gql(server, `mutation($id: ID!, $name: String!) { teamUpdate(id: $id, input: { name: $name }) { ${selection} } }`, { id: globalId, name: `qc-renamed-${++n}` }, ADMIN);
    const errorsOnly = await cost(update('userErrors { message }'));
    const withTeam = await cost(update('team { name } userErrors { message }'));
    const read = await cost(() => gql(server, 'query($id: ID!) { node(id: $id) { ... on Team { name } } }', { id: globalId }, ADMIN));
    expect(read).toBeGreaterThan(0);
    expect(errorsOnly).toBe(rest);
    expect(withTeam).toBe(rest + read);
    expect((await call(server, 'GET', `/api/teams/${teamId}`, { auth: ADMIN })).body.name).toBe(`qc-renamed-${n}`);
  });
});
