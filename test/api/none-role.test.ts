import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { subscribe } from '../support/sse.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * The `None` basic role (the original's since v10): a member of the org with no permission of its
 * own, who sees only what teams and per-data-source grants give it, everywhere a role is checked.
 */
let server: TestServer;
let upstream: Upstream;
const NONE = basic('none-member', 'none-pass');
let noneId: number;
let teamId: number;
const ds: Record<string, { id: number; uid: string }> = {};

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }));
    });
  });
  server = await startTestServer({ overrides: { live: { min_refresh: '200ms' } } });
  for (const [name, type, url] of [['td-granted', 'grafana-testdata-datasource', ''], ['td-other', 'grafana-testdata-datasource', ''], ['prom-granted', 'prometheus', upstream.url], ['prom-other', 'prometheus', upstream.url]]) {
    const created = await call(server, 'POST', '/api/datasources', { body: { name, type, access: 'proxy', url } });
    expect(created.status).toBe(200);
    ds[name!] = { id: created.body.id, uid: created.body.datasource.uid };
  }
  noneId = (await call(server, 'POST', '/api/admin/users', { body: { login: 'none-member', email: 'none@example.com', password: 'none-pass' } })).body.id;
  teamId = (await call(server, 'POST', '/api/teams', { body: { name: 'none-team' } })).body.teamId;
});

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

const setRole = (role: string) => call(server, 'PATCH', `/api/org/users/${noneId}`, { body: { role } });
const walk = (uid: string) => ({ refId: 'A', datasource: { type: 'grafana-testdata-datasource', uid }, scenarioId: 'random_walk', seed: 3, intervalMs: 60000 });
const query = (uid: string, auth = NONE) => call(server, 'POST', '/api/ds/query', { auth, body: { from: 'now-1h', to: 'now', queries: [walk(uid)] } });
const names = (list: Array<{ name: string }>) => list.map((d) => d.name).sort();

