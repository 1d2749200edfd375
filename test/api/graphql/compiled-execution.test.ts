import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../../support/server.ts';

// GraphQL runs an operation with the interpreter the first time its document arrives and as a
// graphql-jit function from the second time on. Clients must not be able to tell: every request
// below is sent three times and must get byte-identical answers.
let server: TestServer;
let adminToken: string;
let viewerToken: string;
let id: number;
let globalId: string;
let testdataUid: string;

beforeAll(async () => {
  server = await startTestServer();
  const key = async (role: string) => `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: `compiled-${role}`, role } })).body.key as string}`;
  adminToken = await key('Admin');
  viewerToken = await key('Viewer');
  const created = await call(server, 'POST', '/api/datasources', {
    body: {
      name: 'compiled-prom', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', basicAuth: true, basicAuthUser: 'reader',
      jsonData: { httpMethod: 'POST', nested: { list: [1, 'two', null] } }, secureJsonData: { basicAuthPassword: 'COMPILED-CANARY' },
    },
  });
  id = created.body.id as number;
  globalId = Buffer.from(`DataSource:${id}`).toString('base64url');
  // Version 2 now, so an update at version 1 is stale.
  await call(server, 'PUT', `/api/datasources/${id}`, { body: { ...created.body.datasource, version: 1 } });
  await call(server, 'POST', '/api/datasources', { body: { name: 'compiled-loki', type: 'loki', access: 'proxy', url: 'http://loki:3100' } });
  testdataUid = (await call(server, 'POST', '/api/datasources', { body: { name: 'compiled-testdata', type: 'grafana-testdata-datasource', access: 'proxy' } })).body.datasource.uid as string;
  // Every kind of leaf the graph writes: a team with a member, a service account with a token that
  // has an expiration (its secondsUntilExpiration changes between requests, so it is not compared).
  const team = await call(server, 'POST', '/api/teams', { body: { name: 'compiled-team', email: 'team@compiled.test' } });
  await call(server, 'POST', `/api/teams/${team.body.teamId}/members`, { body: { userId: 1 } });
  const account = await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'compiled-sa', role: 'Editor' } });
  await call(server, 'POST', `/api/serviceaccounts/${account.body.id}/tokens`, { body: { name: 'compiled-expiring', secondsToLive: 3600 } });
});
afterAll(() => server?.close());

/** Typed values of every built-in scalar and enum a frame has: times, numbers, labels, strings, booleans. */
const CSV = 'time,value{job="api"},host,up\n2024-01-01T00:00:00Z,1.5,a,true\n2024-01-01T00:01:00Z,-2,b,false\n2024-01-01T00:02:00Z,,c,';
const FIELDS = 'id databaseId uid orgId name type typeName access url user database basicAuth basicAuthUser withCredentials isDefault jsonData secureJsonFields version readOnly';

interface Case {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  auth?: () => string | null;
  /** Refused before execution, or anonymous: never compiled. */
  neverCompiled?: true;
  /** Text the answer must hold, so that a case meant to write values does (not two equal errors). */
  holds?: string[];
}

