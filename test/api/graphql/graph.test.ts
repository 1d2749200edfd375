import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../../support/server.ts';

/**
 * The graph over real HTTP and PostgreSQL: global ids and `node`, connections, relationships and
 * their access rules (another org's objects answer null, never the object).
 */
let server: TestServer;
let otherOrg = 0;
const ANN = basic('graph-ann', 'ann-secret');
const VIC = basic('graph-vic', 'vic-secret');

async function ok<T = any>(query: string, variables: Record<string, unknown> = {}, auth: string = ADMIN): Promise<T> {
  const res = await gql<T>(server, query, variables, auth);
  expect(res.body.errors).toBeUndefined();
  expect(res.status).toBe(200);
  return res.body.data!;
}

beforeAll(async () => {
  server = await startTestServer();
  for (const name of ['alpha', 'beta', 'gamma']) {
    expect((await call(server, 'POST', '/api/datasources', { body: { name, type: name === 'beta' ? 'loki' : 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9' } })).status).toBe(200);
  }
  otherOrg = (await call(server, 'POST', '/api/orgs', { body: { name: 'Graph Other' } })).body.orgId;
  expect((await call(server, 'POST', '/api/datasources', { body: { name: 'hidden', type: 'prometheus', access: 'proxy' }, headers: { 'x-grafana-org-id': String(otherOrg) } })).status).toBe(200);
  expect((await call(server, 'POST', '/api/admin/users', { body: { login: 'graph-ann', password: 'ann-secret', email: 'ann@graph.test' } })).status).toBe(200);
  expect((await call(server, 'POST', '/api/admin/users', { body: { login: 'graph-vic', password: 'vic-secret' } })).status).toBe(200);
  // Ann is the other org's Admin, and a Viewer of the main org.
  expect((await call(server, 'POST', `/api/orgs/${otherOrg}/users`, { body: { loginOrEmail: 'graph-ann', role: 'Admin' } })).status).toBe(200);
  // The server admin created the other org (and so became its Admin): it leaves it to Ann.
  expect((await call(server, 'DELETE', `/api/orgs/${otherOrg}/users/1`)).status).toBe(200);
});
afterAll(() => server.close());

describe('global object identification', () => {
  it('refetches every node type by its id, with its numeric id as databaseId', async () => {
    const data = await ok(`{
      viewer { __typename ... on User { id databaseId login } currentOrganization { id databaseId name
        dataSources(first: 1) { nodes { id databaseId name } }
        members(first: 1) { nodes { id orgId userId } } } } }`);
    const org = data.viewer.currentOrganization;
    const ds = org.dataSources.nodes[0];
    const member = org.members.nodes[0];
    expect(data.viewer).toMatchObject({ __typename: 'User', databaseId: 1, login: 'admin' });
    const ids = [data.viewer.id, org.id, ds.id, member.id];
    expect(new Set(ids).size).toBe(4);
    const nodes = await ok(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on DataSource { name } ... on Organization { name } } }`, { ids });
    expect(nodes.nodes.map((n: { __typename: string }) => n.__typename)).toEqual(['User', 'Organization', 'DataSource', 'OrganizationMember']);
    expect(nodes.nodes.map((n: { id: string }) => n.id)).toEqual(ids);
    expect((await ok(`query($id: ID!) { node(id: $id) { ... on DataSource { databaseId name } } }`, { id: ds.id })).node).toEqual({ databaseId: ds.databaseId, name: 'alpha' });
  });

  it('still resolves a user id encoded under the type\'s former name UserNode', async () => {
    const former = Buffer.from('UserNode:1').toString('base64url');
    const data = await ok(`query($id: ID!) { node(id: $id) { __typename id ... on User { databaseId login } } }`, { id: former });
    expect(data.node).toMatchObject({ __typename: 'User', databaseId: 1, login: 'admin' });
    expect(data.node.id).toBe(Buffer.from('User:1').toString('base64url'));
  });

  it('answers null for another org\'s object, and for objects the caller may not see', async () => {
    const admin = await ok(`query($org: Int!) { allOrganizations(first: 10) { nodes { id databaseId } } } `.replace('query($org: Int!) ', ''));
    const other = admin.allOrganizations.nodes.find((o: { databaseId: number }) => o.databaseId === otherOrg);
    // The server admin is no member of the other org: it sees the org, but not its data sources.
    const seen = await ok(`query($id: ID!) { node(id: $id) { ... on Organization { name dataSources { totalCount } members { totalCount } } } }`, { id: other.id });
    expect(seen.node).toEqual({ name: 'Graph Other', dataSources: null, members: { totalCount: 1 } });
    // Ann (Admin there) reads the hidden data source's id; the admin asking for it by id gets null.
    const ann = await ok(`query($id: ID!) { node(id: $id) { ... on Organization { dataSources { nodes { id name organization { databaseId } } } } } }`, { id: other.id }, ANN);
    const hidden = ann.node.dataSources.nodes[0];
    expect(hidden).toMatchObject({ name: 'hidden', organization: { databaseId: otherOrg } });
    expect((await ok(`query($id: ID!) { node(id: $id) { id } }`, { id: hidden.id })).node).toBeNull();
    expect((await ok(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [hidden.id] })).nodes).toEqual([null]);
    // Vic, a Viewer of the main org only, sees neither the other org nor users but himself.
    expect((await ok(`query($id: ID!) { node(id: $id) { id } }`, { id: other.id }, VIC)).node).toBeNull();
    const vic = await ok('{ viewer { id currentOrganization { members { totalCount } serviceAccounts { totalCount } dataSources { totalCount } } } }', {}, VIC);
    expect(vic.viewer.currentOrganization).toEqual({ members: null, serviceAccounts: null, dataSources: { totalCount: 3 } });
    const adminId = (await ok('{ viewer { id } }')).viewer.id;
    expect((await ok(`query($id: ID!) { node(id: $id) { id } }`, { id: adminId }, VIC)).node).toBeNull();
    expect((await ok(`query($id: ID!) { node(id: $id) { id } }`, { id: vic.viewer.id }, VIC)).node).toEqual({ id: vic.viewer.id });
  });

  it('refuses a malformed id with a clear 400', async () => {
    for (const id of ['nonsense', Buffer.from('Nope:1').toString('base64url'), Buffer.from('DataSourceNode:x').toString('base64url'), '']) {
      const res = await gql(server, 'query($id: ID!) { node(id: $id) { id } }', { id });
      expect(res.body.errors?.[0]?.message).toBe(`Invalid global id: ${id}`);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    }
    const many = await gql(server, 'query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: Array.from({ length: 101 }, (_, i) => Buffer.from(`Organization:${i + 1}`).toString('base64url')) });
    expect(many.body.errors?.[0]).toMatchObject({ message: 'At most 100 ids', extensions: { code: 'BAD_REQUEST' } });
    // Well-formed ids naming nothing are null, also past the integer range.
    const far = Buffer.from('DataSourceNode:99999999999999').toString('base64url');
    expect((await ok('query($id: ID!) { node(id: $id) { id } }', { id: far })).node).toBeNull();
  });
});

describe('cursor connections', () => {
  it('pages forward and backward with opaque cursors, in a stable order', async () => {
    const q = `query($first: Int, $after: String, $last: Int, $before: String) { viewer { currentOrganization {
      dataSources(first: $first, after: $after, last: $last, before: $before) {
        totalCount edges { cursor node { name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } } }`;
    const page = async (vars: Record<string, unknown>) => (await ok(q, vars)).viewer.currentOrganization.dataSources;
    const first = await page({ first: 2 });
    expect(first.totalCount).toBe(3);
    expect(first.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['alpha', 'beta']);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: first.edges[0].cursor, endCursor: first.edges[1].cursor });
    const second = await page({ first: 2, after: first.pageInfo.endCursor });
    expect(second.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['gamma']);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const back = await page({ last: 1, before: second.pageInfo.startCursor });
    expect(back.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['beta']);
    const empty = await page({ first: 0 });
    expect(empty).toMatchObject({ totalCount: 3, edges: [], pageInfo: { startCursor: null, endCursor: null, hasNextPage: true } });
  });

  it('filters as REST does', async () => {
    const data = await ok('{ viewer { currentOrganization { loki: dataSources(type: "loki") { nodes { name } } ph: dataSources(query: "PH") { nodes { name } } } } }');
    expect(data.viewer.currentOrganization).toEqual({ loki: { nodes: [{ name: 'beta' }] }, ph: { nodes: [{ name: 'alpha' }] } });
  });

  it('refuses tampered cursors, cursors of another list and oversized pages with a clear 400', async () => {
    const users = await ok('{ allUsers(first: 1) { pageInfo { endCursor } } }');
    const cursor = users.allUsers.pageInfo.endCursor;
    const q = 'query($after: String, $first: Int) { viewer { currentOrganization { dataSources(first: $first, after: $after) { totalCount } } } }';
    for (const after of [cursor, `${cursor}x`, 'bm9wZQ', Buffer.from('Organization.dataSources:-1').toString('base64url')]) {
      const res = await gql(server, q, { after, first: 1 });
      expect(res.body.errors?.[0]).toMatchObject({ message: `Invalid cursor for this list: ${after}`, extensions: { code: 'BAD_REQUEST' } });
    }
    const big = await gql(server, q, { first: 1001 });
    expect(big.body.errors?.[0]).toMatchObject({ message: 'first must be between 0 and 1000', extensions: { code: 'BAD_REQUEST' } });
  });

  it('refuses nested pages asking for more objects than the limit, sizes sent as variables included, before anything runs', async () => {
    const q = 'query($orgs: Int, $members: Int) { allOrganizations(first: $orgs) { nodes { members(first: $members) { totalCount } } } }';
    const refused = await gql(server, q, { orgs: 1000, members: 1000 });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      errors: [{ message: 'Query asks its connections for up to 1001000 objects, more than the limit of 100000: ask for smaller pages (first, last)', extensions: { code: 'BAD_USER_INPUT' } }],
    });
    const accepted = await gql(server, q, { orgs: 10, members: 1000 });
    expect([accepted.status, accepted.body.errors]).toEqual([200, undefined]);
  });
});

describe('relationships', () => {
  it('walks viewer, its orgs with roles, org members, service accounts and their tokens', async () => {
    const sa = (await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'graph-sa', role: 'Editor' } })).body;
    const token = (await call(server, 'POST', `/api/serviceaccounts/${sa.id}/tokens`, { body: { name: 'graph-token' } })).body;
    const data = await ok(`{ viewer { ... on User { organizations { edges { role node { name } } } } currentOrganization {
      serviceAccounts(query: "graph") { nodes { databaseId name tokenCount tokens { nodes { name serviceAccount { databaseId } } } } }
      members(query: "graph-") { nodes { login role user { login } organization { name } } } } } }`);
    expect(data.viewer.organizations.edges).toEqual([{ role: 'Admin', node: { name: 'Main Org.' } }]);
    expect(data.viewer.currentOrganization.serviceAccounts.nodes).toEqual([
      { databaseId: sa.id, name: 'graph-sa', tokenCount: 1, tokens: { nodes: [{ name: 'graph-token', serviceAccount: { databaseId: sa.id } }] } },
    ]);
    expect(data.viewer.currentOrganization.members.nodes).toEqual([
      { login: 'graph-ann', role: 'Viewer', user: { login: 'graph-ann' }, organization: { name: 'Main Org.' } },
      { login: 'graph-vic', role: 'Viewer', user: { login: 'graph-vic' }, organization: { name: 'Main Org.' } },
    ]);
    // The token's own service account is its viewer; an org Editor reads no service accounts.
    const bySa = await ok('{ viewer { __typename login ... on ServiceAccount { role } organizations { edges { role node { name } } } currentOrganization { name serviceAccounts { totalCount } } } }', {}, `Bearer ${token.key}`);
    expect(bySa.viewer).toEqual({ __typename: 'ServiceAccount', login: 'sa-1-graph-sa', role: 'Editor', organizations: { edges: [{ role: 'Editor', node: { name: 'Main Org.' } }] }, currentOrganization: { name: 'Main Org.', serviceAccounts: null } });
    // Ann sees her own orgs and roles; a member's user is null unless it is herself.
    const ann = await ok('{ viewer { ... on User { organizations { edges { role node { name members { nodes { login user { login } } } } } } } } }', {}, ANN);
    expect(ann.viewer.organizations.edges).toEqual([
      { role: 'Admin', node: { name: 'Graph Other', members: { nodes: [{ login: 'graph-ann', user: { login: 'graph-ann' } }] } } },
      { role: 'Viewer', node: { name: 'Main Org.', members: null } },
    ]);
  });

  it('answers GET /api/user over viewer, as the graph reads the same user', async () => {
    const res = await call(server, 'GET', '/api/user');
    expect(res.body).toMatchObject({ id: 1, login: 'admin' });
    const graph = await ok('{ viewer { ... on User { databaseId login } } currentOrganization { dataSources { nodes { id name } } } }');
    expect(graph.viewer).toEqual({ databaseId: 1, login: 'admin' });
    expect(graph.currentOrganization.dataSources.nodes.map((d: { name: string }) => d.name)).toEqual(['alpha', 'beta', 'gamma']);
  });
});

describe('queries of a data source node', () => {
  it('run as the caller is in the data source\'s org, not the org the request acts in', async () => {
    // The same uid in both orgs: the main org's is a Prometheus nobody listens for, the other org's TestData.
    expect((await call(server, 'POST', '/api/datasources', { body: { name: 'twin', uid: 'graph-twin', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9' } })).status).toBe(200);
    expect((await call(server, 'POST', '/api/datasources', { auth: ANN, headers: { 'x-grafana-org-id': String(otherOrg) }, body: { name: 'twin', uid: 'graph-twin', type: 'grafana-testdata-datasource', access: 'proxy' } })).status).toBe(200);
    const query = `query($queries: [JSONObject!]!) { viewer { ... on User { organizations { nodes { databaseId
      dataSource(uid: "graph-twin") { type query(from: "now-5m", queries: $queries) { status results { refId error frames { fields { type } } } } } } } } } }`;
    const orgs = (await ok(query, { queries: [{ refId: 'A', scenarioId: 'random_walk', seriesCount: 1, intervalMs: 10000, maxDataPoints: 30 }] }, ANN)).viewer.organizations.nodes;
    const other = orgs.find((o: { databaseId: number }) => o.databaseId === otherOrg).dataSource;
    expect(other.type).toBe('grafana-testdata-datasource');
    expect(other.query.status).toBe(200);
    expect(other.query.results[0]).toMatchObject({ refId: 'A', error: null, frames: [{ fields: [{ type: 'TIME' }, { type: 'NUMBER' }] }] });
    // Ann is a Viewer of the main org, where the Prometheus twin answers its refId's error.
    const main = orgs.find((o: { databaseId: number }) => o.databaseId === 1).dataSource;
    expect(main.type).toBe('prometheus');
    expect(main.query.results[0].error).toEqual(expect.any(String));
  });
});

describe('health of a data source node', () => {
  it('checks that very data source, as its REST health route does, reached through a connection or by its id', async () => {
    expect((await call(server, 'POST', '/api/datasources', { body: { name: 'graph-health-td', type: 'grafana-testdata-datasource', access: 'proxy' } })).status).toBe(200);
    const data = await ok('{ viewer { currentOrganization { dataSources(first: 10) { nodes { id uid name health { status message } } } } } }');
    type Checked = { id: string; uid: string; name: string; health: { status: string; message: string } };
    const byName = new Map((data.viewer.currentOrganization.dataSources.nodes as Checked[]).map((n) => [n.name, n]));
    // A TestData source is healthy and a Prometheus nobody listens for is not: each node checked itself.
    expect(byName.get('graph-health-td')!.health.status).toBe('OK');
    expect(byName.get('alpha')!.health.status).toBe('ERROR');
    for (const node of [byName.get('graph-health-td')!, byName.get('alpha')!]) {
      const rest = await call(server, 'GET', `/api/datasources/uid/${node.uid}/health`);
      expect(node.health).toEqual({ status: rest.body.status, message: rest.body.message });
      expect((await ok('query($id: ID!) { node(id: $id) { ... on DataSource { health { status message } } } }', { id: node.id })).node.health).toEqual(node.health);
    }
  });
});

describe('mutations', () => {
  it('answer the changed node, and user errors where REST answers 4xx', async () => {
    const created = await ok(`mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id databaseId name version } userErrors { message code } } }`,
      { input: { name: 'delta', type: 'prometheus', access: 'proxy', secureJsonData: { token: 'MUTATION-CANARY' } } });
    const ds = created.dataSourceCreate.dataSource;
    expect(created.dataSourceCreate).toEqual({ dataSource: { id: expect.any(String), databaseId: expect.any(Number), name: 'delta', version: 1 }, userErrors: [] });
    // The same node as node(id) reads.
    expect((await ok('query($id: ID!) { node(id: $id) { id } }', { id: ds.id })).node).toEqual({ id: ds.id });

    const taken = await ok(`mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } userErrors { message code } } }`,
      { input: { name: 'delta', type: 'prometheus', access: 'proxy' } });
    expect(taken.dataSourceCreate).toEqual({ dataSource: null, userErrors: [{ message: 'data source with the same name already exists', code: 'CONFLICT' }] });

    const update = `mutation($id: ID!, $input: UpdateDataSourceInput!) { dataSourceUpdate(id: $id, input: $input) { dataSource { id name version } userErrors { message code } } }`;
    const updated = await ok(update, { id: ds.id, input: { name: 'delta-2', type: 'prometheus', access: 'proxy', version: 1 } });
    expect(updated.dataSourceUpdate).toEqual({ dataSource: { id: ds.id, name: 'delta-2', version: 2 }, userErrors: [] });
    const stale = await ok(update, { id: ds.id, input: { name: 'delta-3', type: 'prometheus', access: 'proxy', version: 1 } });
    expect(stale.dataSourceUpdate.userErrors).toEqual([{ message: 'Datasource has already been updated by someone else. Please reload and try again', code: 'CONFLICT' }]);

    // Another org's data source, through Ann who sees it, is not found in the org the admin acts in.
    const hiddenId = (await ok('{ viewer { ... on User { organizations { nodes { dataSources { nodes { id name } } } } } } }', {}, ANN))
      .viewer.organizations.nodes.flatMap((o: { dataSources: { nodes: Array<{ id: string; name: string }> } | null }) => o.dataSources?.nodes ?? []).find((d: { name: string }) => d.name === 'hidden').id;
    const deleteDs = 'mutation($id: ID!) { dataSourceDelete(id: $id) { deletedDataSourceId userErrors { message code } } }';
    expect((await ok(deleteDs, { id: hiddenId })).dataSourceDelete).toEqual({ deletedDataSourceId: null, userErrors: [{ message: 'Data source not found', code: 'NOT_FOUND' }] });
    expect((await ok(deleteDs, { id: ds.id })).dataSourceDelete).toEqual({ deletedDataSourceId: ds.id, userErrors: [] });
    expect((await call(server, 'GET', `/api/datasources/${ds.databaseId}`)).status).toBe(404);

    // Access stays an error of the request, as for every root field.
    const denied = await gql(server, deleteDs, { id: hiddenId }, VIC);
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('take the rules of the REST rows: a Viewer granted Edit on a data source changes it', async () => {
    const created = (await ok('mutation { dataSourceCreate(input: { name: "editable", type: "prometheus", access: "proxy" }) { dataSource { id uid } } }')).dataSourceCreate.dataSource;
    const update = 'mutation($id: ID!) { dataSourceUpdate(id: $id, input: { name: "edited", type: "prometheus", access: "proxy" }) { dataSource { name } userErrors { message code } } }';
    expect((await gql(server, update, { id: created.id }, VIC)).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const vic = (await call(server, 'GET', '/api/users/lookup?loginOrEmail=graph-vic')).body.id;
    expect((await call(server, 'POST', `/api/access-control/datasources/${created.uid}/users/${vic}`, { body: { permission: 'Edit' } })).status).toBe(200);
    expect((await ok(update, { id: created.id }, VIC)).dataSourceUpdate).toEqual({ dataSource: { name: 'edited' }, userErrors: [] });
    const remove = 'mutation($id: ID!) { dataSourceDelete(id: $id) { deletedDataSourceId userErrors { message code } } }';
    expect((await ok(remove, { id: created.id }, VIC)).dataSourceDelete).toEqual({ deletedDataSourceId: created.id, userErrors: [] });
  });
});

describe('the GraphQL guide\'s five queries', () => {
  it('run as written, within the default limits', async () => {
    const guide = readFileSync(new URL('../../../docs/graphql.md', import.meta.url), 'utf8');
    const block = /## GraphQL in five queries[\s\S]*?```graphql\n([\s\S]*?)```/.exec(guide)![1]!;
    const queries = block.split(/^# \d\. .*$/m).map((q) => q.trim()).filter(Boolean);
    expect(queries).toHaveLength(5);
    const alpha = (await ok('{ viewer { currentOrganization { dataSource(name: "alpha") { id } } } }')).viewer.currentOrganization.dataSource.id;
    const variables = [{}, { after: null }, { id: alpha }, {}, { input: { name: 'from-readme', type: 'prometheus', access: 'proxy' } }];
    for (const [i, query] of queries.entries()) {
      const res = await gql(server, query, variables[i]);
      expect([i + 1, res.status, res.body.errors]).toEqual([i + 1, 200, undefined]);
    }
    expect((await call(server, 'GET', '/api/datasources/name/from-readme')).status).toBe(200);
  });
});