describe('writing and listing the None role', () => {
  it('is accepted wherever a role is written and listed as "None"', async () => {
    // The current org's members.
    expect((await setRole('None')).body).toEqual({ message: 'Organization user updated' });
    const listed = (await call(server, 'GET', '/api/org/users')).body.find((u: { login: string }) => u.login === 'none-member');
    expect(listed.role).toBe('None');
    expect((await call(server, 'GET', '/api/user/orgs', { auth: NONE })).body).toEqual([{ orgId: 1, name: 'Main Org.', role: 'None' }]);
    // An org by id, adding and updating.
    const org = (await call(server, 'POST', '/api/orgs', { body: { name: 'None Org' } })).body.orgId;
    const added = await call(server, 'POST', `/api/orgs/${org}/users`, { body: { loginOrEmail: 'none-member', role: 'None' } });
    expect(added.status).toBe(200);
    expect((await call(server, 'GET', `/api/orgs/${org}/users`)).body.map((u: { login: string; role: string }) => [u.login, u.role])).toContainEqual(['none-member', 'None']);
    expect((await call(server, 'PATCH', `/api/orgs/${org}/users/${noneId}`, { body: { role: 'Editor' } })).status).toBe(200);
    expect((await call(server, 'PATCH', `/api/orgs/${org}/users/${noneId}`, { body: { role: 'None' } })).status).toBe(200);
    // POST /api/org/users with None (a user of the main org, added to the new one).
    const other = (await call(server, 'POST', '/api/admin/users', { body: { login: 'none-other', password: 'none-pass' } })).body.id;
    const headers = { 'X-Grafana-Org-Id': String(org) };
    expect((await call(server, 'POST', '/api/org/users', { headers, body: { loginOrEmail: 'none-other', role: 'None' } })).status).toBe(200);
    // Roles are case-sensitive, as the original's.
    const wrong = await call(server, 'PATCH', `/api/org/users/${other}`, { body: { role: 'none' } });
    expect([wrong.status, wrong.body]).toEqual([400, { message: 'Invalid role specified' }]);

    // Service accounts and their tokens.
    const sa = await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'none-sa', role: 'None' } });
    expect([sa.status, sa.body.role]).toEqual([201, 'None']);
    expect((await call(server, 'PATCH', `/api/serviceaccounts/${sa.body.id}`, { body: { role: 'Viewer' } })).body.serviceaccount.role).toBe('Viewer');
    expect((await call(server, 'PATCH', `/api/serviceaccounts/${sa.body.id}`, { body: { role: 'None' } })).body.serviceaccount.role).toBe('None');
    const token = (await call(server, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { body: { name: 't' } })).body.key;
    // A None token passes only what grants give: nothing here, no org read.
    expect((await call(server, 'GET', '/api/org', { auth: `Bearer ${token}` })).status).toBe(403);
    expect((await call(server, 'GET', '/api/datasources', { auth: `Bearer ${token}` })).body).toEqual([]);

    // The graph: a membership's role, written through the mutation.
    const inOrg = await gql(server, `{ allOrganizations(query: "None Org") { nodes { members { nodes { id login role } } } } }`);
    const otherMember = inOrg.body.data.allOrganizations.nodes[0].members.nodes.find((m: { login: string }) => m.login === 'none-other');
    expect(otherMember.role).toBe('None');
    const update = await gql(server, 'mutation($id: ID!) { organizationMemberUpdate(id: $id, input: { role: "Viewer" }) { member { role } userErrors { message } } }', { id: otherMember.id });
    expect(update.body.data.organizationMemberUpdate).toEqual({ member: { role: 'Viewer' }, userErrors: [] });
    const back = await gql(server, 'mutation($id: ID!) { organizationMemberUpdate(id: $id, input: { role: "None" }) { member { role } } }', { id: otherMember.id });
    expect(back.body.data.organizationMemberUpdate.member.role).toBe('None');
    // Adding a member and creating or changing a service account in the graph take None too.
    await call(server, 'POST', '/api/admin/users', { body: { login: 'none-graph', password: 'none-pass' } });
    const orgNode = (await gql(server, `{ allOrganizations(query: "None Org") { nodes { id } } }`)).body.data.allOrganizations.nodes[0].id;
    const addedInGraph = await gql(server, 'mutation($org: ID!) { organizationMemberAdd(organizationId: $org, input: { loginOrEmail: "none-graph", role: "None" }) { member { login role } userErrors { message } } }', { org: orgNode });
    expect(addedInGraph.body.data.organizationMemberAdd).toEqual({ member: { login: 'none-graph', role: 'None' }, userErrors: [] });
    const saInGraph = await gql(server, 'mutation { serviceAccountCreate(input: { name: "none-graph-sa", role: "None" }) { serviceAccount { id role } userErrors { message } } }');
    expect(saInGraph.body.data.serviceAccountCreate).toMatchObject({ serviceAccount: { role: 'None' }, userErrors: [] });
    const SA_ROLE = 'mutation($id: ID!, $role: String!) { serviceAccountUpdate(id: $id, input: { role: $role }) { serviceAccount { role } } }';
    for (const role of ['Editor', 'None']) {
      const changed = await gql(server, SA_ROLE, { id: saInGraph.body.data.serviceAccountCreate.serviceAccount.id, role });
      expect(changed.body.data.serviceAccountUpdate.serviceAccount.role).toBe(role);
    }
    const saWrong = await gql(server, 'mutation { serviceAccountCreate(input: { name: "none-graph-sa2", role: "none" }) { serviceAccount { id } userErrors { message } } }');
    expect(saWrong.body.data?.serviceAccountCreate ?? saWrong.body.errors).toEqual({ serviceAccount: null, userErrors: [{ message: 'Invalid role specified' }] });
    const edges = await gql(server, '{ viewer { organizations(first: 10) { edges { role node { name } } } } }', {}, NONE);
    expect(edges.body.data.viewer.organizations.edges).toEqual([{ role: 'None', node: { name: 'Main Org.' } }, { role: 'None', node: { name: 'None Org' } }]);
  });
});

