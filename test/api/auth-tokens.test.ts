import { crc32 } from 'node:zlib';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';

// Service accounts with their tokens, and legacy org API keys (reference 5, 6.4): created on one
// instance, used and refused on the other, with the original server's messages.

let first: TestServer;
let second: TestServer;
let otherOrg: number;
let editor: string;
let otherOrgAdmin: string;

const read = (server: TestServer, auth: string, headers: Record<string, string> = {}) => call(server, 'GET', '/api/datasources', { auth, headers });
const authError = (message: string, messageId: string) => ({ extra: null, message, messageId, statusCode: 401, traceID: '' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The original's checksum: CRC32 of `glsa_<secret>` as 8 hex digits of its little-endian bytes. */
function checksumOf(prefixAndSecret: string): string {
  const c = crc32(prefixAndSecret);
  return Buffer.from([c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, (c >>> 24) & 0xff]).toString('hex');
}

twoInstances(async (a, b) => {
  [first, second] = [a, b];
  otherOrg = (await first.sql<{ id: number }>(`insert into org (name) values ('Other Org') returning id`))[0]!.id;
  const e = await call(first, 'POST', '/api/admin/users', { body: { login: 'editor', password: 'pass1234' } });
  await first.sql(`update org_user set role = 'Editor' where user_id = $1`, [e.body.id]);
  editor = basic('editor', 'pass1234');
  const o = await call(first, 'POST', '/api/admin/users', { body: { login: 'other-admin', password: 'pass1234', orgId: otherOrg } });
  await first.sql(`update org_user set role = 'Admin' where user_id = $1`, [o.body.id]);
  otherOrgAdmin = basic('other-admin', 'pass1234');
});

describe('service accounts', () => {
  it('POST /api/serviceaccounts answers 201 with the ServiceAccountDTO', async () => {
    const res = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'My CI Bot', role: 'Editor', isDisabled: false } });
    expect(res.status).toBe(201);
    expect(res.text).toBe(`{"id":${res.body.id},"name":"My CI Bot","login":"sa-1-my-ci-bot","orgId":1,"isDisabled":false,"role":"Editor","tokens":0}`);
    const [row] = await first.sql('select is_service_account, password_hash, org_id from "user" where id = $1', [res.body.id]);
    expect(row).toEqual({ is_service_account: true, password_hash: null, org_id: 1 });
    expect(await first.sql('select org_id, role from org_user where user_id = $1', [res.body.id])).toEqual([{ org_id: 1, role: 'Editor' }]);
  });

  it('derives the login per org, one dash per space, and defaults the role to Viewer', async () => {
    const res = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'Two  Spaces', isDisabled: true } });
    expect(res.body).toMatchObject({ login: 'sa-1-two--spaces', role: 'Viewer', isDisabled: true });
    const other = await call(first, 'POST', '/api/serviceaccounts', { auth: otherOrgAdmin, body: { name: 'My CI Bot' } });
    expect(other.status).toBe(201);
    expect(other.body).toMatchObject({ login: `sa-${otherOrg}-my-ci-bot`, orgId: otherOrg });
  });

  it('refuses bad input, duplicates and non-Admins', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ name: 'bad role', role: 'Owner' }, 400, 'Invalid role specified'],
      [{ name: '   ' }, 400, 'Bad request data'],
      [{ role: 'Viewer' }, 400, 'bad request data'],
      [{ name: 'x'.repeat(190) }, 400, 'name is too long (at most 185 characters)'],
      [{ name: 'My CI Bot' }, 400, 'Failed to create service account'],
      [{ name: 'MY CI BOT' }, 400, 'Failed to create service account'],
    ];
    for (const [body, status, message] of cases) {
      const res = await call(first, 'POST', '/api/serviceaccounts', { body });
      expect({ body, status: res.status, reply: res.body }).toEqual({ body, status, reply: { message } });
    }
    const denied = await call(first, 'POST', '/api/serviceaccounts', { auth: editor, body: { name: 'editor bot' } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ title: 'Access denied', message: expect.stringContaining('serviceaccounts:create') });
    expect((await call(first, 'GET', '/api/serviceaccounts/search', { auth: editor })).status).toBe(403);
    expect((await call(first, 'POST', '/api/serviceaccounts', { auth: null, body: { name: 'anonymous bot' } })).status).toBe(401);
    expect(await first.sql(`select 1 from "user" where name in ('editor bot', 'anonymous bot', 'bad role')`)).toEqual([]);
  });

  it('lists, reads and deletes only within the caller\'s org', async () => {
    const search = await call(first, 'GET', '/api/serviceaccounts/search');
    expect(Object.keys(search.body)).toEqual(['totalCount', 'serviceAccounts', 'page', 'perPage']);
    expect(search.body.totalCount).toBe(2);
    expect(search.body.serviceAccounts.map((a: { login: string }) => a.login)).toEqual(['sa-1-my-ci-bot', 'sa-1-two--spaces']);

    const [foreign] = await first.sql<{ id: number }>(`select id from "user" where login = $1`, [`sa-${otherOrg}-my-ci-bot`]);
    for (const [method, path] of [['GET', `/api/serviceaccounts/${foreign!.id}`], ['DELETE', `/api/serviceaccounts/${foreign!.id}`], ['GET', `/api/serviceaccounts/${foreign!.id}/tokens`]]) {
      const res = await call(first, method!, path!);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: { message: 'Failed to retrieve service account' } });
    }
    const stolen = await call(first, 'POST', `/api/serviceaccounts/${foreign!.id}/tokens`, { body: { name: 'stolen' } });
    expect(stolen.status).toBe(404);
    expect(await first.sql(`select 1 from api_key where name = 'stolen'`)).toEqual([]);
    const own = await call(first, 'GET', `/api/serviceaccounts/${foreign!.id}`, { auth: otherOrgAdmin });
    expect(own.body).toMatchObject({ id: foreign!.id, orgId: otherOrg, tokens: 0 });

    const gone = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'short lived' } });
    const deleted = await call(first, 'DELETE', `/api/serviceaccounts/${gone.body.id}`);
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 200, text: '{"message":"Service account deleted"}' });
    expect((await call(first, 'GET', `/api/serviceaccounts/${gone.body.id}`)).status).toBe(404);
    expect((await call(first, 'GET', '/api/serviceaccounts/nope')).body).toEqual({ message: 'id is invalid' });
  });
});

