import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, startTestServer, type TestServer } from '../../support/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const FIELDS = 'id uid orgId name type typeName access url isDefault jsonData secureJsonFields version readOnly';

describe('GraphQL data sources', () => {
  it('creates, reads, updates and deletes through the same services as REST', async () => {
    const created = await gql(server, `mutation($input: CreateDataSourceInput!) { createDataSource(input: $input) { id message name datasource { ${FIELDS} } } }`, {
      input: { name: 'gql-prom', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', uid: 'gql-uid', secureJsonData: { token: 'GQL-CANARY' } },
    });
    expect(created.status).toBe(200);
    expect(created.body.errors).toBeUndefined();
    const ds = created.body.data.createDataSource;
    expect(ds).toMatchObject({ message: 'Datasource added', name: 'gql-prom', datasource: { typeName: 'Prometheus', secureJsonFields: { token: true }, isDefault: true } });
    expect(created.text).not.toContain('GQL-CANARY');

    // REST sees what GraphQL wrote.
    expect((await call(server, 'GET', `/api/datasources/${ds.id}`)).body.name).toBe('gql-prom');

    const read = await gql(server, `query($id: Int!, $uid: String!, $name: String!) {
      dataSource(id: $id) { name } dataSourceByUid(uid: $uid) { id } dataSourceByName(name: $name) { uid } dataSourceIdByName(name: $name) { id } dataSources { name }
    }`, { id: ds.id, uid: 'gql-uid', name: 'gql-prom' });
    expect(read.body.data).toEqual({
      dataSource: { name: 'gql-prom' }, dataSourceByUid: { id: ds.id }, dataSourceByName: { uid: 'gql-uid' }, dataSourceIdByName: { id: ds.id }, dataSources: [{ name: 'gql-prom' }],
    });

    const updated = await gql(server, `mutation($id: Int!, $input: UpdateDataSourceInput!) { updateDataSource(id: $id, input: $input) { message datasource { version name } } }`, {
      id: ds.id, input: { name: 'gql-prom-2', type: 'prometheus', access: 'proxy', version: 1 },
    });
    expect(updated.body.data.updateDataSource).toEqual({ message: 'Datasource updated', datasource: { version: 2, name: 'gql-prom-2' } });

    const deleted = await gql(server, 'mutation($name: String!) { deleteDataSourceByName(name: $name) { id message } }', { name: 'gql-prom-2' });
    expect(deleted.body.data.deleteDataSourceByName).toEqual({ id: ds.id, message: 'Data source deleted' });
  });

  it('stores and returns jsonData as {} when a data source is created or replaced without it, as the original does', async () => {
    const created = await gql(server, `mutation($input: CreateDataSourceInput!) { createDataSource(input: $input) { datasource { id jsonData } } }`, {
      input: { name: 'gql-no-json', type: 'loki', access: 'proxy' },
    });
    const { id, jsonData } = created.body.data.createDataSource.datasource;
    expect(jsonData).toEqual({});
    expect((await gql(server, 'query($id: Int!) { dataSource(id: $id) { jsonData } }', { id })).body.data).toEqual({ dataSource: { jsonData: {} } });
    const replaced = await gql(server, `mutation($id: Int!, $input: UpdateDataSourceInput!) { updateDataSource(id: $id, input: $input) { datasource { jsonData } } }`, {
      id, input: { name: 'gql-no-json', type: 'loki', access: 'proxy', jsonData: null },
    });
    expect(replaced.body.data.updateDataSource.datasource.jsonData).toEqual({});
    expect(await server.sql('select json_data from data_source where id = $1', [id])).toEqual([{ json_data: {} }]);
  });

  it('reports domain errors with a code and the HTTP status', async () => {
    const res = await gql(server, 'query { dataSource(id: 424242) { id } }');
    expect(res.status).toBe(404);
    expect(res.body.errors?.[0]).toMatchObject({ message: 'Data source not found', extensions: { code: 'NOT_FOUND' } });
  });

  it('requires credentials and rejects bad ones', async () => {
    const anonymous = await gql(server, 'query { dataSources { id } }', {}, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const wrong = await gql(server, 'query { dataSources { id } }', {}, basic('admin', 'wrong'));
    expect(wrong.status).toBe(401);
  });

  it('serves GraphiQL to browsers', async () => {
    const res = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('GraphiQL');
  });
});