const cases = (): Case[] => [
  { name: 'every field of one data source', query: `query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { ${FIELDS} } } }`, variables: { id } },
  { name: 'the list, aliased, with __typename', query: '{ all: currentOrganization { dataSources { nodes { __typename id name n: name jsonData } } } }' },
  { name: 'fragments, inline fragments and @include/@skip', query: 'query($yes: Boolean!, $no: Boolean!) { currentOrganization { dataSources { nodes { ...Names ... on DataSource @include(if: $yes) { url } type @skip(if: $no) uid @skip(if: $yes) } } } } fragment Names on DataSource { name typeName }', variables: { yes: true, no: false } },
  { name: 'the same fragments with the flags swapped', query: 'query($yes: Boolean!, $no: Boolean!) { currentOrganization { dataSources { nodes { ...Names ... on DataSource @include(if: $yes) { url } type @skip(if: $no) uid @skip(if: $yes) } } } } fragment Names on DataSource { name typeName }', variables: { yes: false, no: true } },
  { name: 'a domain error (an id that is no global id)', query: '{ node(id: "not-a-global-id") { id } }' },
  { name: 'one root field failing beside one succeeding', query: `{ ok: currentOrganization { dataSource(databaseId: ${id}) { id } } missing: currentOrganization { dataSource(uid: "nope") { id } } }` },
  { name: 'a variable of the wrong type', query: 'query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { id } } }', variables: { id: 'seven' } },
  { name: 'a variable out of Int range', query: 'query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { id } } }', variables: { id: 2 ** 40 } },
  { name: 'a required variable missing', query: 'query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { id } } }', variables: {} },
  { name: 'null for a non-null variable', query: 'query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { id } } }', variables: { id: null } },
  { name: 'an input object with a wrong field type', query: 'mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } userErrors { code message } } }', variables: { input: { name: 'x', type: 'loki', access: 'proxy', jsonData: 'not an object' } } },
  { name: 'an input object with an unknown field', query: 'mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } userErrors { code message } } }', variables: { input: { name: 'x', type: 'loki', access: 'proxy', bogus: 1 } } },
  { name: 'a duplicate create (conflict)', query: 'mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } userErrors { code message } } }', variables: { input: { name: 'compiled-loki', type: 'loki', access: 'proxy' } } },
  { name: 'an update with a stale version (conflict)', query: 'mutation($id: ID!, $input: UpdateDataSourceInput!) { dataSourceUpdate(id: $id, input: $input) { dataSource { version } userErrors { code message } } }', variables: { id: globalId, input: { name: 'compiled-prom', type: 'prometheus', access: 'proxy', version: 1 } } },
  { name: 'deleting what does not exist', query: 'mutation { dataSourceDelete(uid: "never-was") { deletedDataSourceId userErrors { code message } } }' },
  { name: 'one of several named operations', query: 'query A { currentOrganization { dataSources { nodes { name } } } } query B { currentOrganization { dataSource(name: "compiled-loki") { id: databaseId } } }', operationName: 'B' },
  { name: 'the other named operation', query: 'query A { currentOrganization { dataSources { nodes { name } } } } query B { currentOrganization { dataSource(name: "compiled-loki") { id: databaseId } } }', operationName: 'A' },
  { name: 'introspection', query: '{ __schema { queryType { name } mutationType { fields { name args { name type { kind name ofType { name } } } } } } __type(name: "DataSource") { fields { name type { kind ofType { name } } } } }' },
  { name: 'a server-admin field with a token (forbidden)', query: '{ adminStats { userCount dataSourceCount } }', auth: () => adminToken },
  { name: 'server-admin fields with Basic', query: '{ adminStats { userCount dataSourceCount orgCount } adminSettings }' },
  { name: 'an org-admin field as a Viewer (forbidden)', query: '{ apiKeys { id name role } }', auth: () => viewerToken },
  { name: 'an idempotent mutation', query: 'mutation { alertsPause(paused: false) { __typename alertsAffected paused userErrors { code message } } }' },
  { name: 'a field that does not exist', query: '{ currentOrganization { dataSources { nodes { id nope } } } }', neverCompiled: true },
  { name: 'no credentials', query: '{ currentOrganization { dataSources { nodes { id } } } }', auth: () => null, neverCompiled: true },
  { name: 'an unknown token', query: '{ currentOrganization { dataSources { nodes { name } } } }', auth: () => 'Bearer glsa_unknown', neverCompiled: true },
  {
    name: 'every leaf of users, members, teams and service accounts',
    query: `{ viewer { id __typename ... on User { databaseId uid login email name avatarUrl isServiceAdmin isDisabled theme orgId createdAt updatedAt
      preferences { theme timezone weekStart homeDashboardUID language }
      organizations { nodes { id databaseId name address } } } }
      currentOrganization { members { nodes { id orgId userId uid email name avatarUrl login role lastSeenAt lastSeenAtAge created isDisabled authLabels isExternallySynced isProvisioned } }
        teams { nodes { id databaseId uid orgId name email avatarUrl memberCount permission members { orgId teamId teamUID userId userUID email name login avatarUrl labels permission organizationMemberId isOrganizationMember } } }
        serviceAccounts { nodes { id databaseId name login orgId role isDisabled isServiceAdmin tokenCount createdAt updatedAt tokens { nodes { id databaseId name created expiration hasExpired isRevoked lastUsedAt } } } } }
      adminStats { userCount orgCount dataSourceCount adminCount editorCount viewerCount activeUsers dailyActiveUsers monthlyActiveUsers } }`,
    holds: ['"memberCount":1', '"isOrganizationMember":true', '"name":"compiled-expiring"', '"hasExpired":false', '"isServiceAdmin":true', '"dataSourceCount":3'],
  },
  {
    name: 'data frames: numbers, strings, booleans, labels and field types',
    query: `query($q: [JSONObject!]!) { dataQuery(from: "1700000000000", to: "1700003600000", queries: $q) { status results { refId status error errorSource
      frames { name refId length meta fields { name type goType nullable displayName labels { name value } numbers strings booleans values nanos } } } } }`,
    variables: { q: [{ refId: 'A', datasource: { uid: testdataUid }, scenarioId: 'csv_content', csvContent: CSV }, { refId: 'B', datasource: { uid: testdataUid }, scenarioId: 'random_walk', seriesCount: 2, labels: 'job=walk', seed: 7, intervalMs: 600000 }] },
    holds: ['"type":"TIME"', '"strings":["a","b","c"]', '"booleans":[true,false,null]', '"numbers":[1.5,-2,null]', '{"name":"job","value":"api"}', '{"name":"job","value":"walk"}', '"goType":"float64"'],
  },
  { name: 'a read as a Viewer', query: `query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { ${FIELDS} } } }`, variables: { id }, auth: () => viewerToken },
];

