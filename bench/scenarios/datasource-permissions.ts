import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { hashPassword } from '../../src/auth/passwords.ts';
import { compareRounds, figures } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow, Target } from '../lib/types.ts';

const DATA_SOURCES = 1_000;
const TEAMS = 50;
const USERS = 500;
/** Teams the measured user belongs to, in each org. */
const OWN_TEAMS = 5;
/** Issue target: CPU per row with permissions at most this many times the CPU per row without. */
const TARGET_PER_ROW_RATIO = 1.2;
/** The proxy's cost per request with permissions may not move by more than the noise between pairs. */
const TARGET_PROXY_RATIO = 0.9;
const COUNTED_REQUESTS = 20;
const EDITOR = { login: 'bench-editor', password: 'bench-editor-pw' };
const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
const ADMIN = basic('admin', 'admin');

/**
 * Two orgs of one database, alike in everything but their data source permissions: 1,000 data
 * sources, 50 teams and 500 members (Viewers and Editors, three teams each) in each, and the
 * measured user an Editor of both, in five teams of each. Org 1 keeps the defaults (Viewers and
 * Editors may query every data source). In the other every data source has grants of its own: five
 * users and three teams each, and the measured user sees each one by another way, a third through
 * a team of theirs, a third through a grant of their own, a third through the Editor role (raised
 * to Edit), the defaults removed from the first two thirds and the Viewer's from the last. So the
 * list has the same 1,000 rows in both orgs, and only the permission filter's work differs.
 */
async function seed(client: pg.Client): Promise<number> {
  const [granted] = (await client.query<{ id: number }>(`insert into org (name) values ('bench-granted') returning id`)).rows;
  const org = granted!.id;
  await client.query('begin');
  await client.query(
    `insert into "user" (login, email, name, org_id) select 'bench-user-' || n, 'bench-user-' || n || '@example.com', 'Bench user ' || n, 1 from generate_series(1, $1) as n`,
    [USERS],
  );
  await client.query(`insert into "user" (login, email, name, password_hash, org_id) values ($1, $2, $1, $3, 1)`, [EDITOR.login, `${EDITOR.login}@example.com`, await hashPassword(EDITOR.password)]);
  await client.query(
    `insert into org_user (org_id, user_id, role)
     select o.id, u.id, case when u.login = $2 or u.id % 2 = 0 then 'Editor' else 'Viewer' end
       from "user" u cross join (values (1), ($1::int)) as o(id) where u.login like 'bench-%'`,
    [org, EDITOR.login],
  );
  // The server admin administers the second org too (the proxy's baseline caller).
  await client.query(`insert into org_user (org_id, user_id, role) select $1, id, 'Admin' from "user" where login = 'admin'`, [org]);
  await client.query(
    `insert into team (uid, org_id, name) select 'bench-team-' || o.id || '-' || n, o.id, 'Bench team ' || lpad(n::text, 2, '0')
       from generate_series(1, $2) as n cross join (values (1), ($1::int)) as o(id)`,
    [org, TEAMS],
  );
  // Three teams per member, spread over all of them; the measured user in teams 1 to OWN_TEAMS.
  await client.query(
    `insert into team_member (team_id, org_id, user_id)
     select distinct t.id, t.org_id, u.id from "user" u
       cross join generate_series(0, 2) as k
       join team t on t.name = 'Bench team ' || lpad((((u.id * 7 + k * 13) % $1) + 1)::text, 2, '0')
      where u.login like 'bench-user-%'
     union
     select t.id, t.org_id, u.id from "user" u join team t on t.name <= 'Bench team ' || lpad($2::text, 2, '0') where u.login = $3`,
    [TEAMS, OWN_TEAMS, EDITOR.login],
  );
  await client.query(
    `insert into data_source (org_id, uid, name, type, access, url, basic_auth, basic_auth_user, json_data)
     select o.id, 'bench-' || o.id || '-' || n, 'bench-source-' || lpad(n::text, 5, '0'), 'prometheus', 'proxy', 'http://prom-' || n || '.example:9090',
            true, 'reader', jsonb_build_object('httpMethod', 'POST', 'timeInterval', '15s')
       from generate_series(1, $2) as n cross join (values (1), ($1::int)) as o(id)`,
    [org, DATA_SOURCES],
  );
  // The second org's own grants. n is the data source's number within its org.
  const numbered = `(select id, org_id, substring(uid from '[0-9]+$')::int as n from data_source where org_id = $1)`;
  await client.query(`delete from data_source_permission p using ${numbered} d where p.data_source_id = d.id and (d.n % 3 <> 2 or p.built_in_role = 'Viewer')`, [org]);
  await client.query(`update data_source_permission p set level = 2 from ${numbered} d where p.data_source_id = d.id and p.built_in_role = 'Editor'`, [org]);
  await client.query(
    `insert into data_source_permission (data_source_id, org_id, team_id, level)
     select distinct on (d.id, t.id) d.id, d.org_id, t.id, 1 + (d.n + k) % 2 from ${numbered} d
       cross join generate_series(0, 2) as k
       join team t on t.org_id = d.org_id and t.name = 'Bench team ' || lpad((((d.n + k * 17) % $2) + 1)::text, 2, '0')
     union
     select d.id, d.org_id, t.id, 1 from ${numbered} d
       join team t on t.org_id = d.org_id and t.name = 'Bench team ' || lpad((((d.n / 3) % $3) + 1)::text, 2, '0')
      where d.n % 3 = 0
     on conflict do nothing`,
    [org, TEAMS, OWN_TEAMS],
  );
  await client.query(
    `insert into data_source_permission (data_source_id, org_id, user_id, level)
     select distinct d.id, d.org_id, u.id, 1 + (d.n + k) % 2 from ${numbered} d
       cross join generate_series(0, 4) as k
       join "user" u on u.login = 'bench-user-' || (((d.n * 11 + k * 97) % $2) + 1)
     union
     select d.id, d.org_id, u.id, 1 from ${numbered} d join "user" u on u.login = $3 where d.n % 3 = 1
     on conflict do nothing`,
    [org, USERS, EDITOR.login],
  );
  await client.query('commit');
  await client.query('analyze');
  return org;
}

