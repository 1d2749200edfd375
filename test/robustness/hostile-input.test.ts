import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_JSON_DEPTH } from '../../src/graphql/schema/scalars.ts';
import { ADMIN, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { rawRequest } from './helpers.ts';

/**
 * The inputs the fuzzer first found answered with 500s, pinned as plain regression tests.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const nested = (depth: number): unknown => (depth <= 1 ? { leaf: true } : { a: nested(depth - 1) });
const create = `mutation($input: CreateDataSourceInput!) { createDataSource(input: $input) { id datasource { jsonData } } }`;

describe('JSON nesting', () => {
  it(`stores jsonData up to ${MAX_JSON_DEPTH} levels and refuses deeper with 400, over REST and GraphQL`, async () => {
    const ok = await call(server, 'POST', '/api/datasources', { body: { name: 'deep-ok', type: 'loki', access: 'proxy', jsonData: nested(MAX_JSON_DEPTH) } });
    expect(ok.status).toBe(200);
    expect((await call(server, 'GET', `/api/datasources/${ok.body.id}`)).body.jsonData).toEqual(nested(MAX_JSON_DEPTH));

    const rest = await call(server, 'POST', '/api/datasources', { body: { name: 'deep-rest', type: 'loki', access: 'proxy', jsonData: nested(MAX_JSON_DEPTH + 1) } });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({ message: 'bad request data' });

    // Far deeper than any recursive serialiser survives: still a 400, not a stack overflow.
    const text = `{"name":"deep-text","type":"loki","access":"proxy","jsonData":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`;
    const raw = await call(server, 'POST', '/api/datasources', { rawBody: text, headers: { 'content-type': 'application/json' } });
    expect(raw.status).toBe(400);

    // A variable that fails coercion: yoga answers application/json requests with 200 and the error.
    const graphql = await gql(server, create, { input: { name: 'deep-gql', type: 'loki', access: 'proxy', jsonData: nested(MAX_JSON_DEPTH + 1) } });
    expect(graphql.status).toBeLessThan(500);
    expect(graphql.body.data).toBeUndefined();
    expect(graphql.body.errors?.[0]?.message).toContain(`nested more than ${MAX_JSON_DEPTH} levels`);
    expect((await call(server, 'GET', '/api/datasources')).body.map((d: { name: string }) => d.name)).toEqual(['deep-ok']);
  });
});

describe('NUL characters, which PostgreSQL cannot store', () => {
  it('are 400s in body fields, JSON keys and values, and path parameters', async () => {
    const bodies = [
      { name: 'a\u0000b', type: 'loki', access: 'proxy' },
      { name: 'nul-json-value', type: 'loki', access: 'proxy', jsonData: { k: 'v\u0000' } },
      { name: 'nul-json-key', type: 'loki', access: 'proxy', jsonData: { 'k\u0000': 'v' } },
      { name: 'nul-secret-key', type: 'loki', access: 'proxy', secureJsonData: { 'k\u0000': 'v' } },
    ];
    for (const body of bodies) {
      const res = await call(server, 'POST', '/api/datasources', { body });
      expect([res.status, res.body]).toEqual([400, { message: 'bad request data' }]);
    }
    for (const path of ['/api/datasources/name/a%00b', '/api/datasources/uid/a%00b', '/api/datasources/id/a%00b']) {
      const res = await call(server, 'GET', path);
      expect([res.status, res.body]).toEqual([400, { message: 'bad request data' }]);
    }
  });

  it('are 400s over GraphQL too, in plain string arguments that only PostgreSQL refuses', async () => {
    const byName = await gql(server, 'query($name: String!) { dataSourceByName(name: $name) { id } }', { name: 'x\u0000y' });
    expect(byName.status).toBe(400);
    expect(byName.body.errors?.[0]).toMatchObject({ message: 'bad request data', extensions: { code: 'BAD_REQUEST' } });
    const created = await gql(server, create, { input: { name: 'n\u0000', type: 'loki', access: 'proxy' } });
    expect(created.status).toBe(400);
    const inJson = await gql(server, create, { input: { name: 'nul-gql-json', type: 'loki', access: 'proxy', jsonData: { k: '\u0000' } } });
    expect(inJson.status).toBeLessThan(500);
    expect(inJson.body.errors?.[0]?.message).toContain('U+0000');
    const names = (await call(server, 'GET', '/api/datasources')).body.map((d: { name: string }) => d.name);
    expect(names.filter((name: string) => name.startsWith('n'))).toEqual([]);
  });
});

describe('/graphql refusals that yoga sends without a body', () => {
  it('415 for a content type it cannot parse and 406 for an Accept it cannot satisfy, both as JSON errors', async () => {
    const unsupported = await rawRequest(server.url, { method: 'POST', path: '/graphql', headers: { authorization: ADMIN, 'content-type': 'text/csv' }, body: 'a,b' });
    expect(unsupported.status).toBe(415);
    expect(unsupported.headers['content-type']).toContain('application/json');
    expect(JSON.parse(unsupported.body.toString()).errors[0].message).toBe('Unsupported Media Type: send application/json');

    const unacceptable = await rawRequest(server.url, {
      method: 'POST', path: '/graphql', headers: { authorization: ADMIN, 'content-type': 'application/json', accept: 'image/png' }, body: '{"query":"{ __typename }"}',
    });
    expect(unacceptable.status).toBe(406);
    expect(JSON.parse(unacceptable.body.toString()).errors[0].message).toMatch(/^Not Acceptable/);
  });
});

describe('an org header beyond PostgreSQL integers', () => {
  it('is an org the caller does not belong to (401), not a database error', async () => {
    const res = await call(server, 'GET', '/api/datasources', { headers: { 'x-grafana-org-id': '2147483648' } });
    expect(res.status).toBe(401);
  });
});
