import { beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';

// What client libraries do with service accounts: page through the search until an empty page
// (grafana-client) or until totalCount (Terraform), look one up by name, PATCH it, and list its
// tokens; a disabled account's tokens are refused at once on every instance.

let first: TestServer;
let second: TestServer;
let editor: string;

twoInstances(async (a, b) => {
  [first, second] = [a, b];
  const e = await call(first, 'POST', '/api/admin/users', { body: { login: 'sa-editor', password: 'pass1234' } });
  await first.sql(`update org_user set role = 'Editor' where user_id = $1`, [e.body.id]);
  editor = basic('sa-editor', 'pass1234');
});

const search = (params: string, target: TestServer = first) => call(target, 'GET', `/api/serviceaccounts/search${params}`);
const names = (body: { serviceAccounts: Array<{ name: string }> }) => body.serviceAccounts.map((a) => a.name);

describe('GET /api/serviceaccounts/search', () => {
  beforeAll(async () => {
    // Four accounts sharing "pager", one "Solo", one whose name holds LIKE's wildcards.
    for (const name of ['Pager D', 'pager b', 'Pager A', 'PAGER C', 'Solo', '100% bot']) {
      expect((await call(first, 'POST', '/api/serviceaccounts', { body: { name } })).status).toBe(201);
    }
  });

  it('pages: 0, 1, exactly a page, and past the end, with totalCount counting every match', async () => {
    const none = await search('?query=nothing-like-this');
    expect(none.text).toBe('{"totalCount":0,"serviceAccounts":[],"page":1,"perPage":1000}');

    const one = await search('?query=solo&perpage=10');
    expect([one.body.totalCount, names(one.body), one.body.page, one.body.perPage]).toEqual([1, ['Solo'], 1, 10]);

    // Ordered by e-mail then login (a service account's e-mail is its login), as the original sorts.
    const exactly = await search('?query=pager&perpage=4&page=1');
    expect([exactly.body.totalCount, names(exactly.body)]).toEqual([4, ['Pager A', 'pager b', 'PAGER C', 'Pager D']]);
    const second_ = await search('?query=pager&perpage=2&page=2');
    expect([second_.body.totalCount, names(second_.body), second_.body.page, second_.body.perPage]).toEqual([4, ['PAGER C', 'Pager D'], 2, 2]);
    const past = await search('?query=pager&perpage=2&page=3');
    expect(past.text).toBe('{"totalCount":4,"serviceAccounts":[],"page":3,"perPage":2}');
    const farPast = await search('?query=pager&perpage=1000&page=2147483647');
    expect([farPast.status, farPast.body.totalCount, farPast.body.serviceAccounts]).toEqual([200, 4, []]);
  });

  it('ends the loop clients run: pages 1, 2, 3... until one comes back empty', async () => {
    const seen: string[] = [];
    for (let page = 1; page < 50; page++) {
      const res = await search(`?query=pager&perpage=3&page=${page}`);
      if (res.body.serviceAccounts.length === 0) break;
      seen.push(...names(res.body));
    }
    expect(seen).toEqual(['Pager A', 'pager b', 'PAGER C', 'Pager D']);
  });

  it('reads page and perpage as the original does: missing, unparsable or below 1 give the defaults', async () => {
    for (const params of ['', '?page=0&perpage=0', '?page=-3&perpage=-1', '?page=abc&perpage=x', '?page=99999999999&perpage=1.5']) {
      const res = await search(`${params}${params ? '&' : '?'}query=pager`);
      expect([params, res.status, res.body.page, res.body.perPage, res.body.totalCount]).toEqual([params, 200, 1, 1000, 4]);
    }
    // A repeated parameter counts by its first value, as Go's Query().Get reads it.
    expect((await search('?query=pager&perpage=2&perpage=1000')).body.perPage).toBe(2);
    expect(await search('?query=pa%00ger').then((r) => [r.status, r.body])).toEqual([400, { message: 'bad request data' }]);
  });

  it('matches name, login or e-mail case-insensitively, wildcards taken literally', async () => {
    expect(names((await search('?query=PaGeR%20b')).body)).toEqual(['pager b']);
    expect(names((await search('?query=sa-1-solo')).body)).toEqual(['Solo']);
    expect(names((await search('?query=100%25')).body)).toEqual(['100% bot']);
    expect((await search('?query=_')).body.totalCount).toBe(0);
    expect((await search('?query=%5C')).body.totalCount).toBe(0);
  });

  it('filters disabled accounts and is for org Admins only', async () => {
    const disabled = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'Pager Off', isDisabled: true } });
    expect(names((await search('?query=pager&disabled=true')).body)).toEqual(['Pager Off']);
    expect((await search('?query=pager&disabled=nope')).body.totalCount).toBe(5);
    await call(first, 'DELETE', `/api/serviceaccounts/${disabled.body.id}`);
    expect((await call(first, 'GET', '/api/serviceaccounts/search', { auth: editor })).status).toBe(403);
  });

  it('pages over a root field only REST runs: /graphql does not know it', async () => {
    const res = await gql(first, 'query($q: String) { serviceAccountSearch(query: $q, page: 2, perPage: 3) { totalCount } }', { q: 'pager' });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^Cannot query field "serviceAccountSearch" on type "Query"\./), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });
});

