import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getSchema } from '../../src/graphql/schema/index.ts';
import { serverAdmin, signedIn } from '../../src/auth/access.ts';
import { buildOpenApiDocument, openApiJson } from '../../src/http/openapi.ts';
import { ROUTES, type RestRoute } from '../../src/http/routes.ts';
import { basic, call, startTestServer, type Reply, type TestServer } from '../support/server.ts';

type Schema = Record<string, any>;
type Doc = { paths: Record<string, Record<string, Schema>>; components: Record<string, Record<string, Schema>> };

const committedText = readFileSync(new URL('../../schema/openapi.json', import.meta.url), 'utf8');
const doc = JSON.parse(committedText) as Doc;

function resolve(ref: string): Schema {
  const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
  const target = section && name ? doc.components[section]?.[name] : undefined;
  if (!target) throw new Error(`unresolved ${ref}`);
  return target;
}

/**
 * Checks a value against the document's schema subset. Objects without additionalProperties are
 * closed: a body must have exactly the documented keys, in the documented order.
 */
function check(schema: Schema, value: unknown, at = '$', problems: string[] = []): string[] {
  if (schema.$ref) return check(resolve(schema.$ref), value, at, problems);
  if (value === null) {
    if (!schema.nullable && (schema.type || schema.allOf)) problems.push(`${at}: null where not nullable`);
    return problems;
  }
  for (const part of schema.allOf ?? []) check(part, value, at, problems);
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} not in ${schema.enum}`);
  switch (schema.type) {
    case 'integer': if (!Number.isInteger(value)) problems.push(`${at}: not an integer`); break;
    case 'number': if (typeof value !== 'number') problems.push(`${at}: not a number`); break;
    case 'string': if (typeof value !== 'string') problems.push(`${at}: not a string`); break;
    case 'boolean': if (typeof value !== 'boolean') problems.push(`${at}: not a boolean`); break;
    case 'array':
      if (!Array.isArray(value)) problems.push(`${at}: not an array`);
      else value.forEach((item, i) => check(schema.items, item, `${at}[${i}]`, problems));
      break;
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) {
        problems.push(`${at}: not an object`);
        break;
      }
      if (!schema.properties) break;
      const keys = Object.keys(value);
      const documented = Object.keys(schema.properties);
      if (schema.additionalProperties) {
        for (const key of schema.required ?? []) if (!keys.includes(key)) problems.push(`${at}: missing ${key}`);
      } else if (JSON.stringify(keys) !== JSON.stringify(documented)) problems.push(`${at}: keys ${keys} but documented ${documented}`);
      for (const key of keys) if (schema.properties[key]) check(schema.properties[key], (value as Record<string, unknown>)[key], `${at}.${key}`, problems);
      break;
    }
  }
  return problems;
}

/** The documented operation for a concrete request path; literal segments beat parameters, as in the router. */
function operationFor(method: string, path: string): Schema {
  const segments = path.split('/');
  const candidates = Object.keys(doc.paths)
    .map((template) => template.split('/'))
    .filter((t) => t.length === segments.length && t.every((part, i) => part.startsWith('{') || part === segments[i]) && doc.paths[t.join('/')]![method.toLowerCase()]);
  candidates.sort((a, b) => {
    const i = a.findIndex((part, n) => part.startsWith('{') !== b[n]!.startsWith('{'));
    return i < 0 ? 0 : a[i]!.startsWith('{') ? 1 : -1;
  });
  const op = candidates[0] && doc.paths[candidates[0].join('/')]![method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not documented`);
  return op;
}