describe('service account tokens', () => {
  let accountId: number;
  let token: { id: number; name: string; key: string };

  beforeAll(async () => {
    accountId = (await call(first, 'GET', '/api/serviceaccounts/search')).body.serviceAccounts[0].id;
  });

  it('POST .../tokens answers {id, name, key} with a glsa_ key that is stored only as a hash', async () => {
    const res = await call(first, 'POST', `/api/serviceaccounts/${accountId}/tokens`, { body: { name: 'deploy' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id', 'name', 'key']);
    token = res.body;
    const match = /^glsa_([0-9A-Za-z]{32})_([0-9a-f]{8})$/.exec(token.key);
    expect(match).not.toBeNull();
    expect(match![2]).toBe(checksumOf(`glsa_${match![1]}`));
    const rows = await first.sql<{ doc: string }>('select row_to_json(k)::text as doc from api_key k');
    for (const { doc } of rows) expect(doc).not.toContain(match![1]);
    expect((await call(first, 'GET', `/api/serviceaccounts/${accountId}`)).body.tokens).toBe(1);
  });

  it('authenticates as the account, with its org role, on either instance and in either header form', async () => {
    for (const auth of [`Bearer ${token.key}`, basic('api_key', token.key)]) {
      expect((await read(second, auth)).status).toBe(200);
      // The account is an Editor: creating a data source needs Admin.
      const write = await call(second, 'POST', '/api/datasources', { auth, body: { name: 'by-token', type: 'loki', access: 'proxy' } });
      expect(write.status).toBe(403);
    }
    const otherOrgHeader = await read(second, `Bearer ${token.key}`, { 'x-grafana-org-id': String(otherOrg) });
    expect(otherOrgHeader.body).toEqual(authError('API key does not belong to the requested organization', 'api-key.organization-mismatch'));
  });

  it('lists tokens without their secrets, with when they were last used', async () => {
    const res = await call(first, 'GET', `/api/serviceaccounts/${accountId}/tokens`);
    expect(res.body).toEqual([{
      id: token.id, name: 'deploy', created: expect.any(String), lastUsedAt: expect.any(String), expiration: null,
      secondsUntilExpiration: 0, hasExpired: false, isRevoked: false,
    }]);
    expect(Date.now() - Date.parse(res.body[0].lastUsedAt)).toBeLessThan(60_000);
    expect(res.text).not.toContain(token.key.split('_')[1]);
  });

  it('refuses duplicate names, negative lifetimes, over-long names and unknown accounts', async () => {
    const cases: Array<[string, unknown, number, string]> = [
      [`/api/serviceaccounts/${accountId}/tokens`, { name: 'deploy' }, 409, 'service account token with given name already exists in the organization'],
      [`/api/serviceaccounts/${accountId}/tokens`, { name: 'negative', secondsToLive: -5 }, 400, 'negative value for SecondsToLive'],
      [`/api/serviceaccounts/${accountId}/tokens`, { name: 't'.repeat(191) }, 400, 'name is too long (at most 190 characters)'],
      [`/api/serviceaccounts/${accountId}/tokens`, { name: '' }, 400, 'Bad request data'],
      ['/api/serviceaccounts/987654/tokens', { name: 'orphan' }, 404, 'Failed to retrieve service account'],
    ];
    for (const [path, body, status, message] of cases) {
      const res = await call(first, 'POST', path, { body });
      expect({ path, body, status: res.status, reply: res.body }).toEqual({ path, body, status, reply: { message } });
    }
    expect((await call(first, 'POST', `/api/serviceaccounts/${accountId}/tokens`, { auth: editor, body: { name: 'by-editor' } })).status).toBe(403);
  });

  it('fails on the next request once expired, revoked or deleted, each with its own message', async () => {
    const create = async (name: string, secondsToLive?: number) =>
      (await call(first, 'POST', `/api/serviceaccounts/${accountId}/tokens`, { body: { name, secondsToLive } })).body as { id: number; key: string };
    const expiring = await create('expiring', 1);
    const revocable = await create('revocable');
    const deletable = await create('deletable');
    for (const t of [expiring, revocable, deletable]) expect((await read(second, `Bearer ${t.key}`)).status).toBe(200);

    const listed = (await call(first, 'GET', `/api/serviceaccounts/${accountId}/tokens`)).body as Array<{ name: string; expiration: string | null }>;
    const expiration = Date.parse(listed.find((t) => t.name === 'expiring')!.expiration!);
    expect(expiration - Date.now()).toBeLessThanOrEqual(1000);
    await sleep(Math.max(0, expiration - Date.now()) + 50);
    expect((await read(second, `Bearer ${expiring.key}`)).body).toEqual(authError('Expired API key', 'api-key.expired'));

    const revoked = await gql(first, 'mutation($id: Int!) { apiKeyRevoke(id: $id) { revokedApiKeyId userErrors { code message } } }', { id: revocable.id });
    expect(revoked.body.data).toEqual({ apiKeyRevoke: { revokedApiKeyId: revocable.id, userErrors: [] } });
    const afterRevoke = await read(second, basic('api_key', revocable.key));
    expect({ status: afterRevoke.status, body: afterRevoke.body }).toEqual({ status: 401, body: authError('Revoked API key', 'api-key.revoked') });
    expect((await call(first, 'GET', `/api/serviceaccounts/${accountId}/tokens`)).body).toContainEqual(expect.objectContaining({ name: 'revocable', isRevoked: true }));

    const deleted = await call(first, 'DELETE', `/api/serviceaccounts/${accountId}/tokens/${deletable.id}`);
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 200, text: '{"message":"Service account token deleted"}' });
    const afterDelete = await read(second, `Bearer ${deletable.key}`);
    expect({ status: afterDelete.status, body: afterDelete.body }).toEqual({ status: 401, body: authError('Invalid API key', 'api-key.invalid') });
    const again = await call(first, 'DELETE', `/api/serviceaccounts/${accountId}/tokens/${deletable.id}`);
    expect({ status: again.status, body: again.body }).toEqual({ status: 404, body: { message: 'Failed to delete service account token' } });
    // The untouched token still works.
    expect((await read(second, `Bearer ${token.key}`)).status).toBe(200);
  });

  it('stop working while the account is disabled, and again once it is enabled', async () => {
    const node = (await gql(first, `{ currentOrganization { serviceAccount(databaseId: ${accountId}) { id } } }`)).body.data!.currentOrganization.serviceAccount.id;
    const disable = (isDisabled: boolean) =>
      gql(first, `mutation($id: ID!) { ${isDisabled ? 'serviceAccountDisable' : 'serviceAccountEnable'}(id: $id) { serviceAccount { isDisabled } userErrors { message } } }`, { id: node });
    expect((await disable(true)).body.data).toEqual({ serviceAccountDisable: { serviceAccount: { isDisabled: true }, userErrors: [] } });
    const refused = await read(second, `Bearer ${token.key}`);
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 401, body: authError('Unauthorized', 'identity.disabled') });
    await disable(false);
    expect((await read(second, `Bearer ${token.key}`)).status).toBe(200);

    // An account created disabled has refused tokens from the start.
    const sleeper = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'sleeper', isDisabled: true } });
    const sleeperToken = await call(first, 'POST', `/api/serviceaccounts/${sleeper.body.id}/tokens`, { body: { name: 'sleeper-token' } });
    expect((await read(second, `Bearer ${sleeperToken.body.key}`)).body.messageId).toBe('identity.disabled');
  });

  it('go with their account when it is deleted', async () => {
    const doomed = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'doomed bot', role: 'Viewer' } });
    const doomedToken = (await call(first, 'POST', `/api/serviceaccounts/${doomed.body.id}/tokens`, { body: { name: 'doomed-token' } })).body;
    expect((await read(second, `Bearer ${doomedToken.key}`)).status).toBe(200);
    expect((await call(first, 'DELETE', `/api/serviceaccounts/${doomed.body.id}`)).status).toBe(200);
    expect(await first.sql('select 1 from api_key where id = $1', [doomedToken.id])).toEqual([]);
    expect((await read(second, `Bearer ${doomedToken.key}`)).body).toEqual(authError('Invalid API key', 'api-key.invalid'));
  });

  it('are served over GraphQL too', async () => {
    const account = (await gql(first, `{ currentOrganization { serviceAccount(databaseId: ${accountId}) { id } } }`)).body.data!.currentOrganization.serviceAccount.id;
    const created = await gql(first, 'mutation($id: ID!) { serviceAccountTokenCreate(serviceAccountId: $id, input: { name: "gql-token" }) { token { id name } key } }', { id: account });
    const minted = created.body.data!.serviceAccountTokenCreate;
    expect(minted.key).toMatch(/^glsa_/);
    expect((await read(second, `Bearer ${minted.key}`)).status).toBe(200);
    const listed = await gql(first, 'query($id: ID!) { node(id: $id) { ... on ServiceAccount { tokens { nodes { name } } } } }', { id: account });
    expect(listed.body.data!.node.tokens.nodes.map((t: { name: string }) => t.name)).toContain('gql-token');
    const accounts = await gql(first, '{ currentOrganization { serviceAccounts { nodes { login tokenCount } } } }');
    expect(accounts.body.data!.currentOrganization.serviceAccounts.nodes).toContainEqual({ login: 'sa-1-my-ci-bot', tokenCount: 4 });
    // The path's account guards the deletion as REST's does: another account's token is not found.
    const other = (await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'not-the-owner' } })).body.id;
    const otherNode = (await gql(first, `{ currentOrganization { serviceAccount(databaseId: ${other}) { id } } }`)).body.data!.currentOrganization.serviceAccount.id;
    const remove = (serviceAccountId: string) => gql(first, 'mutation($t: ID!, $a: ID) { serviceAccountTokenDelete(id: $t, serviceAccountId: $a) { deletedServiceAccountTokenId userErrors { message } } }', { t: minted.token.id, a: serviceAccountId });
    expect((await remove(otherNode)).body.data).toEqual({ serviceAccountTokenDelete: { deletedServiceAccountTokenId: null, userErrors: [{ message: 'Failed to delete service account token' }] } });
    expect((await read(second, `Bearer ${minted.key}`)).status).toBe(200);
    expect((await remove(account)).body.data).toEqual({ serviceAccountTokenDelete: { deletedServiceAccountTokenId: minted.token.id, userErrors: [] } });
    expect((await read(second, `Bearer ${minted.key}`)).status).toBe(401);
  });
});