describe('PATCH /api/serviceaccounts/:id', () => {
  let id: number;
  beforeAll(async () => {
    id = (await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'Patch Me', role: 'Viewer' } })).body.id;
  });

  it('changes name, role and isDisabled, keeps the login, and answers as the original', async () => {
    const res = await call(first, 'PATCH', `/api/serviceaccounts/${id}`, { body: { name: 'Patched', role: 'Editor', isDisabled: true } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id', 'message', 'name', 'serviceaccount']);
    expect(Object.keys(res.body.serviceaccount)).toEqual(['id', 'name', 'login', 'orgId', 'isDisabled', 'createdAt', 'updatedAt', 'role', 'teams']);
    expect(res.body).toMatchObject({
      id, message: 'Service account updated', name: 'Patched',
      serviceaccount: { id, name: 'Patched', login: 'sa-1-patch-me', orgId: 1, isDisabled: true, role: 'Editor', teams: [] },
    });
    expect(Date.parse(res.body.serviceaccount.updatedAt)).toBeGreaterThanOrEqual(Date.parse(res.body.serviceaccount.createdAt));
    expect((await call(second, 'GET', `/api/serviceaccounts/${id}`)).body).toMatchObject({ name: 'Patched', login: 'sa-1-patch-me', isDisabled: true, role: 'Editor' });

    // Only what is sent changes.
    const partial = await call(first, 'PATCH', `/api/serviceaccounts/${id}`, { body: { isDisabled: false } });
    expect(partial.body.serviceaccount).toMatchObject({ name: 'Patched', role: 'Editor', isDisabled: false });
    const empty = await call(first, 'PATCH', `/api/serviceaccounts/${id}`, { body: {} });
    expect(empty.body.serviceaccount).toMatchObject({ name: 'Patched', role: 'Editor', isDisabled: false });
  });

  it('refuses bad input and foreign callers, changing nothing', async () => {
    const cases: Array<[string, string, unknown, number, string]> = [
      ['PATCH', `/api/serviceaccounts/${id}`, { role: 'Owner' }, 400, 'Invalid role specified'],
      ['PATCH', `/api/serviceaccounts/${id}`, { name: '   ' }, 400, 'Bad request data'],
      ['PATCH', `/api/serviceaccounts/${id}`, { isDisabled: 'yes' }, 400, 'bad request data'],
      ['PATCH', '/api/serviceaccounts/999999', { name: 'x' }, 404, 'Failed to retrieve service account'],
      ['PATCH', '/api/serviceaccounts/nope', { name: 'x' }, 400, 'id is invalid'],
    ];
    for (const [method, path, body, status, message] of cases) {
      const res = await call(first, method, path, { body });
      expect([path, body, res.status, res.body]).toEqual([path, body, status, { message }]);
    }
    const denied = await call(first, 'PATCH', `/api/serviceaccounts/${id}`, { auth: editor, body: { role: 'Admin' } });
    expect(denied.status).toBe(403);
    expect((await call(first, 'GET', `/api/serviceaccounts/${id}`)).body).toMatchObject({ name: 'Patched', role: 'Editor', isDisabled: false });
  });

  it('updates over GraphQL too', async () => {
    const node = (await gql(first, `{ currentOrganization { serviceAccount(databaseId: ${id}) { id } } }`)).body.data.currentOrganization.serviceAccount.id;
    const res = await gql(first, 'mutation($id: ID!) { serviceAccountUpdate(id: $id, input: { role: "Admin" }) { serviceAccount { databaseId role } userErrors { message } } }', { id: node });
    expect(res.body.data).toEqual({ serviceAccountUpdate: { serviceAccount: { databaseId: id, role: 'Admin' }, userErrors: [] } });
  });
});