/** A canned upstream for the proxy pair, in this process (its CPU is nobody's figure). */
function upstream(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"success","data":{"resultType":"vector","result":[]}}');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function getOk(target: Target, path: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${target.url}${path}`, { headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

async function statementsPerRequest(target: Target, path: string, headers: Record<string, string>): Promise<number> {
  // Uncounted: the instance's first call from this caller also verifies the password.
  await getOk(target, path, headers);
  const before = await target.queries();
  for (let i = 0; i < COUNTED_REQUESTS; i++) await getOk(target, path, headers);
  return ((await target.queries()) - before) / COUNTED_REQUESTS;
}

/**
 * GET /api/datasources as an Editor who is a member of teams, with 1,000 data sources each with
 * its own grants (users, teams, a changed built-in role) against the same 1,000 with the default
 * permissions, in one process (two orgs): SQL statements per request and server CPU per row; and
 * the data source proxy as that Editor through a data source with grants, against one with the
 * defaults and against the org Admin (whose level needs no look-up).
 */
export default async function dataSourcePermissions(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_permissions');
  const app = await ctx.startTarget({ kind: 'app', connection });
  const counting = await ctx.startTarget({ kind: 'app', connection, countQueries: true });
  const client = new pg.Client(connection);
  await client.connect();
  const canned = await upstream();
  const rows: BenchRow[] = [];
  try {
    const started = performance.now();
    const org = await seed(client);
    const [{ grants }] = (await client.query<{ grants: number }>('select count(*)::int as grants from data_source_permission where org_id = $1', [org])).rows as [{ grants: number }];
    ctx.log(`permissions: seeded in ${Math.round(performance.now() - started)} ms (${grants} grants in the second org)`);
    const editor = basic(EDITOR.login, EDITOR.password);
    const inOrg = (orgId: number, authorization = editor) => ({ authorization, 'x-grafana-org-id': String(orgId), accept: 'application/json' });
    const defaults = inOrg(1);
    const granted = inOrg(org);
    for (const [name, headers] of [['defaults', defaults], ['grants', granted]] as const) {
      const listed = (JSON.parse(await getOk(app, '/api/datasources', headers)) as unknown[]).length;
      if (listed !== DATA_SOURCES) throw new Error(`the Editor lists ${listed} data sources with ${name}, expected ${DATA_SOURCES}`);
    }
    // That the grants decide something: a Viewer there sees what its teams and its own grants give.
    const [viewer] = (await client.query<{ login: string }>(
      `select u.login from "user" u join org_user ou on ou.user_id = u.id and ou.org_id = $1 and ou.role = 'Viewer' where u.login like 'bench-user-%' order by u.id limit 1`, [org])).rows;
    await client.query(`update "user" set password_hash = $2 where login = $1`, [viewer!.login, await hashPassword('bench-viewer-pw')]);
    const viewerSees = (JSON.parse(await getOk(app, '/api/datasources', inOrg(org, basic(viewer!.login, 'bench-viewer-pw')))) as unknown[]).length;

    const statements = {
      defaults: await statementsPerRequest(counting, '/api/datasources', defaults),
      granted: await statementsPerRequest(counting, '/api/datasources', granted),
    };
    ctx.log(`permissions: ${statements.defaults} / ${statements.granted} SQL statements per request (defaults / grants)`);

    const scenario = `GET /api/datasources as an Editor in ${OWN_TEAMS} teams (${DATA_SOURCES.toLocaleString('en-US')} data sources, ${TEAMS} teams, ${USERS} users)`;
    const [withGrants, withDefaults] = await ctx.compare([
      { name: 'list with grants', target: app, load: { path: '/api/datasources', headers: granted, connections: 1 } },
      { name: 'list with defaults', target: app, load: { path: '/api/datasources', headers: defaults, connections: 1 } },
    ]);
    const grantsLoad = figures(withGrants!);
    const defaultsLoad = figures(withDefaults!);
    const perRow = (cpu: number | undefined) => (cpu === undefined ? NaN : cpu / DATA_SOURCES);
    rows.push({
      scenario,
      measurement: 'with the defaults: server CPU per row (1 connection)',
      value: perRow(defaultsLoad.cpuMicrosPerRequest),
      unit: 'µs',
      load: defaultsLoad,
      notes: `${statements.defaults} SQL statements/request`,
    });
    rows.push({
      scenario,
      measurement: `with ${grants.toLocaleString('en-US')} grants of users, teams and roles: server CPU per row (1 connection)`,
      value: perRow(grantsLoad.cpuMicrosPerRequest),
      unit: 'µs',
      load: grantsLoad,
      // Both lists have the same rows, so the CPU ratio per request is the ratio per row.
      comparisons: compareRounds(withGrants!, withDefaults!, 'the defaults'),
      target: { on: 'ratio', op: '>=', bound: 1 / TARGET_PER_ROW_RATIO, label: `CPU per row <= ${TARGET_PER_ROW_RATIO}x the defaults` },
      notes: `${statements.granted} SQL statements/request; a Viewer in three teams lists ${viewerSees} of them`,
    });
    rows.push({
      scenario,
      measurement: 'SQL statements per request (defaults / grants)',
      value: Math.max(statements.defaults, statements.granted),
      unit: 'count',
      text: `${statements.defaults} / ${statements.granted}`,
      target: { on: 'value', op: '<=', bound: 1, label: 'one statement' },
      notes: `counted over ${COUNTED_REQUESTS} sequential requests each from a caller already verified, with MikroORM's query logger`,
    });

    // The proxy: one data source of each org pointed at the canned upstream. In the second org the
    // Editor reaches it through a team (its number is a multiple of 3).
    const upstreamUrl = `http://127.0.0.1:${(canned.address() as AddressInfo).port}`;
    await client.query(`update data_source set url = $1 where uid in ('bench-1-3', $2)`, [upstreamUrl, `bench-${org}-3`]);
    const proxyPath = (orgId: number) => `/api/datasources/proxy/uid/bench-${orgId}-3/api/v1/query?query=up`;
    for (const [path, headers] of [[proxyPath(1), defaults], [proxyPath(org), granted], [proxyPath(org), inOrg(org, ADMIN)]] as const) await getOk(app, path, headers);
    const proxyScenario = 'Data source proxy as an Editor in teams, through a data source with grants';
    const [proxyGranted, proxyDefaults, proxyAdmin] = await ctx.compare([
      { name: 'proxy, data source with grants', target: app, load: { path: proxyPath(org), headers: granted } },
      { name: 'proxy, data source with the defaults', target: app, load: { path: proxyPath(1), headers: defaults } },
      { name: 'proxy, org Admin', target: app, load: { path: proxyPath(org), headers: inOrg(org, ADMIN) } },
    ]);
    const grantedProxyLoad = figures(proxyGranted!);
    rows.push({
      scenario: proxyScenario,
      measurement: 'Editor, data source with grants, against the same with the defaults (10 connections)',
      value: grantedProxyLoad.requestsPerSecond,
      unit: 'req/s',
      load: grantedProxyLoad,
      comparisons: compareRounds(proxyGranted!, proxyDefaults!, 'the defaults'),
      target: { on: 'ratio', op: '>=', bound: TARGET_PROXY_RATIO },
      notes: `the caller's level comes from the per-instance access cache; ${fmt.us(figures(proxyDefaults!).cpuMicrosPerRequest ?? NaN)} server CPU/request with the defaults`,
    });
    rows.push({
      scenario: proxyScenario,
      measurement: 'Editor, data source with grants, against the org Admin (no permission look-up)',
      value: grantedProxyLoad.requestsPerSecond,
      unit: 'req/s',
      comparisons: compareRounds(proxyGranted!, proxyAdmin!, 'the org Admin'),
      notes: `${fmt.us(figures(proxyAdmin!).cpuMicrosPerRequest ?? NaN)} server CPU/request as the org Admin`,
    });
    return rows;
  } finally {
    canned.close();
    await client.end();
    await Promise.all([app.close(), counting.close()]);
  }
}
