import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, gql, startTestServer, type TestServer } from '../../support/server.ts';

// Two servers: the shipped defaults, and every `[graphql]` switch turned the other way.
let defaults: TestServer;
let flipped: TestServer;

beforeAll(async () => {
  [defaults, flipped] = await Promise.all([
    startTestServer(),
    startTestServer({
      overrides: {
        graphql: {
          introspection: 'false', graphiql: 'false', max_depth: '2', max_aliases: '2', max_cost: '20', mask_errors: 'false', csrf_prevention: 'false',
        },
      },
    }),
  ]);
});
afterAll(() => Promise.all([defaults?.close(), flipped?.close()]));

const DEPTH_3 = '{ viewer { currentOrganization { id } } }';
const THREE_ALIASES = '{ a: viewer { id } b: viewer { id } c: viewer { id } }';
// 1 object + 14 scalars, each scalar weighted by depth: well over 20, far under 5000.
const WIDE = '{ alerts { id name dashboardId newStateDate orgId panelId state } viewer { id databaseId login name isServiceAdmin } }';
const CSRF_REFUSAL = /cross-site request forgery/;

describe('[graphql] introspection', () => {
  it('answers introspection when on', async () => {
    const res = await gql(defaults, '{ __schema { queryType { name } } __type(name: "DataSource") { name } }');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } }, __type: { name: 'DataSource' } } });
  });

  it('rejects __schema and __type with a 400 GraphQL error when off, but keeps __typename', async () => {
    for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "DataSource") { name } }']) {
      const res = await gql(flipped, query);
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/introspection has been disabled/), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    }
    expect((await gql(flipped, '{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('hides field suggestions only when introspection is off (they would reveal the schema)', async () => {
    const open = await gql(defaults, '{ currentOrganizatio { id } }');
    expect(open.status).toBe(400);
    expect(open.body.errors?.[0]?.message).toContain('Did you mean "currentOrganization"');
    const closed = await gql(flipped, '{ currentOrganizatio { id } }');
    expect(closed.status).toBe(400);
    expect(closed.text).not.toContain('Did you mean');
    expect(closed.text).not.toContain('"currentOrganization"');
  });

  it('answers unparsable documents with 400 too', async () => {
    const res = await gql(defaults, '{ currentOrganization { dataSources { nodes { id ');
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });
});

