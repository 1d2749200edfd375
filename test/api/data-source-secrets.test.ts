import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startTestServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// Secrets at rest are bound to their data source (org and uid) and key name: a blob copied by
// someone with write access to the database, to another row or another key, does not open, and
// the proxy refuses the call without contacting the upstream.

let server: TestServer;
let upstream: Upstream;

const UNREADABLE = { status: 500, body: { message: 'Unable to load datasource meta data' } };
const basicOf = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

beforeAll(async () => {
  upstream = await startUpstream((req, res) => res.end(String(req.headers.authorization)));
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

async function createDs(body: Record<string, unknown>, orgHeader?: string): Promise<{ id: number; uid: string }> {
  const res = await call(server, 'POST', '/api/datasources', {
    body: { type: 'loki', access: 'proxy', url: upstream.url, ...body },
    headers: orgHeader ? { 'x-grafana-org-id': orgHeader } : {},
  });
  expect(res.status).toBe(200);
  return res.body.datasource;
}

async function storedSecrets(id: number): Promise<Record<string, string>> {
  return (await server.sql<{ s: Record<string, string> }>('select secure_json_data as s from data_source where id = $1', [id]))[0]!.s;
}

async function writeSecrets(id: number, secrets: Record<string, string>): Promise<void> {
  await server.sql('update data_source set secure_json_data = $1 where id = $2', [JSON.stringify(secrets), id]);
}

/** The proxy's answer and how many requests the upstream received for it. */
async function proxiedCounted(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; text: string; upstreamCalls: number }> {
  const before = upstream.requests.length;
  const res = await call(server, 'GET', `/api/datasources/proxy/${path}`, { headers });
  return { status: res.status, body: res.body, text: res.text, upstreamCalls: upstream.requests.length - before };
}

describe('secrets bound to their data source and key', () => {
  it('a blob copied to another data source does not open there, and its upstream is not contacted', async () => {
    const victim = await createDs({ name: 'victim', basicAuth: true, basicAuthUser: 'v', secureJsonData: { basicAuthPassword: 'VICTIM-SECRET' } });
    const thief = await createDs({ name: 'thief', basicAuth: true, basicAuthUser: 't', secureJsonData: { basicAuthPassword: 'thief-own' } });
    expect((await proxiedCounted(`${thief.id}/x`)).text).toBe(basicOf('t', 'thief-own'));
    expect((await proxiedCounted(`${victim.id}/x`)).text).toBe(basicOf('v', 'VICTIM-SECRET'));

    await writeSecrets(thief.id, { basicAuthPassword: (await storedSecrets(victim.id)).basicAuthPassword! });
    for (const path of [`${thief.id}/x`, `uid/${thief.uid}/x`]) {
      const moved = await proxiedCounted(path);
      expect({ status: moved.status, body: moved.body }).toEqual(UNREADABLE);
      expect(moved.upstreamCalls).toBe(0);
      expect(moved.text).not.toContain('VICTIM-SECRET');
    }
    // The victim's own copy still works.
    expect((await proxiedCounted(`${victim.id}/x`)).text).toBe(basicOf('v', 'VICTIM-SECRET'));
    expect(server.logText()).not.toContain('VICTIM-SECRET');
  });

  it('a blob copied to another key of the same data source does not open', async () => {
    // The header value secret moved into the password the proxy sends upstream.
    const ds = await createDs({
      name: 'key-swap', basicAuth: true, basicAuthUser: 'k',
      jsonData: { httpHeaderName1: 'X-Api-Key' }, secureJsonData: { basicAuthPassword: 'pw', httpHeaderValue1: 'HEADER-SECRET' },
    });
    expect((await proxiedCounted(`${ds.id}/x`)).status).toBe(200);
    const stored = await storedSecrets(ds.id);
    await writeSecrets(ds.id, { basicAuthPassword: stored.httpHeaderValue1!, httpHeaderValue1: stored.httpHeaderValue1! });
    const swapped = await proxiedCounted(`${ds.id}/x`);
    expect({ status: swapped.status, body: swapped.body }).toEqual(UNREADABLE);
    expect(swapped.upstreamCalls).toBe(0);
  });

  it('a blob copied to the data source of the same uid in another org does not open', async () => {
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Second Org') returning id`);
    const orgId = String(org!.id);
    // The admin, as an Admin of the second org too.
    await server.sql(`insert into org_user (org_id, user_id, role) select $1, id, 'Admin' from "user" where login = 'admin'`, [org!.id]);
    const home = await createDs({ name: 'same-uid', uid: 'shared-uid', basicAuth: true, basicAuthUser: 'h', secureJsonData: { basicAuthPassword: 'ORG-ONE-SECRET' } });
    const away = await createDs({ name: 'same-uid', uid: 'shared-uid', basicAuth: true, basicAuthUser: 'a', secureJsonData: { basicAuthPassword: 'org-two' } }, orgId);
    await writeSecrets(away.id, await storedSecrets(home.id));
    const moved = await proxiedCounted(`uid/shared-uid/x`, { 'x-grafana-org-id': orgId });
    expect({ status: moved.status, body: moved.body }).toEqual(UNREADABLE);
    expect(moved.upstreamCalls).toBe(0);
  });

  it('follows a uid change made through the API: the kept secrets are sealed again for the new uid', async () => {
    const ds = await createDs({ name: 'renamed-uid', uid: 'before-uid', basicAuth: true, basicAuthUser: 'r', secureJsonData: { basicAuthPassword: 'kept', other: 'also-kept' } });
    const before = await storedSecrets(ds.id);
    const res = await call(server, 'PUT', `/api/datasources/${ds.id}`, {
      body: { name: 'renamed-uid', type: 'loki', access: 'proxy', url: upstream.url, uid: 'after-uid', basicAuth: true, basicAuthUser: 'r' },
    });
    expect(res.status).toBe(200);
    expect(res.body.datasource).toMatchObject({ uid: 'after-uid', secureJsonFields: { basicAuthPassword: true, other: true } });
    const after = await storedSecrets(ds.id);
    expect(after.basicAuthPassword).not.toBe(before.basicAuthPassword);
    expect((await proxiedCounted('uid/after-uid/x')).text).toBe(basicOf('r', 'kept'));
    const row = await server.app.services.dataSources.get(server.orm.em.fork(), 1, { id: ds.id });
    expect(server.app.services.dataSources.decryptSecrets(row)).toEqual({ basicAuthPassword: 'kept', other: 'also-kept' });
    // The same PUT without a uid change leaves the blobs untouched.
    await call(server, 'PUT', `/api/datasources/${ds.id}`, { body: { name: 'renamed-uid', type: 'loki', access: 'proxy', url: upstream.url, basicAuth: true, basicAuthUser: 'r' } });
    expect(await storedSecrets(ds.id)).toEqual(after);
  });

  it('refuses a uid change while a kept secret cannot be opened, and accepts it once the secret is sent again', async () => {
    const ds = await createDs({ name: 'stuck-uid', uid: 'stuck-before', basicAuth: true, basicAuthUser: 's', secureJsonData: { basicAuthPassword: 'pw' } });
    // Sealed for another row: as unreadable here as one sealed with another secret_key.
    const foreign = await createDs({ name: 'foreign', secureJsonData: { basicAuthPassword: 'other' } });
    await writeSecrets(ds.id, await storedSecrets(foreign.id));
    const body = { name: 'stuck-uid', type: 'loki', access: 'proxy', url: upstream.url, uid: 'stuck-after', basicAuth: true, basicAuthUser: 's' };
    const refused = await call(server, 'PUT', `/api/datasources/${ds.id}`, { body });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('Failed to update datasource: stored secrets cannot be decrypted with the configured secret_key, so they cannot follow the new uid: send them again or restore the key');
    expect((await call(server, 'GET', `/api/datasources/${ds.id}`)).body.uid).toBe('stuck-before');
    const resent = await call(server, 'PUT', `/api/datasources/${ds.id}`, { body: { ...body, secureJsonData: { basicAuthPassword: 'fresh' } } });
    expect(resent.status).toBe(200);
    expect((await proxiedCounted('uid/stuck-after/x')).text).toBe(basicOf('s', 'fresh'));
  });

  it('follows a uid change made by provisioning', async () => {
    const dataSources = server.app.services.dataSources;
    const declared = { name: 'provisioned', type: 'loki', access: 'proxy', url: upstream.url, basicAuth: true, basicAuthUser: 'p', readOnly: true };
    expect(await dataSources.provision(server.orm.em.fork(), 1, { ...declared, uid: 'prov-one', secureJsonData: { basicAuthPassword: 'prov-pw' } })).toBe('created');
    expect(await dataSources.provision(server.orm.em.fork(), 1, { ...declared, uid: 'prov-two' })).toBe('updated');
    expect((await proxiedCounted('uid/prov-two/x')).text).toBe(basicOf('p', 'prov-pw'));
  });
});