async function send(test: Case): Promise<string> {
  const body: Record<string, unknown> = { query: test.query, variables: test.variables ?? {} };
  if (test.operationName) body.operationName = test.operationName;
  const res = await call(server, 'POST', '/graphql', { auth: test.auth ? test.auth() : ADMIN, body });
  return `${res.status} ${res.headers.get('content-type')}\n${res.text}`;
}

const compiledLines = () => server.logs.filter((line) => line.msg === 'GraphQL operation compiled');

describe('GraphQL operations compiled once their document repeats', () => {
  it('answer exactly as the interpreter did, errors included', async () => {
    const operationsSeen = new Set<string>();
    for (const test of cases()) {
      const operation = `${test.operationName ?? ''} ${test.query}`;
      const firstOfItsOperation = !operationsSeen.has(operation);
      operationsSeen.add(operation);
      const before = compiledLines().length;
      const interpreted = await send(test);
      const compiled = [await send(test), await send(test)];
      expect({ test: test.name, answers: compiled }).toEqual({ test: test.name, answers: [interpreted, interpreted] });
      for (const text of test.holds ?? []) expect({ test: test.name, holds: interpreted.includes(text), text }).toEqual({ test: test.name, holds: true, text });
      if (test.holds) expect(interpreted).not.toContain('"errors"');
      // Compiled on its second arrival; a later case with the same operation ran compiled throughout.
      expect({ test: test.name, compiled: compiledLines().length - before }).toEqual({ test: test.name, compiled: firstOfItsOperation && !test.neverCompiled ? 1 : 0 });
    }
    expect(server.logs.some((line) => String(line.msg).includes('not compilable'))).toBe(false);
    expect(server.logText()).not.toContain('COMPILED-CANARY');
  });

  it('compile on the second arrival of a document, once per operation', async () => {
    const before = compiledLines().length;
    const query = 'query Once { currentOrganization { dataSources { nodes { id } } } } query Twice { currentOrganization { dataSources { nodes { name } } } }';
    const run = (operationName: string) => call(server, 'POST', '/graphql', { body: { query, operationName } });
    await run('Once');
    expect(compiledLines().length).toBe(before);
    await run('Once');
    await run('Once');
    await run('Twice');
    await run('Twice');
    expect(compiledLines().slice(before).map((line) => line.operationName)).toEqual(['Once', 'Twice']);
  });
});