describe('what a None member may do', () => {
  beforeAll(async () => {
    expect((await setRole('None')).status).toBe(200);
  });

  it('sees nothing of its org without grants, where a Viewer sees the defaults', async () => {
    expect((await call(server, 'GET', '/api/datasources', { auth: NONE })).body).toEqual([]);
    expect((await call(server, 'GET', `/api/datasources/${ds['td-granted']!.id}`, { auth: NONE })).status).toBe(403);
    expect((await call(server, 'GET', '/api/org', { auth: NONE })).status).toBe(403);
    expect((await query(ds['td-granted']!.uid)).status).toBe(403);
    expect((await call(server, 'GET', `/api/datasources/proxy/uid/${ds['prom-granted']!.uid}/api/v1/query?query=up`, { auth: NONE })).status).toBe(403);
    expect((await call(server, 'GET', `/api/datasources/uid/${ds['td-granted']!.uid}/health`, { auth: NONE })).status).toBe(403);
    const settings = (await call(server, 'GET', '/api/frontend/settings', { auth: NONE })).body;
    expect(Object.keys(settings.datasources).filter((n) => !n.startsWith('-- '))).toEqual([]);
    expect((await call(server, 'GET', '/api/teams/search', { auth: NONE })).body.teams).toEqual([]);
    const graph = await gql(server, '{ viewer { currentOrganization { dataSources { totalCount } teams { totalCount } } } }', {}, NONE);
    expect(graph.body.data.viewer.currentOrganization).toEqual({ dataSources: { totalCount: 0 }, teams: { totalCount: 0 } });
    // A Viewer sees what the defaults give it.
    await setRole('Viewer');
    expect(names((await call(server, 'GET', '/api/datasources', { auth: NONE })).body)).toEqual(['prom-granted', 'prom-other', 'td-granted', 'td-other']);
    await setRole('None');
    expect((await call(server, 'GET', '/api/datasources', { auth: NONE })).body).toEqual([]);
  });

  it('queries exactly the data source its team may query: REST, the graph, the proxy and a live query', async () => {
    for (const name of ['td-granted', 'prom-granted']) {
      expect((await call(server, 'POST', `/api/access-control/datasources/${ds[name]!.uid}/teams/${teamId}`, { body: { permission: 'Query' } })).status).toBe(200);
    }
    expect((await call(server, 'POST', `/api/teams/${teamId}/members`, { body: { userId: noneId } })).status).toBe(200);

    // Lists and reads: the granted ones only.
    expect(names((await call(server, 'GET', '/api/datasources', { auth: NONE })).body)).toEqual(['prom-granted', 'td-granted']);
    expect((await call(server, 'GET', `/api/datasources/${ds['td-granted']!.id}`, { auth: NONE })).status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/${ds['td-other']!.id}`, { auth: NONE })).status).toBe(403);
    const settings = (await call(server, 'GET', '/api/frontend/settings', { auth: NONE })).body;
    expect(Object.keys(settings.datasources).filter((n) => !n.startsWith('-- ')).sort()).toEqual(['prom-granted', 'td-granted']);
    // Still nothing a role would give: no org read, no data source writes, no team creation.
    expect((await call(server, 'GET', '/api/org', { auth: NONE })).status).toBe(403);
    expect((await call(server, 'PUT', `/api/datasources/${ds['td-granted']!.id}`, { auth: NONE, body: { name: 'td-granted', type: 'grafana-testdata-datasource', access: 'proxy' } })).status).toBe(403);
    expect((await call(server, 'POST', '/api/teams', { auth: NONE, body: { name: 'nope' } })).status).toBe(403);
    // Its team it may read, as a member.
    expect((await call(server, 'GET', '/api/teams/search', { auth: NONE })).body.teams.map((t: { name: string }) => t.name)).toEqual(['none-team']);
    expect((await call(server, 'GET', '/api/user/teams', { auth: NONE })).body.map((t: { name: string }) => t.name)).toEqual(['none-team']);

    // REST /api/ds/query.
    const granted = await query(ds['td-granted']!.uid);
    expect(granted.status).toBe(200);
    expect(granted.body.results.A.frames.length).toBeGreaterThan(0);
    expect(await query(ds['td-other']!.uid)).toMatchObject({ status: 403, body: { message: 'Access denied to data source' } });
    expect((await call(server, 'GET', `/api/datasources/uid/${ds['td-granted']!.uid}/resources/scenarios`, { auth: NONE })).status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/uid/${ds['td-other']!.uid}/resources/scenarios`, { auth: NONE })).status).toBe(403);
    expect((await call(server, 'GET', `/api/datasources/uid/${ds['td-granted']!.uid}/health`, { auth: NONE })).status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/uid/${ds['td-other']!.uid}/health`, { auth: NONE })).status).toBe(403);

    // The graph: the root query, a data source's own query field, the connection and node(id).
    const DATA = 'query($queries: [JSONObject!]!) { dataQuery(from: "now-1h", to: "now", queries: $queries) { results { refId status frames { fields { name } } } } }';
    const viaGraph = await gql(server, DATA, { queries: [walk(ds['td-granted']!.uid)] }, NONE);
    expect(viaGraph.body.errors).toBeUndefined();
    expect(viaGraph.body.data.dataQuery.results[0]).toMatchObject({ refId: 'A', status: 200 });
    const refusedGraph = await gql(server, DATA, { queries: [walk(ds['td-other']!.uid)] }, NONE);
    expect(refusedGraph.body.errors?.[0]).toMatchObject({ message: 'Access denied to data source', extensions: { code: 'FORBIDDEN' } });
    const org = await gql(server, `{ viewer { currentOrganization { dataSources { nodes { id name } }
      dataSource(name: "td-granted") { query(from: "now-1h", queries: [{ refId: "A", scenarioId: "random_walk", seed: 3 }]) { results { refId status } } } } } }`, {}, NONE);
    expect(org.body.errors).toBeUndefined();
    expect(org.body.data.viewer.currentOrganization.dataSources.nodes.map((d: { name: string }) => d.name).sort()).toEqual(['prom-granted', 'td-granted']);
    expect(org.body.data.viewer.currentOrganization.dataSource.query.results).toEqual([{ refId: 'A', status: 200 }]);
    const otherNode = (await gql(server, `{ viewer { currentOrganization { dataSource(name: "td-other") { id } } } }`)).body.data.viewer.currentOrganization.dataSource.id;
    expect((await gql(server, 'query($id: ID!) { node(id: $id) { id } }', { id: otherNode }, NONE)).body.data.node).toBeNull();

    // The proxy, its per-route rules included (a query route the plugin guards with datasources:query).
    const proxied = (name: string, method = 'GET', path = 'api/v1/query?query=up') =>
      call(server, method, `/api/datasources/proxy/uid/${ds[name]!.uid}/${path}`, { auth: NONE, ...(method === 'POST' ? { rawBody: 'query=up', headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
    expect((await proxied('prom-granted')).status).toBe(200);
    expect((await proxied('prom-granted', 'POST', 'api/v1/query')).status).toBe(200);
    expect((await proxied('prom-other')).status).toBe(403);
    const rules = await proxied('prom-granted', 'POST', 'rules');
    expect([rules.status, rules.body]).toEqual([403, { message: 'plugin proxy route access denied' }]);

    // A live query: answers for the granted one, refused for the other.
    const LIVE = `subscription($queries: [JSONObject!]!) { liveQuery(queries: $queries, from: "now-1h", to: "now", refresh: "200ms") { results { refId status } } }`;
    const live = await subscribe(server, LIVE, { auth: NONE, variables: { queries: [walk(ds['td-granted']!.uid)] } });
    try {
      expect(live.status).toBe(200);
      const first = await live.waitFor((e) => e.event === 'next', 5000);
      expect(first.data.errors).toBeUndefined();
      expect(first.data.data.liveQuery.results).toEqual([{ refId: 'A', status: 200 }]);
      // The grant goes: the stream ends at the next refresh with the refusal.
      expect((await call(server, 'DELETE', `/api/teams/${teamId}/members/${noneId}`)).status).toBe(200);
      const last = await live.waitFor((e) => e.event === 'next' && !!e.data.errors, 5000);
      expect(last.data.errors[0]).toMatchObject({ message: 'Access denied to data source', extensions: { code: 'FORBIDDEN' } });
      await live.ended;
    } finally {
      live.close();
    }
    const refusedLive = await subscribe(server, LIVE, { auth: NONE, variables: { queries: [walk(ds['td-granted']!.uid)] } });
    try {
      const answer = await refusedLive.waitFor((e) => e.event === 'next', 5000);
      expect(answer.data.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    } finally {
      refusedLive.close();
    }
    // And the REST query is refused again at once.
    expect((await query(ds['td-granted']!.uid)).status).toBe(403);
  });

  it('counts a team\'s grants only for members of the team\'s org', async () => {
    // A team member who is no member of the org (the original allows such members) gets nothing
    // from the team's grants, even asked for in that org directly.
    const outsider = (await call(server, 'POST', '/api/admin/users', { body: { login: 'none-outsider', password: 'none-pass' } })).body.id as number;
    expect((await call(server, 'DELETE', `/api/orgs/1/users/${outsider}`)).status).toBe(200);
    expect((await call(server, 'POST', `/api/teams/${teamId}/members`, { body: { userId: outsider } })).status).toBe(200);
    const em = server.orm.em.fork();
    const asCaller = (orgRole: 'None' | null) => server.app.services.dataSources.list(em, { orgId: 1, orgRole, userId: outsider });
    expect(await asCaller(null)).toEqual([]);
    expect(await asCaller('None')).toEqual([]);
    // Once in the org (with no role), the team's grants count.
    expect((await call(server, 'POST', '/api/org/users', { body: { loginOrEmail: 'none-outsider', role: 'None' } })).status).toBe(200);
    expect(names(await asCaller('None'))).toEqual(['prom-granted', 'td-granted']);
  });
});
