import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GRAPHIQL_EXAMPLE } from '../../../src/graphql/yoga-server.ts';
import { basic, call, gql, startTestServer, type TestServer } from '../../support/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const FIELDS = 'id databaseId uid orgId name type typeName access url isDefault jsonData secureJsonFields version readOnly';

describe('GraphQL data sources', () => {
  it('creates, reads, updates and deletes through the same services as REST', async () => {
    const created = await gql(server, `mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { ${FIELDS} } userErrors { code message } } }`, {
      input: { name: 'gql-prom', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', uid: 'gql-uid', secureJsonData: { token: 'GQL-CANARY' } },
    });
    expect(created.status).toBe(200);
    expect(created.body.errors).toBeUndefined();
    const { dataSource: ds, userErrors } = created.body.data.dataSourceCreate;
    expect(userErrors).toEqual([]);
    expect(ds).toMatchObject({ name: 'gql-prom', typeName: 'Prometheus', secureJsonFields: { token: true }, isDefault: true });
    expect(created.text).not.toContain('GQL-CANARY');

    // REST sees what GraphQL wrote.
    expect((await call(server, 'GET', `/api/datasources/${ds.databaseId}`)).body.name).toBe('gql-prom');

    const read = await gql(server, `query($id: Int!, $uid: String!, $name: String!, $node: ID!) {
      currentOrganization { byId: dataSource(databaseId: $id) { name } byUid: dataSource(uid: $uid) { databaseId } byName: dataSource(name: $name) { uid } dataSources { nodes { name } } }
      node(id: $node) { ... on DataSource { name } }
    }`, { id: ds.databaseId, uid: 'gql-uid', name: 'gql-prom', node: ds.id });
    expect(read.body.data).toEqual({
      currentOrganization: { byId: { name: 'gql-prom' }, byUid: { databaseId: ds.databaseId }, byName: { uid: 'gql-uid' }, dataSources: { nodes: [{ name: 'gql-prom' }] } },
      node: { name: 'gql-prom' },
    });

    const updated = await gql(server, `mutation($id: ID!, $input: UpdateDataSourceInput!) { dataSourceUpdate(id: $id, input: $input) { dataSource { version name } userErrors { message } } }`, {
      id: ds.id, input: { name: 'gql-prom-2', type: 'prometheus', access: 'proxy', version: 1 },
    });
    expect(updated.body.data.dataSourceUpdate).toEqual({ dataSource: { version: 2, name: 'gql-prom-2' }, userErrors: [] });

    const deleted = await gql(server, 'mutation($name: String!) { dataSourceDelete(name: $name) { deletedDataSourceId userErrors { message } } }', { name: 'gql-prom-2' });
    expect(deleted.body.data.dataSourceDelete).toEqual({ deletedDataSourceId: ds.id, userErrors: [] });
  });

  it('stores and returns jsonData as {} when a data source is created or replaced without it, as the original does', async () => {
    const created = await gql(server, `mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id databaseId jsonData } } }`, {
      input: { name: 'gql-no-json', type: 'loki', access: 'proxy' },
    });
    const { id, databaseId, jsonData } = created.body.data.dataSourceCreate.dataSource;
    expect(jsonData).toEqual({});
    expect((await gql(server, 'query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { jsonData } } }', { id: databaseId })).body.data)
      .toEqual({ currentOrganization: { dataSource: { jsonData: {} } } });
    const replaced = await gql(server, `mutation($id: ID!, $input: UpdateDataSourceInput!) { dataSourceUpdate(id: $id, input: $input) { dataSource { jsonData } } }`, {
      id, input: { name: 'gql-no-json', type: 'loki', access: 'proxy', jsonData: null },
    });
    expect(replaced.body.data.dataSourceUpdate.dataSource.jsonData).toEqual({});
    expect(await server.sql('select json_data from data_source where id = $1', [databaseId])).toEqual([{ json_data: {} }]);
  });

  it('answers null for a data source that is not there, and a mutation\'s domain error as a user error with its code', async () => {
    const res = await gql(server, 'query { currentOrganization { dataSource(databaseId: 424242) { id } } }');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { currentOrganization: { dataSource: null } } });
    const gone = await gql(server, 'mutation { dataSourceDelete(uid: "never-was") { deletedDataSourceId userErrors { code message } } }');
    expect(gone.body.data.dataSourceDelete).toEqual({ deletedDataSourceId: null, userErrors: [{ code: 'NOT_FOUND', message: 'Data source not found' }] });
  });

  it('requires credentials and rejects bad ones', async () => {
    const anonymous = await gql(server, 'query { currentOrganization { dataSources { nodes { id } } } }', {}, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const wrong = await gql(server, 'query { currentOrganization { dataSources { nodes { id } } } }', {}, basic('admin', 'wrong'));
    expect(wrong.status).toBe(401);
  });

  it('serves GraphiQL to browsers, opening on a working example of the graph', async () => {
    const res = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('GraphiQL');
    expect(page).toContain(JSON.stringify(GRAPHIQL_EXAMPLE).slice(1, 40));
    // Its operations run as they are: the caller, a page of a connection, and a node by its id.
    expect((await call(server, 'POST', '/api/datasources', { body: { name: 'example-td', type: 'grafana-testdata-datasource', access: 'proxy' } })).status).toBe(200);
    const run = (operationName: string, variables: Record<string, unknown>) => call(server, 'POST', '/graphql', { body: { query: GRAPHIQL_EXAMPLE, operationName, variables } });
    const overview = await run('Overview', {});
    expect(overview.body.errors).toBeUndefined();
    const example = overview.body.data.viewer.currentOrganization.dataSources.nodes.find((d: { name: string }) => d.name === 'example-td');
    expect(example).toEqual(expect.objectContaining({ id: expect.any(String), databaseId: expect.any(Number), type: 'grafana-testdata-datasource' }));
    const node = await run('Node', { id: example.id });
    expect(node.body).toEqual({ data: { node: { id: example.id, name: 'example-td', health: { status: 'OK', message: expect.any(String) } } } });
  });
});
