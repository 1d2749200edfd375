import pg from 'pg';
import { compareRounds, figures } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow, Comparison, LoadOptions, Measured, Target } from '../lib/types.ts';

/** Issue 33's targets, as server CPU ratios (the baseline's CPU per request over the graph's). */
const TARGET_LIST = 1 / 1.2;
const TARGET_NESTED = 1 / 1.5;
const TARGET_NODE = 1 / 1.1;

const LISTED = 1_000;
const ORGS = 10;
const SOURCES_PER_ORG = 100;
const MEMBERS_PER_ORG = 50;

/** The fields of a REST list item, asked of the graph's nodes (plus their global id). */
const LIST_FIELDS = 'id databaseId uid orgId name type typeName access url user database basicAuth isDefault jsonData readOnly';
/** The fields of `GET /api/orgs/:orgId/users`. */
const MEMBER_FIELDS = 'orgId userId uid email name avatarUrl login role lastSeenAt created lastSeenAtAge isDisabled authLabels isExternallySynced isProvisioned';
/** Every field of a data source read, but its id. */
const READ_FIELDS = 'uid orgId name type access url user database basicAuth basicAuthUser withCredentials isDefault jsonData secureJsonFields version readOnly';

const graphql = (query: string, variables: Record<string, unknown>, headers: Record<string, string>): LoadOptions => ({
  method: 'POST',
  path: '/graphql',
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify({ query, variables }),
});

async function post(target: Target, path: string, auth: string, body: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${target.url}${path}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, any>>;
}