describe('a disabled account\'s tokens', () => {
  it('are refused at once on every instance, and work again once it is enabled', async () => {
    const account = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'Deployer', role: 'Viewer' } });
    const token = (await call(first, 'POST', `/api/serviceaccounts/${account.body.id}/tokens`, { body: { name: 'deploy' } })).body.key;
    const auth = `Bearer ${token}`;
    // Both instances have verified (and cached) the token.
    expect((await call(first, 'GET', '/api/datasources', { auth })).status).toBe(200);
    expect((await call(second, 'GET', '/api/datasources', { auth })).status).toBe(200);

    expect((await call(first, 'PATCH', `/api/serviceaccounts/${account.body.id}`, { body: { isDisabled: true } })).status).toBe(200);
    for (const server of [second, first]) {
      const res = await call(server, 'GET', '/api/datasources', { auth });
      expect([res.status, res.body.messageId]).toEqual([401, 'identity.disabled']);
    }

    expect((await call(second, 'PATCH', `/api/serviceaccounts/${account.body.id}`, { body: { isDisabled: false } })).status).toBe(200);
    expect((await call(first, 'GET', '/api/datasources', { auth })).status).toBe(200);
    expect((await call(second, 'GET', '/api/datasources', { auth })).status).toBe(200);
  });
});

describe('a re-roled account\'s tokens', () => {
  it('act with the new role at once, on every instance', async () => {
    const account = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'Promoted', role: 'Viewer' } });
    const auth = `Bearer ${(await call(first, 'POST', `/api/serviceaccounts/${account.body.id}/tokens`, { body: { name: 'p' } })).body.key}`;
    const create = (server: TestServer, name: string) => call(server, 'POST', '/api/datasources', { auth, body: { name, type: 'loki', access: 'proxy' } });
    expect((await create(second, 'by-viewer')).status).toBe(403);
    expect((await call(first, 'PATCH', `/api/serviceaccounts/${account.body.id}`, { body: { role: 'Admin' } })).status).toBe(200);
    expect((await create(second, 'by-admin')).status).toBe(200);
    expect((await call(second, 'PATCH', `/api/serviceaccounts/${account.body.id}`, { body: { role: 'Viewer' } })).status).toBe(200);
    expect((await create(first, 'by-viewer-again')).status).toBe(403);
  });
});

describe('GET /api/serviceaccounts/:id/tokens', () => {
  it('lists created, lastUsedAt, expiration, secondsUntilExpiration, hasExpired and isRevoked, in the original\'s order', async () => {
    const account = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'Token Lister' } });
    const base = `/api/serviceaccounts/${account.body.id}/tokens`;
    await call(first, 'POST', base, { body: { name: 'a-forever' } });
    await call(first, 'POST', base, { body: { name: 'b-hour', secondsToLive: 3600 } });
    await call(first, 'POST', base, { body: { name: 'c-month', secondsToLive: 30 * 24 * 3600 } });
    const expired = await call(first, 'POST', base, { body: { name: 'd-expired', secondsToLive: 60 } });
    await first.sql(`update api_key set expires = now() - interval '1 minute' where id = $1`, [expired.body.id]);

    const res = await call(first, 'GET', base);
    expect(Object.keys(res.body[0])).toEqual(['id', 'name', 'created', 'lastUsedAt', 'expiration', 'secondsUntilExpiration', 'hasExpired', 'isRevoked']);
    const [forever, hour, month, gone] = res.body;
    expect(forever).toMatchObject({ name: 'a-forever', expiration: null, secondsUntilExpiration: 0, hasExpired: false, lastUsedAt: null, isRevoked: false });
    expect(Date.now() - Date.parse(forever.created)).toBeLessThan(60_000);
    expect(hour.hasExpired).toBe(false);
    expect(hour.secondsUntilExpiration).toBeGreaterThan(3500);
    expect(hour.secondsUntilExpiration).toBeLessThanOrEqual(3600);
    // Beyond 7 days the original reports 0.
    expect([month.hasExpired, month.secondsUntilExpiration]).toEqual([false, 0]);
    expect([gone.name, gone.hasExpired, gone.secondsUntilExpiration]).toEqual(['d-expired', true, 0]);
  });
});