describe('legacy API keys', () => {
  it('GET /api/auth/keys lists the org\'s keys as {id, name, role, expiration}, without service account tokens', async () => {
    const forever = (await call(first, 'POST', '/api/auth/keys', { body: { name: 'forever', role: 'Viewer' } })).body;
    expect(Object.keys(forever)).toEqual(['id', 'name', 'key']);
    await call(first, 'POST', '/api/auth/keys', { body: { name: 'a-day', role: 'Editor', secondsToLive: 86_400 } });
    await call(first, 'POST', '/api/auth/keys', { auth: otherOrgAdmin, body: { name: 'other-org-key', role: 'Viewer' } });
    const res = await call(first, 'GET', '/api/auth/keys');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: expect.any(Number), name: 'a-day', role: 'Editor', expiration: expect.any(String) },
      { id: forever.id, name: 'forever', role: 'Viewer', expiration: null },
    ]);
    expect(Math.abs(Date.parse(res.body[0].expiration) - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    expect(res.text).not.toContain(forever.key);
    expect((await call(first, 'GET', '/api/auth/keys', { auth: editor })).status).toBe(403);
    const viaGraphql = await gql(first, '{ apiKeys { name role isRevoked } }');
    expect(viaGraphql.body.data!.apiKeys).toEqual([{ name: 'a-day', role: 'Editor', isRevoked: false }, { name: 'forever', role: 'Viewer', isRevoked: false }]);
  });

  it('authenticate as Bearer or as Basic api_key:<key>, and fail once expired, revoked or deleted', async () => {
    const create = async (name: string, secondsToLive?: number) =>
      (await call(first, 'POST', '/api/auth/keys', { body: { name, role: 'Viewer', secondsToLive } })).body as { id: number; key: string };
    const expiring = await create('legacy-expiring', 1);
    const revocable = await create('legacy-revocable');
    const deletable = await create('legacy-deletable');
    for (const k of [expiring, revocable, deletable]) {
      expect((await read(second, `Bearer ${k.key}`)).status).toBe(200);
      expect((await read(second, basic('api_key', k.key))).status).toBe(200);
    }
    // A key with the right shape but a wrong secret.
    const forged = Buffer.from(JSON.stringify({ k: 'A'.repeat(32), n: 'legacy-deletable', id: 1 })).toString('base64');
    expect((await read(second, `Bearer ${forged}`)).body).toEqual(authError('Invalid API key', 'api-key.invalid'));

    await sleep(1100);
    expect((await read(second, `Bearer ${expiring.key}`)).body).toEqual(authError('Expired API key', 'api-key.expired'));

    await gql(first, 'mutation($id: Int!) { apiKeyRevoke(id: $id) { userErrors { message } } }', { id: revocable.id });
    expect((await read(second, `Bearer ${revocable.key}`)).body).toEqual(authError('Revoked API key', 'api-key.revoked'));

    const deleted = await call(first, 'DELETE', `/api/auth/keys/${deletable.id}`);
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 200, text: '{"message":"API key deleted"}' });
    expect((await read(second, basic('api_key', deletable.key))).body).toEqual(authError('Invalid API key', 'api-key.invalid'));
    const again = await call(first, 'DELETE', `/api/auth/keys/${deletable.id}`);
    expect({ status: again.status, body: again.body }).toEqual({ status: 404, body: { message: 'Failed to delete API key' } });

    // The graph's mutations answer the key's id, or REST's words as a user error.
    const DELETE = 'mutation($id: Int!) { apiKeyDelete(id: $id) { deletedApiKeyId userErrors { code message } } }';
    const doomed = (await call(first, 'POST', '/api/auth/keys', { body: { name: 'doomed', role: 'Viewer' } })).body as { id: number };
    expect((await gql(first, DELETE, { id: doomed.id })).body).toEqual({ data: { apiKeyDelete: { deletedApiKeyId: doomed.id, userErrors: [] } } });
    expect((await gql(first, DELETE, { id: doomed.id })).body).toEqual({
      data: { apiKeyDelete: { deletedApiKeyId: null, userErrors: [{ code: 'NOT_FOUND', message: 'Failed to delete API key' }] } },
    });
    const REVOKE = 'mutation($id: Int!) { apiKeyRevoke(id: $id) { revokedApiKeyId userErrors { code message } } }';
    expect((await gql(first, REVOKE, { id: doomed.id })).body).toEqual({
      data: { apiKeyRevoke: { revokedApiKeyId: null, userErrors: [{ code: 'NOT_FOUND', message: 'API key not found' }] } },
    });
  });

  it('refuses bad input and keeps service account tokens out of reach of the legacy delete', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ name: 'forever', role: 'Viewer' }, 409, 'API key, organization ID and name must be unique'],
      [{ name: 'bad-role', role: 'Owner' }, 400, 'Invalid role specified'],
      [{ name: 'negative', role: 'Viewer', secondsToLive: -1 }, 400, 'negative value for SecondsToLive'],
      [{ name: 'k'.repeat(191), role: 'Viewer' }, 400, 'name is too long (at most 190 characters)'],
      [{ role: 'Viewer' }, 400, 'bad request data'],
    ];
    for (const [body, status, message] of cases) {
      const res = await call(first, 'POST', '/api/auth/keys', { body });
      expect({ body, status: res.status, reply: res.body }).toEqual({ body, status, reply: { message } });
    }
    expect((await call(first, 'POST', '/api/auth/keys', { body: { name: 'nul\u0000', role: 'Viewer' } })).status).toBe(400);
    const nul = await gql(first, 'mutation { createApiKey(input: { name: "nul\\u0000", role: "Viewer" }) { id } }');
    expect(nul.status).toBe(400);
    // The service's own message, unless a transport layer already refused the NUL as malformed.
    expect(nul.body.errors?.[0]?.message).toMatch(/^(name must not contain NUL characters|bad request data)$/);
    const [saToken] = await first.sql<{ id: number }>('select id from api_key where service_account_id is not null limit 1');
    expect((await call(first, 'DELETE', `/api/auth/keys/${saToken!.id}`)).status).toBe(404);
    expect(await first.sql('select 1 from api_key where id = $1', [saToken!.id])).toHaveLength(1);
    expect((await call(first, 'DELETE', '/api/auth/keys/1', { auth: editor })).status).toBe(403);
  });

  it('answer malformed tokens with 401 "Invalid API key", never a 500', async () => {
    for (const value of ['glsa_short_00000000', `glsa_${'A'.repeat(32)}_00000000`, 'not-base64-at-all!', Buffer.from('{"k":1}').toString('base64'), 'gl', '']) {
      const res = await read(first, `Bearer ${value}`);
      expect({ value, status: res.status }).toEqual({ value, status: 401 });
    }
  });
});
