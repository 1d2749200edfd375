import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let viewer: string;
let editor: string;

async function createUser(login: string, role: 'Viewer' | 'Editor' | 'Admin', orgId = 1): Promise<string> {
  const { hashPassword } = await import('../../src/auth/passwords.ts');
  const [user] = await server.sql<{ id: number }>(
    `insert into "user" (login, email, name, password_hash, org_id) values ($1, $2, $1, $3, $4) returning id`,
    [login, `${login}@example.com`, await hashPassword('secret-pw'), orgId],
  );
  await server.sql(`insert into org_user (org_id, user_id, role) values ($1, $2, $3)`, [orgId, user!.id, role]);
  return basic(login, 'secret-pw');
}

const graphite = { name: 'gdev-graphite', type: 'graphite', url: 'http://graphite.example:8080', access: 'proxy', basicAuth: false };

beforeAll(async () => {
  server = await startTestServer();
  viewer = await createUser('viewer', 'Viewer');
  editor = await createUser('editor', 'Editor');
});
afterAll(() => server.close());

describe('POST /api/datasources', () => {
  it('creates a data source and answers with the full object, keys sorted like the original', async () => {
    const res = await call(server, 'POST', '/api/datasources', { body: { ...graphite, jsonData: { graphiteVersion: '1.1' } } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(Object.keys(res.body)).toEqual(['datasource', 'id', 'message', 'name']);
    expect(res.body.message).toBe('Datasource added');
    expect(res.body.name).toBe('gdev-graphite');
    expect(res.body.id).toBeGreaterThan(0);
    expect(Object.keys(res.body.datasource)).toEqual([
      'id', 'uid', 'orgId', 'name', 'type', 'typeLogoUrl', 'access', 'url', 'password', 'user', 'database', 'basicAuth',
      'basicAuthUser', 'basicAuthPassword', 'withCredentials', 'isDefault', 'jsonData', 'secureJsonFields', 'version', 'readOnly',
    ]);
    expect(res.body.datasource).toMatchObject({
      id: res.body.id, orgId: 1, type: 'graphite', access: 'proxy', url: graphite.url, version: 1, readOnly: false,
      isDefault: true, // the org's first data source
      jsonData: { graphiteVersion: '1.1' }, secureJsonFields: {}, password: '', basicAuthPassword: '',
    });
    expect(res.body.datasource.uid).toMatch(/^[a-f][0-9a-f-]{35}$/);
  });

  it('stores jsonData as {} when it is omitted or null, and returns it so everywhere', async () => {
    for (const [name, extra] of [['no-json-data', {}], ['null-json-data', { jsonData: null }]] as const) {
      const res = await call(server, 'POST', '/api/datasources', { body: { name, type: 'loki', access: 'proxy', ...extra } });
      expect(res.status).toBe(200);
      expect(res.body.datasource.jsonData).toEqual({});
      expect((await call(server, 'GET', `/api/datasources/${res.body.id}`)).body.jsonData).toEqual({});
      expect((await call(server, 'GET', '/api/datasources')).body.find((d: { id: number }) => d.id === res.body.id).jsonData).toEqual({});
      expect(await server.sql('select json_data from data_source where id = $1', [res.body.id])).toEqual([{ json_data: {} }]);
    }
  });

  it('stores the cloud-metrics kind\'s secrets write-only and reports only their names', async () => {
    const res = await call(server, 'POST', '/api/datasources', {
      body: {
        name: 'test_datasource', type: 'cloudwatch', url: 'http://monitoring.us-west-1.amazonaws.com', access: 'proxy', basicAuth: false,
        jsonData: { authType: 'keys', defaultRegion: 'us-west-1' },
        secureJsonData: { accessKey: 'AKIA-CANARY-ACCESS', secretKey: 'CANARY-SECRET-KEY-123' },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.datasource.secureJsonFields).toEqual({ accessKey: true, secretKey: true });
    expect(res.body.datasource.isDefault).toBe(false);
    expect(res.text).not.toContain('CANARY');
    const get = await call(server, 'GET', `/api/datasources/${res.body.id}`);
    expect(get.text).not.toContain('CANARY');
    // At rest: AES-GCM ciphertext, never the plaintext.
    const [row] = await server.sql<{ secure_json_data: Record<string, string> }>('select secure_json_data from data_source where id = $1', [res.body.id]);
    expect(Object.keys(row!.secure_json_data).sort()).toEqual(['accessKey', 'secretKey']);
    const dump = JSON.stringify(await server.sql('select * from data_source'));
    expect(dump).not.toContain('CANARY');
    expect(dump).not.toContain(Buffer.from('CANARY-SECRET-KEY-123').toString('base64'));
    expect(server.logText()).not.toContain('CANARY');
  });

  it('accepts legacy top-level password fields as secrets and never returns them', async () => {
    const res = await call(server, 'POST', '/api/datasources', {
      body: { name: 'legacy-influx', type: 'influxdb', url: 'http://influx:8086', access: 'proxy', user: 'u', password: 'LEGACY-PW-CANARY', basicAuth: true, basicAuthUser: 'b', basicAuthPassword: 'LEGACY-BASIC-CANARY' },
    });
    expect(res.status).toBe(200);
    expect(res.body.datasource).toMatchObject({ password: '', basicAuthPassword: '', user: 'u', basicAuthUser: 'b', secureJsonFields: { password: true, basicAuthPassword: true } });
    expect(res.text).not.toContain('CANARY');
    expect(JSON.stringify(await server.sql('select * from data_source'))).not.toContain('CANARY');
    const secrets = server.app.services.dataSources.decryptSecrets(await server.app.services.dataSources.get(server.orm.em.fork(), 1, { id: res.body.id }));
    expect(secrets).toEqual({ password: 'LEGACY-PW-CANARY', basicAuthPassword: 'LEGACY-BASIC-CANARY' });
  });

  it('matches body keys case-insensitively and ignores unknown ones, as Go decoding does', async () => {
    const res = await call(server, 'POST', '/api/datasources', { body: { NAME: 'upper-keys', Type: 'loki', ACCESS: 'proxy', url: 'http://loki:3100', whatever: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.datasource).toMatchObject({ name: 'upper-keys', type: 'loki', access: 'proxy' });
  });

  it('accepts a URL without a scheme and rejects an invalid one', async () => {
    expect((await call(server, 'POST', '/api/datasources', { body: { name: 'pg', type: 'postgres', access: 'proxy', url: 'localhost:5432' } })).status).toBe(200);
    const bad = await call(server, 'POST', '/api/datasources', { body: { name: 'Test', url: 'invalid:url', access: 'direct', type: 'test' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Validation error, invalid URL' });
  });

  it('refuses a duplicate name with 409', async () => {
    const res = await call(server, 'POST', '/api/datasources', { body: graphite });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: 'data source with the same name already exists' });
  });

  it('refuses a duplicate uid with 409 and an invalid uid with 400', async () => {
    expect((await call(server, 'POST', '/api/datasources', { body: { name: 'u1', type: 'loki', access: 'proxy', uid: 'fixed-uid' } })).status).toBe(200);
    const dup = await call(server, 'POST', '/api/datasources', { body: { name: 'u2', type: 'loki', access: 'proxy', uid: 'fixed-uid' } });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ message: 'data source with the same uid already exists' });
    const bad = await call(server, 'POST', '/api/datasources', { body: { name: 'u3', type: 'loki', access: 'proxy', uid: 'has spaces!' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Invalid datasource UID.' });
  });

  it('names an unnamed data source after its type', async () => {
    const first = await call(server, 'POST', '/api/datasources', { body: { type: 'tempo', access: 'proxy' } });
    const second = await call(server, 'POST', '/api/datasources', { body: { type: 'tempo', access: 'proxy' } });
    expect([first.body.name, second.body.name]).toEqual(['tempo', 'tempo-1']);
  });

  it.each([
    ['missing type', { name: 'x', access: 'proxy' }],
    ['missing access', { name: 'x', type: 'loki' }],
    ['wrong JSON type', { name: 'x', type: 'loki', access: 'proxy', basicAuth: 'yes' }],
    ['jsonData not an object', { name: 'x', type: 'loki', access: 'proxy', jsonData: [1] }],
    ['secureJsonData value not a string', { name: 'x', type: 'loki', access: 'proxy', secureJsonData: { a: 1 } }],
  ])('answers 400 "bad request data" for %s', async (_label, body) => {
    const res = await call(server, 'POST', '/api/datasources', { body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'bad request data' });
  });

  it('answers 400 for malformed JSON, a non-object body and a non-JSON content type', async () => {
    for (const [rawBody, type] of [['{"name":', 'application/json'], ['[1,2]', 'application/json'], ['name=x', 'application/x-www-form-urlencoded']] as const) {
      const res = await call(server, 'POST', '/api/datasources', { rawBody, headers: { 'content-type': type } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'bad request data' });
    }
  });

  it('is for org Admins only', async () => {
    for (const auth of [viewer, editor]) {
      const res = await call(server, 'POST', '/api/datasources', { auth, body: { name: 'nope', type: 'loki', access: 'proxy' } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ title: 'Access denied', message: expect.stringContaining('datasources:create') });
    }
  });
});

describe('GET /api/datasources', () => {
  it('lists list items ordered by name case-insensitively', async () => {
    for (const name of ['mmm', 'ZZZ', 'BBB', 'aaa']) {
      expect((await call(server, 'POST', '/api/datasources', { body: { name, type: 'testdata', access: 'proxy' } })).status).toBe(200);
    }
    const res = await call(server, 'GET', '/api/datasources', { auth: viewer });
    expect(res.status).toBe(200);
    const names: string[] = res.body.map((d: { name: string }) => d.name);
    expect(names.filter((n) => ['mmm', 'ZZZ', 'BBB', 'aaa'].includes(n))).toEqual(['aaa', 'BBB', 'mmm', 'ZZZ']);
    expect(names).toEqual([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
    expect(Object.keys(res.body[0])).toEqual(['id', 'uid', 'orgId', 'name', 'type', 'typeName', 'typeLogoUrl', 'access', 'url', 'user', 'database', 'basicAuth', 'isDefault', 'jsonData', 'readOnly']);
    const graphiteItem = res.body.find((d: { name: string }) => d.name === 'gdev-graphite');
    expect(graphiteItem).toMatchObject({ typeName: 'Graphite', typeLogoUrl: expect.stringContaining('graphite') });
    const custom = res.body.find((d: { name: string }) => d.name === 'aaa');
    expect(custom).toMatchObject({ typeName: 'TestData', jsonData: {} });
  });

  it('lists each data source with the values a single read answers', async () => {
    const created = (await call(server, 'POST', '/api/datasources', {
      body: {
        name: 'listed-in-full', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', user: 'u', database: 'db', basicAuth: true,
        basicAuthUser: 'reader', isDefault: false, jsonData: { httpMethod: 'POST', nested: { list: [1, 'two', null] } }, secureJsonData: { basicAuthPassword: 's3cret' },
      },
    })).body;
    const list = await call(server, 'GET', '/api/datasources', { auth: viewer });
    for (const item of list.body as Array<Record<string, unknown>>) {
      const single = (await call(server, 'GET', `/api/datasources/${item.id}`)).body as Record<string, unknown>;
      const shared = Object.keys(item).filter((key) => key !== 'typeName'); // only lists carry typeName
      expect(Object.fromEntries(shared.map((key) => [key, item[key]]))).toEqual(Object.fromEntries(shared.map((key) => [key, single[key]])));
    }
    expect(list.body.find((d: { id: number }) => d.id === created.id)).toMatchObject({ basicAuth: true, jsonData: { nested: { list: [1, 'two', null] } } });
    // The fields the list route leaves out still resolve on list items through GraphQL.
    const gql = await call(server, 'POST', '/graphql', { body: { query: '{ currentOrganization { dataSources { nodes { id: databaseId secureJsonFields version withCredentials basicAuthUser } } } }' } });
    expect(gql.body.data.currentOrganization.dataSources.nodes.find((d: { id: number }) => d.id === created.id))
      .toEqual({ id: created.id, secureJsonFields: { basicAuthPassword: true }, version: 1, withCredentials: false, basicAuthUser: 'reader' });
  });

  it('answers a long list (written in chunks) as compact JSON, each item the bytes a short list has for it', async () => {
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Long List Org') returning id`);
    const admin = await createUser('long-list-admin', 'Admin', org!.id);
    const created = await call(server, 'POST', '/api/datasources', {
      auth: admin,
      body: { name: 'zürich ✓ 😀 "quoted"', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', jsonData: { label: 'ünï\ncødé', list: [1, null] }, secureJsonData: { basicAuthPassword: 'x' } },
    });
    expect(created.status).toBe(200);
    const short = await call(server, 'GET', '/api/datasources', { auth: admin });
    await server.sql(
      `insert into data_source (org_id, uid, name, type, access, url, json_data, secure_json_data)
       select $1, 'long-' || n, 'long-' || lpad(n::text, 3, '0'), 'loki', 'proxy', 'http://loki-' || n || ':3100', jsonb_build_object('maxLines', n), '{}'::jsonb
         from generate_series(1, 299) as n`,
      [org!.id],
    );
    const long = await call(server, 'GET', '/api/datasources', { auth: admin });
    expect(long.status).toBe(200);
    expect(long.headers.get('content-length')).toBe(String(Buffer.byteLength(long.text)));
    const items = long.body as Array<Record<string, unknown>>;
    expect(items).toHaveLength(300);
    expect(long.text).toBe(`[${items.map((item) => JSON.stringify(item)).join(',')}]`);
    for (const item of items) expect(Object.keys(item)).toEqual(Object.keys(short.body[0]));
    // Sorted last by name; its bytes are those of the list of one.
    expect(long.text.endsWith(`,${short.text.slice(1)}`)).toBe(true);
  });
});

describe('reading one data source', () => {
  it('by id, uid and name; and the id by name', async () => {
    const created = (await call(server, 'POST', '/api/datasources', { body: { name: 'reader/with slash', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', uid: 'prom-uid' } })).body;
    const byId = await call(server, 'GET', `/api/datasources/${created.id}`, { auth: viewer });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(created.datasource);
    expect((await call(server, 'GET', '/api/datasources/uid/prom-uid', { auth: editor })).body).toEqual(created.datasource);
    expect((await call(server, 'GET', `/api/datasources/name/${encodeURIComponent('reader/with slash')}`)).body).toEqual(created.datasource);
    const id = await call(server, 'GET', `/api/datasources/id/${encodeURIComponent('reader/with slash')}`, { auth: viewer });
    expect(id.body).toEqual({ id: created.id });
  });

  it('answers 404 "Data source not found" for unknown ones and 400 for a non-integer id', async () => {
    for (const path of ['/api/datasources/999999', '/api/datasources/uid/nope', '/api/datasources/name/nope', '/api/datasources/id/nope']) {
      const res = await call(server, 'GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Data source not found' });
    }
    const bad = await call(server, 'GET', '/api/datasources/abc');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'id is invalid' });
    // `/uid` alone is the `:id` route with id "uid", as in the original router.
    expect((await call(server, 'GET', '/api/datasources/uid')).body).toEqual({ message: 'id is invalid' });
  });
});

describe('PUT /api/datasources/:id', () => {
  it('replaces the data source, bumps the version and keeps secrets not mentioned', async () => {
    const created = (await call(server, 'POST', '/api/datasources', {
      body: { name: 'to-update', type: 'elasticsearch', access: 'proxy', url: 'http://es:9200', basicAuth: true, basicAuthUser: 'elastic', user: 'u', database: 'logs-*', secureJsonData: { basicAuthPassword: 'bap', other: 'o' }, jsonData: { esVersion: 8 } },
    })).body;
    const res = await call(server, 'PUT', `/api/datasources/${created.id}`, {
      body: { name: 'updated', type: 'elasticsearch', access: 'direct', version: 1, secureJsonData: { other: 'o2', removed: '' } },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['datasource', 'id', 'message', 'name']);
    expect(res.body).toMatchObject({ message: 'Datasource updated', id: created.id, name: 'updated' });
    expect(res.body.datasource).toMatchObject({
      name: 'updated', access: 'direct', version: 2,
      url: 'http://es:9200', basicAuthUser: 'elastic', // empty keeps the stored value
      user: '', database: '', basicAuth: false, jsonData: {}, // omitted is cleared (to {}, as the original stores it)
      secureJsonFields: { basicAuthPassword: true, other: true },
    });
    const secrets = server.app.services.dataSources.decryptSecrets(await server.app.services.dataSources.get(server.orm.em.fork(), 1, { id: created.id }));
    expect(secrets).toEqual({ basicAuthPassword: 'bap', other: 'o2' });
    // Sending a secret empty removes it.
    const cleared = await call(server, 'PUT', `/api/datasources/${created.id}`, { body: { name: 'updated', type: 'elasticsearch', access: 'direct', secureJsonData: { other: '' } } });
    expect(cleared.body.datasource.secureJsonFields).toEqual({ basicAuthPassword: true });
    expect(cleared.body.datasource.version).toBe(1); // version 0/absent skips the check and resets to 1
  });

  it('refuses a stale version with 409', async () => {
    const created = (await call(server, 'POST', '/api/datasources', { body: { name: 'versioned', type: 'loki', access: 'proxy' } })).body;
    const body = { name: 'versioned', type: 'loki', access: 'proxy', version: 1 };
    expect((await call(server, 'PUT', `/api/datasources/${created.id}`, { body })).status).toBe(200);
    const stale = await call(server, 'PUT', `/api/datasources/${created.id}`, { body });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ message: 'Datasource has already been updated by someone else. Please reload and try again' });
    expect((await call(server, 'PUT', `/api/datasources/${created.id}`, { body: { ...body, version: 2 } })).body.datasource.version).toBe(3);
  });

  it('validates the URL, requires name/type/access and refuses a rename onto another name', async () => {
    const created = (await call(server, 'POST', '/api/datasources', { body: { name: 'rename-me', type: 'loki', access: 'proxy' } })).body;
    const invalid = await call(server, 'PUT', `/api/datasources/${created.id}`, { body: { name: 'rename-me', type: 'loki', access: 'proxy', url: 'invalid:url' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ message: 'Validation error, invalid URL' });
    expect((await call(server, 'PUT', `/api/datasources/${created.id}`, { body: { name: 'rename-me', type: 'loki', access: 'proxy', url: 'localhost:3100' } })).status).toBe(200);
    const missing = await call(server, 'PUT', `/api/datasources/${created.id}`, { body: { type: 'loki', access: 'proxy' } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: 'bad request data' });
    const taken = await call(server, 'PUT', `/api/datasources/${created.id}`, { body: { name: 'gdev-graphite', type: 'loki', access: 'proxy' } });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ message: 'Failed to update datasource: data source with the same name already exists' });
  });

  it('moves the default: at most one per org', async () => {
    const a = (await call(server, 'POST', '/api/datasources', { body: { name: 'def-a', type: 'loki', access: 'proxy', isDefault: true } })).body;
    expect(a.datasource.isDefault).toBe(true);
    const b = (await call(server, 'POST', '/api/datasources', { body: { name: 'def-b', type: 'loki', access: 'proxy' } })).body;
    await call(server, 'PUT', `/api/datasources/${b.id}`, { body: { name: 'def-b', type: 'loki', access: 'proxy', isDefault: true } });
    const defaults = await server.sql('select name from data_source where org_id = 1 and is_default');
    expect(defaults).toEqual([{ name: 'def-b' }]);
  });

  it('works by uid, answers 404 for unknown ids and 403 for non-admins', async () => {
    const created = (await call(server, 'POST', '/api/datasources', { body: { name: 'by-uid', type: 'loki', access: 'proxy', uid: 'upd-uid' } })).body;
    const res = await call(server, 'PUT', '/api/datasources/uid/upd-uid', { body: { name: 'by-uid-2', type: 'loki', access: 'proxy', url: 'http://loki' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'by-uid-2', datasource: { url: 'http://loki', orgId: 1 } });
    expect((await call(server, 'PUT', '/api/datasources/12345678', { body: { name: 'x', type: 'loki', access: 'proxy' } })).status).toBe(404);
    expect((await call(server, 'PUT', '/api/datasources/uid/none', { body: { name: 'x', type: 'loki', access: 'proxy' } })).status).toBe(404);
    for (const auth of [viewer, editor]) {
      const denied = await call(server, 'PUT', `/api/datasources/${created.id}`, { auth, body: { name: 'x', type: 'loki', access: 'proxy' } });
      expect(denied.status).toBe(403);
      expect(denied.body.message).toContain('datasources:write');
    }
  });
});

describe('read-only (provisioned) data sources', () => {
  it('cannot be updated or deleted', async () => {
    const created = (await call(server, 'POST', '/api/datasources', { body: { name: 'provisioned', type: 'loki', access: 'proxy', uid: 'ro-uid' } })).body;
    await server.sql('update data_source set read_only = true where id = $1', [created.id]);
    const put = await call(server, 'PUT', `/api/datasources/${created.id}`, { body: { name: 'provisioned', type: 'loki', access: 'proxy' } });
    expect(put.status).toBe(403);
    expect(put.body).toEqual({ message: 'Cannot update read-only data source' });
    for (const path of [`/api/datasources/${created.id}`, '/api/datasources/uid/ro-uid', '/api/datasources/name/provisioned']) {
      const del = await call(server, 'DELETE', path);
      expect(del.status).toBe(403);
      expect(del.body).toEqual({ message: 'Cannot delete read-only data source' });
    }
    expect((await call(server, 'GET', `/api/datasources/${created.id}`)).body.readOnly).toBe(true);
  });
});

describe('DELETE', () => {
  it('by id answers only a message; by uid and name also the id', async () => {
    const a = (await call(server, 'POST', '/api/datasources', { body: { name: 'del-a', type: 'loki', access: 'proxy' } })).body;
    const b = (await call(server, 'POST', '/api/datasources', { body: { name: 'del-b', type: 'loki', access: 'proxy', uid: 'del-b-uid' } })).body;
    const c = (await call(server, 'POST', '/api/datasources', { body: { name: 'del-c', type: 'loki', access: 'proxy' } })).body;
    expect((await call(server, 'DELETE', `/api/datasources/${a.id}`)).body).toEqual({ message: 'Data source deleted' });
    expect((await call(server, 'DELETE', '/api/datasources/uid/del-b-uid')).body).toEqual({ id: b.id, message: 'Data source deleted' });
    expect((await call(server, 'DELETE', '/api/datasources/name/del-c')).body).toEqual({ id: c.id, message: 'Data source deleted' });
    expect((await call(server, 'GET', `/api/datasources/${a.id}`)).status).toBe(404);
    expect((await call(server, 'GET', '/api/datasources/uid/del-b-uid')).status).toBe(404);
  });

  it('answers 404 for unknown data sources and 403 for non-admins', async () => {
    for (const path of ['/api/datasources/name/12345', '/api/datasources/99999', '/api/datasources/uid/nope']) {
      const res = await call(server, 'DELETE', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Data source not found' });
    }
    const target = (await call(server, 'POST', '/api/datasources', { body: { name: 'keep-me', type: 'loki', access: 'proxy' } })).body;
    for (const auth of [viewer, editor]) {
      const res = await call(server, 'DELETE', `/api/datasources/${target.id}`, { auth });
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('datasources:delete');
    }
  });
});

describe('org isolation', () => {
  it('never shows or touches another org\'s data sources', async () => {
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Other Org') returning id`);
    const otherAdmin = await createUser('other-admin', 'Admin', org!.id);
    const mine = (await call(server, 'POST', '/api/datasources', { body: { name: 'org1-only', type: 'loki', access: 'proxy', uid: 'org1-uid' } })).body;
    const theirs = await call(server, 'POST', '/api/datasources', { auth: otherAdmin, body: { name: 'org1-only', type: 'loki', access: 'proxy' } });
    expect(theirs.status).toBe(200); // names are unique per org only
    expect(theirs.body.datasource).toMatchObject({ orgId: org!.id, isDefault: true });
    const list = await call(server, 'GET', '/api/datasources', { auth: otherAdmin });
    expect(list.body.map((d: { name: string }) => d.name)).toEqual(['org1-only']);
    expect(list.body[0].id).toBe(theirs.body.id);
    for (const [method, path] of [['GET', `/api/datasources/${mine.id}`], ['GET', '/api/datasources/uid/org1-uid'], ['DELETE', `/api/datasources/${mine.id}`], ['DELETE', '/api/datasources/uid/org1-uid']] as const) {
      expect((await call(server, method, path, { auth: otherAdmin })).status).toBe(404);
    }
    expect((await call(server, 'PUT', `/api/datasources/${mine.id}`, { auth: otherAdmin, body: { name: 'hijack', type: 'loki', access: 'proxy' } })).status).toBe(404);
    expect((await call(server, 'GET', `/api/datasources/${mine.id}`)).body.name).toBe('org1-only');
  });
});

describe('authentication and unknown routes', () => {
  it('answers 401 without credentials, with the current original server\'s body', async () => {
    const res = await call(server, 'GET', '/api/datasources', { auth: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ extra: null, message: 'Unauthorized', messageId: 'auth.unauthorized', statusCode: 401, traceID: '' });
  });

  it('answers 401 for a wrong password and for an unknown user alike', async () => {
    const wrong = await call(server, 'GET', '/api/datasources', { auth: basic('viewer', 'nope') });
    const unknown = await call(server, 'GET', '/api/datasources', { auth: basic('nobody', 'nope') });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.message).toBe('Invalid username or password');
  });

  it('accepts the e-mail as login', async () => {
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('viewer@example.com', 'secret-pw') })).status).toBe(200);
  });

  it('answers unknown /api routes with 404 "Not found" when signed in, 401 otherwise', async () => {
    const res = await call(server, 'GET', '/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Not found' });
    expect((await call(server, 'PATCH', '/api/datasources/1')).status).toBe(404);
    expect((await call(server, 'GET', '/api/nothing-here', { auth: null })).status).toBe(401);
  });

  it('sends the original server\'s default headers', async () => {
    const res = await call(server, 'GET', '/api/datasources');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-frame-options')).toBe('deny');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('API keys', () => {
  it('creates an org token usable as Bearer and as Basic api_key, with the key\'s role', async () => {
    const res = await call(server, 'POST', '/api/auth/keys', { auth: ADMIN, body: { name: 'ci-viewer', role: 'Viewer' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id', 'name', 'key']);
    const [row] = await server.sql<{ key_hash: string }>('select key_hash from api_key where id = $1', [res.body.id]);
    expect(row!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await server.sql('select * from api_key'))).not.toContain(res.body.key);
    expect((await call(server, 'GET', '/api/datasources', { auth: `Bearer ${res.body.key}` })).status).toBe(200);
    expect((await call(server, 'GET', '/api/datasources', { auth: basic('api_key', res.body.key) })).status).toBe(200);
    const denied = await call(server, 'POST', '/api/datasources', { auth: `Bearer ${res.body.key}`, body: { name: 'x', type: 'loki', access: 'proxy' } });
    expect(denied.status).toBe(403);
    const bad = await call(server, 'GET', '/api/datasources', { auth: 'Bearer not-a-key' });
    expect(bad.status).toBe(401);
    expect(bad.body.message).toBe('Invalid API key');
  });

  it('refuses an invalid role and a duplicate name', async () => {
    expect((await call(server, 'POST', '/api/auth/keys', { body: { name: 'r', role: 'Owner' } })).body).toEqual({ message: 'Invalid role specified' });
    expect((await call(server, 'POST', '/api/auth/keys', { body: { name: 'dup', role: 'Admin' } })).status).toBe(200);
    expect((await call(server, 'POST', '/api/auth/keys', { body: { name: 'dup', role: 'Admin' } })).status).toBe(409);
  });
});