/** What a request answers, checked before it is measured: a load of errors would measure nothing. */
async function answer(target: Target, load: LoadOptions): Promise<any> {
  const res = await fetch(`${target.url}${load.path}`, { method: load.method ?? 'GET', headers: load.headers, body: load.body });
  const body = await res.json() as any;
  if (!res.ok || body?.errors) throw new Error(`${load.path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/**
 * A comparison of a sum of REST calls (each measured as a variant of its own) with one graph
 * request, round by round: the REST calls' server CPU per request, each times the number of
 * times the client makes it, over the graph request's.
 */
function cpuAgainstSum(graph: Measured, calls: Array<{ m: Measured; times: number }>, of: string): Comparison {
  const rounds = graph.rounds.map((round, i) => calls.reduce((sum, c) => sum + c.m.rounds[i]!.cpuMicrosPerRequest! * c.times, 0) / round.cpuMicrosPerRequest!);
  const sorted = [...rounds].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return { kind: 'cpu', of, value: (sorted[Math.floor(middle)]! + sorted[Math.ceil(middle)]!) / 2, rounds };
}

/**
 * The graph against REST doing the same work, by server CPU per request (each server in a process
 * of its own): 1,000 data sources through the connection against `GET /api/datasources`; one
 * nested query over 10 orgs (each with 100 data sources and 50 members) against the REST calls a
 * client makes for the same (its orgs, then each org's data sources and members); `node(id)`
 * against the flat `dataSource(id)`. Each read of one data source has a fresh process of its own,
 * as alike as two processes get: in the process that had answered the lists and nested queries
 * before, `node(id)` and `dataSource(id)` both cost 4–6% more than in a fresh one (one run), so
 * reading `node(id)` there measured that history against a baseline without it.
 */
export default async function graph(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_graph');
  const graphApp = await ctx.startTarget({ kind: 'app', connection });
  const restApp = await ctx.startTarget({ kind: 'app', connection });
  const flatApp = await ctx.startTarget({ kind: 'app', connection });
  const nodeApp = await ctx.startTarget({ kind: 'app', connection });
  const client = new pg.Client(connection);
  await client.connect();
  const admin = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
  try {
    // A service account token of the main org: the graph's viewer (a legacy API key has none).
    const sa = await post(graphApp, '/api/serviceaccounts', admin, { name: 'bench-graph', role: 'Admin' });
    const token = { authorization: `Bearer ${(await post(graphApp, `/api/serviceaccounts/${sa.id}/tokens`, admin, { name: 'bench-graph' })).key}` };
    await client.query(
      `insert into data_source (org_id, uid, name, type, access, url, basic_auth, basic_auth_user, json_data, secure_json_data)
       select 1, 'graph-' || n, 'graph-source-' || lpad(n::text, 5, '0'), 'prometheus', 'proxy', 'http://prom-' || n || '.example:9090',
              true, 'reader', jsonb_build_object('httpMethod', 'POST', 'timeInterval', '15s'), '{}'::jsonb
         from generate_series(1, $1) as n`,
      [LISTED],
    );

    // The nested query's user: Admin of 10 orgs, each with 100 data sources and 49 other members.
    await post(graphApp, '/api/admin/users', admin, { login: 'bench-nested', password: 'bench-nested-secret' });
    const nested = { authorization: `Basic ${Buffer.from('bench-nested:bench-nested-secret').toString('base64')}` };
    const orgIds: number[] = [];
    for (let o = 1; o <= ORGS; o++) {
      const { rows: [org] } = await client.query<{ id: number }>(`insert into org (name) values ($1) returning id`, [`Bench Graph ${o}`]);
      orgIds.push(org!.id);
      await client.query(`insert into org_user (org_id, user_id, role) select $1::int, id, 'Admin' from "user" where login = 'bench-nested'`, [org!.id]);
      await client.query(
        `with added as (insert into "user" (login, email, name, org_id)
           select 'graph-' || $1::int || '-' || n, 'graph-' || $1::int || '-' || n || '@bench.test', 'Member ' || n, $1::int from generate_series(1, $2::int) as n returning id)
         insert into org_user (org_id, user_id, role) select $1::int, id, 'Viewer' from added`,
        [org!.id, MEMBERS_PER_ORG - 1],
      );
      await client.query(
        `insert into data_source (org_id, uid, name, type, access, url, json_data, secure_json_data)
         select $1::int, 'nested-' || n, 'nested-source-' || lpad(n::text, 4, '0'), 'loki', 'proxy', 'http://loki-' || n || '.example:3100', '{}'::jsonb, '{}'::jsonb
           from generate_series(1, $2::int) as n`,
        [org!.id, SOURCES_PER_ORG],
      );
    }
    // The user leaves the main org: its orgs are exactly the 10 (so are the REST client's).
    await client.query(`delete from org_user where org_id = 1 and user_id = (select id from "user" where login = 'bench-nested')`);
    await client.query(`update "user" set org_id = $1::int where login = 'bench-nested'`, [orgIds[0]]);

    // Page sizes as variables, as clients send them: a literal `first` counts that many times against [graphql] max_cost.
    const listGraph = graphql(`query List($first: Int!) { viewer { currentOrganization { dataSources(first: $first) { nodes { ${LIST_FIELDS} } } } } }`, { first: LISTED }, token);
    const listRest: LoadOptions = { path: '/api/datasources', headers: token };
    const nestedGraph = graphql(`query Nested($orgs: Int!, $sources: Int!, $members: Int!) { viewer { organizations(first: $orgs) { nodes { databaseId name
      dataSources(first: $sources) { nodes { ${LIST_FIELDS} } }
      members(first: $members) { nodes { ${MEMBER_FIELDS} } } } } } }`, { orgs: ORGS, sources: SOURCES_PER_ORG, members: MEMBERS_PER_ORG }, nested);
    const orgsRest: LoadOptions = { path: '/api/user/orgs', headers: nested };
    const sourcesRest: LoadOptions = { path: '/api/datasources', headers: { ...nested, 'x-grafana-org-id': String(orgIds[0]) } };
    const membersRest: LoadOptions = { path: `/api/orgs/${orgIds[0]}/users`, headers: nested };

    // Each side must answer what the other does, or the comparison measures nothing.
    const listed = (await answer(graphApp, listGraph)).data.viewer.currentOrganization.dataSources.nodes;
    const restListed = await answer(restApp, listRest);
    if (listed.length !== LISTED || restListed.length !== LISTED) throw new Error(`listed ${listed.length} (graph) and ${restListed.length} (REST), not ${LISTED}`);
    const orgs = (await answer(graphApp, nestedGraph)).data.viewer.organizations.nodes;
    if (orgs.length !== ORGS || orgs.some((o: any) => o.dataSources.nodes.length !== SOURCES_PER_ORG || o.members.nodes.length !== MEMBERS_PER_ORG)) {
      throw new Error('the nested query did not answer 10 orgs of 100 data sources and 50 members');
    }
    if ((await answer(restApp, orgsRest)).length !== ORGS || (await answer(restApp, sourcesRest)).length !== SOURCES_PER_ORG || (await answer(restApp, membersRest)).length !== MEMBERS_PER_ORG) {
      throw new Error('the REST calls did not answer 10 orgs, 100 data sources and 50 members');
    }

    const [first] = listed;
    const nodeRead = graphql(`query Node($id: ID!) { node(id: $id) { ... on DataSource { databaseId ${READ_FIELDS} } } }`, { id: first.id }, token);
    const flatRead = graphql(`query Flat($id: Int!) { currentOrganization { dataSource(databaseId: $id) { id: databaseId ${READ_FIELDS} } } }`, { id: first.databaseId }, token);
    const read = await answer(nodeApp, nodeRead);
    const flat = await answer(flatApp, flatRead);
    const { databaseId, ...nodeFields } = read.data.node;
    const { id, ...flatFields } = flat.data.currentOrganization.dataSource;
    if (databaseId !== id || JSON.stringify(nodeFields) !== JSON.stringify(flatFields)) throw new Error('node(id) and dataSource(id) answer different data sources');

    ctx.log(`graph: ${LISTED} data sources listed; ${ORGS} orgs of ${SOURCES_PER_ORG} data sources and ${MEMBERS_PER_ORG} members; node(id) against dataSource(id)`);
    const scenario = 'The graph against REST and the flat fields';
    const rows: BenchRow[] = [];

    const [graphList, restList] = await ctx.compare([
      { name: 'graph: dataSources(first: $first), 1,000', target: graphApp, load: { ...listGraph, connections: 1 } },
      { name: 'REST: GET /api/datasources (1,000)', target: restApp, load: { ...listRest, connections: 1 } },
    ]);
    const perRow = (m: Measured) => figures(m).cpuMicrosPerRequest! / LISTED;
    rows.push({
      scenario,
      measurement: `${LISTED.toLocaleString('en-US')} data sources through \`dataSources(first: $first)\`: server CPU per row (1 connection)`,
      value: perRow(graphList!),
      unit: 'µs',
      load: figures(graphList!),
      comparisons: compareRounds(graphList!, restList!, 'GET /api/datasources'),
      target: { on: 'ratio', op: '>=', bound: TARGET_LIST, label: 'server CPU per row <= 1.2x REST\'s (ratio >= 0.83x)' },
      notes: `REST ${fmt.us(perRow(restList!))} per row`,
    });
    rows.push({
      scenario,
      measurement: `GET /api/datasources, ${LISTED.toLocaleString('en-US')} data sources (baseline): server CPU per row (1 connection)`,
      value: perRow(restList!),
      unit: 'µs',
      load: figures(restList!),
    });

    const [graphNested, restOrgs, restSources, restMembers] = await ctx.compare([
      { name: 'graph: 10 orgs x (100 data sources, 50 members)', target: graphApp, load: { ...nestedGraph, connections: 1 } },
      { name: 'REST: GET /api/user/orgs', target: restApp, load: { ...orgsRest, connections: 1 } },
      { name: 'REST: GET /api/datasources (100)', target: restApp, load: { ...sourcesRest, connections: 1 } },
      { name: 'REST: GET /api/orgs/:orgId/users (50)', target: restApp, load: { ...membersRest, connections: 1 } },
    ]);
    const calls = [{ m: restOrgs!, times: 1 }, { m: restSources!, times: ORGS }, { m: restMembers!, times: ORGS }];
    const restSum = calls.reduce((sum, c) => sum + figures(c.m).cpuMicrosPerRequest! * c.times, 0);
    rows.push({
      scenario,
      measurement: `one nested query, ${ORGS} orgs each with ${SOURCES_PER_ORG} data sources and ${MEMBERS_PER_ORG} members: server CPU per request (1 connection)`,
      value: figures(graphNested!).cpuMicrosPerRequest! / 1000,
      unit: 'ms',
      load: figures(graphNested!),
      comparisons: [cpuAgainstSum(graphNested!, calls, `the ${1 + 2 * ORGS} REST calls`)],
      target: { on: 'ratio', op: '>=', bound: TARGET_NESTED, label: 'server CPU <= 1.5x the REST calls\' (ratio >= 0.67x)' },
      notes: `REST: GET /api/user/orgs once, GET /api/datasources and GET /api/orgs/:orgId/users ${ORGS} times each, ${fmt.us(restSum)} server CPU together`,
    });

    const [graphNode, flatField] = await ctx.compare([
      { name: 'graph: node(id)', target: nodeApp, load: nodeRead },
      { name: 'flat: dataSource(id)', target: flatApp, load: flatRead },
    ]);
    rows.push({
      scenario,
      measurement: 'POST /graphql `node(id:)` on a data source, all fields',
      value: figures(graphNode!).requestsPerSecond,
      unit: 'req/s',
      load: figures(graphNode!),
      comparisons: compareRounds(graphNode!, flatField!, 'dataSource(id)'),
      target: { on: 'ratio', op: '>=', bound: TARGET_NODE, label: 'server CPU <= 1.1x dataSource(id)\'s (ratio >= 0.91x)' },
    });
    rows.push({
      scenario,
      measurement: 'POST /graphql `dataSource(id)`, all fields (baseline)',
      value: figures(flatField!).requestsPerSecond,
      unit: 'req/s',
      load: figures(flatField!),
    });
    return rows;
  } finally {
    await client.end();
    await Promise.all([graphApp.close(), restApp.close(), flatApp.close(), nodeApp.close()]);
  }
}