/** The endpoints of spec 4.1 and 4.2 (the proxy aside). */
const SPEC_ENDPOINTS = [
  'GET /api/admin/settings', 'GET /api/admin/stats', 'POST /api/admin/users', 'PUT /api/admin/users/1/password',
  'PUT /api/admin/users/1/permissions', 'DELETE /api/admin/users/1', 'POST /api/admin/pause-all-alerts',
  'GET /api/datasources', 'GET /api/datasources/1', 'GET /api/datasources/name/x', 'GET /api/datasources/id/x',
  'POST /api/datasources', 'PUT /api/datasources/1', 'DELETE /api/datasources/1', 'DELETE /api/datasources/name/x',
];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('schema/openapi.json', () => {
  it('is what the route table and the GraphQL operations generate (run `npm run openapi:print` after changing either)', () => {
    expect(committedText).toBe(openApiJson());
  });

  it('documents every route of the route table with its operation, parameters and security', () => {
    const ids = new Set<string>();
    for (const route of ROUTES) {
      if (route.kind !== 'rest') continue;
      const template = route.path.replace(/:(\w+)/g, '{$1}');
      const op = doc.paths[template]?.[route.method.toLowerCase()];
      const operation = /(?:query|mutation) (\w+)/.exec(route.document)![1];
      expect({ route: `${route.method} ${route.path}`, operation: op?.['x-graphql-operation'] }).toEqual({ route: `${route.method} ${route.path}`, operation });
      const declared = (op!.parameters ?? []).filter((p: Schema) => p.in === 'path').map((p: Schema) => p.name);
      expect(declared).toEqual([...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
      expect(op!.security).toEqual(route.access.kind === 'server-admin' ? [{ basicAuth: [] }] : [{ basicAuth: [] }, { bearerAuth: [] }]);
      expect(Object.keys(op!.responses)).toContain(String(route.status ?? 200));
      expect(ids.has(op!.operationId)).toBe(false);
      ids.add(op!.operationId);
      if (route.body) expect(op!.requestBody?.content?.['application/json']?.schema).toBeDefined();
      else expect(op!.requestBody).toBeUndefined();
    }
  });

  it('has no dangling references', () => {
    const refs = committedText.match(/"\$ref": "[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect(() => resolve(ref.slice(9, -1))).not.toThrow();
  });
});

describe('the generator', () => {
  const synthetic = (route: Partial<RestRoute>, source: string) => {
    const full: RestRoute = { kind: 'rest', method: 'GET', path: '/api/x', access: signedIn, document: source, ...route };
    const generated = buildOpenApiDocument(getSchema(), [full], '') as { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } };
    return { op: generated.paths[full.path.replace(/:(\w+)/g, '{$1}')]![full.method.toLowerCase()]!, schemas: generated.components.schemas };
  };

  it('follows the selection set: aliases, order, lists, nullability and scalars', () => {
    const { op } = synthetic({}, 'query X { alerts { b: id a: name dashboardId } }');
    const schema = op.responses['200'].content['application/json'].schema;
    expect(schema.type).toBe('array');
    expect(Object.keys(schema.items.properties)).toEqual(['b', 'a', 'dashboardId']);
    expect(schema.items.properties.b).toMatchObject({ type: 'integer', format: 'int32' });
    expect(schema.items.properties.a).toMatchObject({ type: 'string' });
    expect(schema.items.properties.dashboardId).toMatchObject({ type: 'integer', nullable: true });
    expect(schema.items.properties.b.nullable).toBeUndefined();
    expect(schema.items.required).toEqual(['b', 'a', 'dashboardId']);
  });

  it('derives request bodies from $input or from the other variables, and typed path parameters', () => {
    const input = synthetic({ method: 'POST', path: '/api/x/:id', body: 'input', ids: { id: 'DataSource' } }, 'mutation X($id: ID!, $input: UpdateDataSourceInput!) { dataSourceUpdate(id: $id, input: $input) { dataSource { name } } }');
    expect(input.op.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int32' } });
    expect(input.op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/UpdateDataSourceInput' });
    expect(input.schemas.UpdateDataSourceInput.required).toEqual(expect.arrayContaining(['name', 'type', 'access']));
    expect(input.schemas.UpdateDataSourceInput.properties.jsonData).toMatchObject({ type: 'object', nullable: true });
    expect(input.op.responses['400']).toEqual({ $ref: '#/components/responses/BadRequest' });

    const spread = synthetic({ method: 'PUT', path: '/api/x/:id', body: 'variables', ids: { id: 'User' }, access: serverAdmin },
      'mutation X($id: ID!, $password: String!) { userPasswordUpdate(id: $id, input: { password: $password }) { userErrors { message } } }');
    expect(spread.op.requestBody.content['application/json'].schema).toMatchObject({ type: 'object', required: ['password'], properties: { password: { type: 'string' } } });
    expect(spread.op.security).toEqual([{ basicAuth: [] }]);
  });
});

describe('GET /api/openapi.json', () => {
  it('serves the committed document without credentials, even with wrong ones', async () => {
    for (const auth of [null, basic('admin', 'wrong-password')]) {
      const res = await call(server, 'GET', '/api/openapi.json', { auth });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.text).toBe(committedText);
    }
  });
});

describe('the REST answers match the document', () => {
  const seen = new Set<string>();

  async function conforming(method: string, path: string, options: { body?: unknown; auth?: string | null } = {}): Promise<Reply> {
    const res = await call(server, method, path, options);
    const op = operationFor(method, path);
    const response = op.responses[String(res.status)] ?? op.responses.default;
    expect({ request: `${method} ${path}`, documented: Boolean(op.responses[String(res.status)]) || res.status >= 400 }).toEqual({ request: `${method} ${path}`, documented: true });
    const resolved = response.$ref ? resolve(response.$ref) : response;
    const schema = resolved.content['application/json'].schema;
    expect({ request: `${method} ${path}`, status: res.status, problems: check(schema, res.body) }).toEqual({ request: `${method} ${path}`, status: res.status, problems: [] });
    seen.add(op.operationId);
    return res;
  }

  it('for data sources, administration and tokens, successes and errors alike', async () => {
    const created = await conforming('POST', '/api/datasources', {
      body: { name: 'oa-prom', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9', jsonData: { httpMethod: 'POST' }, secureJsonData: { token: 'OA-CANARY' } },
    });
    expect(created.status).toBe(200);
    const { id, datasource: { uid } } = created.body;
    await conforming('GET', '/api/datasources');
    await conforming('GET', `/api/datasources/${id}`);
    await conforming('GET', `/api/datasources/uid/${uid}`);
    await conforming('GET', '/api/datasources/name/oa-prom');
    await conforming('GET', '/api/datasources/id/oa-prom');
    await conforming('PUT', `/api/datasources/${id}`, { body: { name: 'oa-prom', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:10' } });
    await conforming('PUT', `/api/datasources/uid/${uid}`, { body: { name: 'oa-prom-2', type: 'prometheus', access: 'proxy' } });

    await conforming('GET', '/api/admin/settings');
    await conforming('GET', '/api/admin/stats');
    const user = await conforming('POST', '/api/admin/users', { body: { name: 'Oa', email: 'oa@example.com', login: 'oa', password: 'oa-password' } });
    await conforming('PUT', `/api/admin/users/${user.body.id}/password`, { body: { password: 'oa-password-2' } });
    await conforming('PUT', `/api/admin/users/${user.body.id}/permissions`, { body: { isServiceAdmin: true } });
    await conforming('POST', '/api/admin/pause-all-alerts', { body: { paused: true } });
    await conforming('DELETE', `/api/admin/users/${user.body.id}`);

    const key = await conforming('POST', '/api/auth/keys', { body: { name: 'oa-key', role: 'Viewer' } });
    await conforming('GET', '/api/auth/keys');
    await conforming('DELETE', `/api/auth/keys/${key.body.id}`);
    const account = await conforming('POST', '/api/serviceaccounts', { body: { name: 'oa-bot' } });
    expect(account.status).toBe(201);
    await conforming('GET', '/api/serviceaccounts/search');
    await conforming('GET', `/api/serviceaccounts/${account.body.id}`);
    const token = await conforming('POST', `/api/serviceaccounts/${account.body.id}/tokens`, { body: { name: 'oa-token' } });
    await conforming('GET', `/api/serviceaccounts/${account.body.id}/tokens`);
    expect((await conforming('GET', '/api/admin/stats', { auth: `Bearer ${token.body.key}` })).status).toBe(403);
    await conforming('DELETE', `/api/serviceaccounts/${account.body.id}/tokens/${token.body.id}`);
    await conforming('DELETE', `/api/serviceaccounts/${account.body.id}`);

    // Documented errors carry the Error shape.
    expect((await conforming('GET', '/api/datasources/424242')).status).toBe(404);
    expect((await conforming('GET', '/api/datasources/not-a-number')).status).toBe(400);
    expect((await conforming('POST', '/api/datasources', { body: { name: 'x', type: 5 } })).status).toBe(400);
    expect((await conforming('GET', '/api/datasources', { auth: null })).status).toBe(401);
    expect((await conforming('GET', '/api/datasources', { auth: `Bearer ${token.body.key}` })).status).toBe(401);

    await conforming('DELETE', '/api/datasources/name/oa-prom-2');
    const again = await conforming('POST', '/api/datasources', { body: { name: 'oa-again', type: 'graphite', access: 'proxy', url: 'http://127.0.0.1:11' } });
    await conforming('DELETE', `/api/datasources/uid/${again.body.datasource.uid}`);
    const third = await conforming('POST', '/api/datasources', { body: { name: 'oa-third', type: 'graphite', access: 'proxy' } });
    await conforming('DELETE', `/api/datasources/${third.body.id}`);

    // Every endpoint of the spec was checked against its answer.
    const unchecked = SPEC_ENDPOINTS.filter((endpoint) => {
      const [method, path] = endpoint.split(' ') as [string, string];
      return !seen.has(operationFor(method, path).operationId);
    });
    expect(unchecked).toEqual([]);
  });
});