describe('[graphql] query limits', () => {
  it.each([
    ['max_depth', DEPTH_3, 'Query depth limit of 2 exceeded, found 3.'],
    ['max_aliases', THREE_ALIASES, 'Aliases limit of 2 exceeded, found 3.'],
    ['max_cost', WIDE, /^Query Cost limit of 20 exceeded, found \d+\.$/],
  ])('%s rejects an operation over the limit with a clear 400, and the default limit lets it run', async (_key, query, message) => {
    const refused = await gql(flipped, query);
    expect(refused.status).toBe(400);
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors).toEqual([{ message: expect.stringMatching(message), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);

    const accepted = await gql(defaults, query);
    expect(accepted.status).toBe(200);
    expect(accepted.body.errors).toBeUndefined();
  });

  it('applies the default depth limit of 12 (type references nest without end)', async () => {
    const nested = (levels: number) => `{ __type(name: "DataSource") { ${'ofType { '.repeat(levels)}name${' }'.repeat(levels)} } }`;
    expect((await gql(defaults, nested(10))).status).toBe(200);
    const refused = await gql(defaults, nested(11));
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toBe('Query depth limit of 12 exceeded, found 13.');
  });

  it('refuses documents of over 2000 tokens while parsing', async () => {
    // A long list literal makes a long but valid document; uid never-was does not exist, so nothing changes.
    const update = (numbers: number) => `mutation { dataSourceUpdate(uid: "never-was", input: { name: "n", type: "t", access: "proxy", jsonData: { a: [${'1 '.repeat(numbers)}] } }) { userErrors { message } } }`;
    const refused = await gql(defaults, update(2000));
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toMatch(/Token limit of 2000 exceeded/);
    const parsed = await gql(defaults, update(1900));
    expect(parsed.status).toBe(200);
    expect(parsed.body.data.dataSourceUpdate.userErrors).toEqual([{ message: 'Data source not found' }]);
  });

  it('does not count introspection against the limits (GraphiQL must load its schema)', async () => {
    // 15 levels under __schema, past the default depth limit of 12.
    const res = await gql(defaults, `{ __schema { types { fields { type { ${'ofType { '.repeat(10)}name${' }'.repeat(10)} } } } } }`);
    expect(res.status).toBe(200);
    expect(res.body.data.__schema.types.length).toBeGreaterThan(10);
  });
});

describe('[graphql] mask_errors', () => {
  // A real internal failure: the table behind the query is gone.
  async function withDataSourceTableMissing<T>(server: TestServer, work: () => Promise<T>): Promise<T> {
    await server.sql('alter table data_source rename to data_source_away');
    try {
      return await work();
    } finally {
      await server.sql('alter table data_source_away rename to data_source');
    }
  }

  it('masks an unexpected error: no message, SQL, or stack reaches the client', async () => {
    const res = await withDataSourceTableMissing(defaults, () => gql(defaults, '{ currentOrganization { dataSources { nodes { id } } } }'));
    expect(res.status).toBe(500);
    expect(res.body.errors).toEqual([{ message: 'Unexpected error.', path: ['currentOrganization', 'dataSources'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
    expect(res.text).not.toMatch(/data_source|relation|select|\bat \S+ \(/i);
  });

  it('shows the original message with mask_errors = false (development)', async () => {
    // Within the flipped server's depth limit of 2: the front end's settings list the data sources.
    const res = await withDataSourceTableMissing(flipped, () => gql(flipped, '{ frontendSettings { datasources } }'));
    expect(res.status).toBe(500);
    expect(res.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('relation "data_source" does not exist'), extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });

  it('keeps domain errors as they are either way', async () => {
    for (const server of [defaults, flipped]) {
      const res = await gql(server, '{ node(id: "not-a-global-id") { id } }');
      expect(res.status).toBe(400);
      expect(res.body.errors?.[0]).toMatchObject({ message: 'Invalid global id: not-a-global-id', extensions: { code: 'BAD_REQUEST' } });
    }
  });
});

describe('[graphql] csrf_prevention', () => {
  const query = '{ currentOrganization { dataSources { nodes { name } } } }';
  const create = (name: string) => JSON.stringify({
    query: 'mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } } }',
    variables: { input: { name, type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9' } },
  });

  it('refuses simple (form-like) requests that lack the header, and runs none of their mutations', async () => {
    const attempts = [
      call(defaults, 'POST', '/graphql', { rawBody: create('csrf-text'), headers: { 'content-type': 'text/plain' } }),
      call(defaults, 'POST', '/graphql', { rawBody: `query=${encodeURIComponent('{ currentOrganization { dataSources { nodes { name } } } }')}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      call(defaults, 'POST', '/graphql', { rawBody: create('csrf-none') }),
      call(defaults, 'GET', `/graphql?query=${encodeURIComponent(query)}`),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(CSRF_REFUSAL), extensions: { code: 'CSRF_PREVENTED' } });
    }
    expect(await defaults.sql("select name from data_source where name like 'csrf-%'")).toEqual([]);
  });

  it('accepts JSON POSTs, and GET queries that carry the header', async () => {
    const created = await call(defaults, 'POST', '/graphql', { rawBody: create('csrf-json'), headers: { 'content-type': 'application/json' } });
    expect(created.status).toBe(200);
    expect(created.body.data.dataSourceCreate.dataSource.id).toEqual(expect.any(String));

    const read = await call(defaults, 'GET', `/graphql?query=${encodeURIComponent(query)}`, { headers: { 'x-graphql-yoga-csrf': '1' } });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ data: { currentOrganization: { dataSources: { nodes: [{ name: 'csrf-json' }] } } } });
  });

  it('lets GraphiQL send the header with its queries', async () => {
    const page = await call(defaults, 'GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('"additionalHeaders":{"x-graphql-yoga-csrf":"1"}');
  });

  it('accepts plain GET queries when off', async () => {
    // Within the flipped server's depth limit of 2.
    const res = await call(flipped, 'GET', `/graphql?query=${encodeURIComponent('{ viewer { login } }')}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { viewer: { login: 'admin' } } });
  });
});

describe('cross-origin access', () => {
  // A browser may hold Basic credentials for the server and attach them to a cross-site request;
  // without CORS grants no other site can read an answer or pass a preflight (as on REST).
  const origin = 'https://elsewhere.example';

  it('grants no other origin anything, on a preflight or on a credentialed POST', async () => {
    const preflight = await call(defaults, 'OPTIONS', '/graphql', {
      auth: null,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    const post = await call(defaults, 'POST', '/graphql', { body: { query: '{ currentOrganization { dataSources { nodes { name } } } }' }, headers: { origin } });
    expect(post.status).toBe(200);
    for (const res of [preflight, post]) {
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const rest = await call(defaults, 'GET', '/api/datasources', { headers: { origin } });
    expect(rest.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('[graphql] graphiql', () => {
  it('serves the IDE to browsers when on and not when off', async () => {
    const on = await call(defaults, 'GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(on.status).toBe(200);
    expect(on.headers.get('content-type')).toMatch(/^text\/html/);
    expect(on.text).toContain('<title>dashgate GraphQL</title>');

    const off = await call(flipped, 'GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(off.status).toBe(406);
    expect(off.text).not.toContain('<html');
  });
});
