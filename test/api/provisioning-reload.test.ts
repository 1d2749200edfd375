import { mkdirSync, mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { basic, call, gql, type TestServer } from '../support/server.ts';
import { twoInstances } from '../support/instances.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// POST /api/admin/provisioning/datasources/reload on one of two instances sharing a database:
// what it applies, what a bad file leaves untouched, what `prune: true` deletes, and that the
// other instance's proxy follows at once.

// The servers read their provisioning folder from their settings when they start.
const dir = mkdtempSync(join(tmpdir(), 'dashgate-reload-'));
mkdirSync(join(dir, 'datasources'));
let first: TestServer;
let second: TestServer;
let oldStore: Upstream;
let newStore: Upstream;

beforeAll(async () => {
  [oldStore, newStore] = await Promise.all([startUpstream(), startUpstream()]);
});
twoInstances(async (a, b) => {
  [first, second] = [a, b];
}, { overrides: { paths: { provisioning: dir } } });
afterAll(async () => {
  await Promise.all([oldStore.close(), newStore.close()]);
  await rm(dir, { recursive: true, force: true });
});

async function files(contents: Record<string, string | null>): Promise<void> {
  for (const [name, text] of Object.entries(contents)) {
    const path = join(dir, 'datasources', name);
    if (text === null) await rm(path, { force: true });
    else await writeFile(path, text);
  }
}
const reload = (target: TestServer = first, auth?: string) => call(target, 'POST', '/api/admin/provisioning/datasources/reload', auth ? { auth } : {});
const rows = () => first.sql<Record<string, unknown>>('select name, org_id, type, url, read_only, is_prunable, version, uid from data_source order by name');

describe('POST /api/admin/provisioning/datasources/reload', () => {
  it('applies the files and answers as the original; the other instance\'s proxy follows at once', async () => {
    await files({
      'main.yaml': `apiVersion: 1\ndatasources:\n  - name: Logs\n    type: loki\n    uid: logs\n    url: ${oldStore.url}\n`,
    });
    const res = await reload();
    expect([res.status, res.text]).toEqual([200, '{"message":"Datasources config reloaded"}']);
    expect(await rows()).toEqual([expect.objectContaining({ name: 'Logs', type: 'loki', url: oldStore.url, read_only: true, is_prunable: false })]);

    // The second instance proxies to it (and caches it), then a reload on the first moves it.
    expect((await call(second, 'GET', '/api/datasources/proxy/uid/logs/ready')).status).toBe(200);
    expect(oldStore.requests.at(-1)!.url).toBe('/ready');
    await files({ 'main.yaml': `apiVersion: 1\ndatasources:\n  - name: Logs\n    type: loki\n    uid: logs\n    url: ${newStore.url}\n` });
    expect((await reload()).status).toBe(200);
    const before = newStore.requests.length;
    expect((await call(second, 'GET', '/api/datasources/proxy/uid/logs/ready')).status).toBe(200);
    expect(newStore.requests.length).toBe(before + 1);
  });

  it('changes nothing when a file is bad, and names its file, line and column', async () => {
    const snapshot = await rows();
    // A good change in one file and a syntax error in another: neither is applied.
    await files({
      'main.yaml': `apiVersion: 1\ndatasources:\n  - name: Logs\n    type: loki\n    uid: logs\n    url: http://moved.example\n  - name: Added\n    type: tempo\n`,
      'zz-bad.yaml': 'apiVersion: 1\ndatasources:\n  - name: Broken\n    type: [prometheus\n',
    });
    const res = await reload();
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(new RegExp(`^${join(dir, 'datasources', 'zz-bad.yaml').replace(/[.]/g, '\\.')}:\\d+:\\d+: invalid YAML: `));
    expect(await rows()).toEqual(snapshot);

    // Valid YAML the database refuses (an org that does not exist), after a data source that
    // would be created: the transaction takes both back.
    await files({ 'zz-bad.yaml': 'apiVersion: 1\ndatasources:\n  - name: Elsewhere\n    type: loki\n    orgId: 4242\n' });
    const refused = await reload();
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(`${join(dir, 'datasources', 'zz-bad.yaml')}:3:5: data source "Elsewhere": organization 4242 does not exist`);
    expect(await rows()).toEqual(snapshot);
    await files({ 'zz-bad.yaml': null, 'main.yaml': `apiVersion: 1\ndatasources:\n  - name: Logs\n    type: loki\n    uid: logs\n    url: ${newStore.url}\n` });
    expect((await reload()).status).toBe(200);
  });

  it('with prune: true, deletes the data sources it provisioned once no file declares them', async () => {
    expect((await call(first, 'POST', '/api/datasources', { body: { name: 'By API', type: 'loki', access: 'proxy' } })).status).toBe(200);
    await files({
      'pruned.yaml': `apiVersion: 1\nprune: true\ndatasources:\n  - name: Keep\n    type: loki\n    uid: keep\n    url: ${newStore.url}\n  - name: Drop\n    type: loki\n    uid: drop\n    url: ${newStore.url}\n`,
    });
    expect((await reload()).status).toBe(200);
    expect((await rows()).filter((r) => r.is_prunable).map((r) => r.name)).toEqual(['Drop', 'Keep']);
    // The other instance knows "Drop" (and caches it for its proxy).
    expect((await call(second, 'GET', '/api/datasources/proxy/uid/drop/x')).status).toBe(200);

    await files({ 'pruned.yaml': `apiVersion: 1\nprune: true\ndatasources:\n  - name: Keep\n    type: loki\n    uid: keep\n    url: ${newStore.url}\n` });
    expect((await reload(second)).status).toBe(200);
    expect((await rows()).map((r) => r.name)).toEqual(['By API', 'Keep', 'Logs']);
    expect(await call(second, 'GET', '/api/datasources/proxy/uid/drop/x').then((r) => [r.status, r.body])).toEqual([404, { message: 'Unable to find datasource' }]);

    // Without prune, a data source whose file goes away stays; with the file gone, "Keep" goes too.
    await files({ 'pruned.yaml': null, 'main.yaml': null });
    expect((await reload()).status).toBe(200);
    expect((await rows()).map((r) => r.name)).toEqual(['By API', 'Logs']);
  });

  it('waits for the migration lock (an instance starting up), then applies', async () => {
    await files({ 'late.yaml': 'apiVersion: 1\ndatasources:\n  - name: Late\n    type: tempo\n' });
    const locker = new pg.Client(first.connection);
    await locker.connect();
    try {
      await locker.query('select pg_advisory_lock($1)', [0x64617368]);
      let done = false;
      const pending = reload().then((r) => {
        done = true;
        return r;
      });
      // The reload waits on the lock: its session's request for it shows, not granted.
      const waiting = async () => (await locker.query(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n as number;
      for (let tries = 0; tries < 250 && (await waiting()) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await waiting()).toBe(1);
      expect(done).toBe(false);
      expect((await rows()).map((r) => r.name)).not.toContain('Late');
      await locker.query('select pg_advisory_unlock($1)', [0x64617368]);
      expect((await pending).status).toBe(200);
      expect((await rows()).map((r) => r.name)).toContain('Late');
    } finally {
      await locker.end();
      await files({ 'late.yaml': null });
    }
  });

  it('is for server admins with Basic credentials only, and is a GraphQL mutation too', async () => {
    const created = await call(first, 'POST', '/api/admin/users', { body: { login: 'reload-user', password: 'reload-pass-1' } });
    expect(created.status).toBe(200);
    expect(await reload(first, basic('reload-user', 'reload-pass-1')).then((r) => [r.status, r.body])).toEqual([403, { message: 'Permission denied' }]);
    const account = await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'reloader', role: 'Admin' } });
    const token = (await call(first, 'POST', `/api/serviceaccounts/${account.body.id}/tokens`, { body: { name: 't' } })).body.key;
    expect((await reload(first, `Bearer ${token}`)).status).toBe(403);
    expect((await call(first, 'POST', '/api/admin/provisioning/datasources/reload', { auth: null })).status).toBe(401);

    const res = await gql(second, 'mutation { dataSourceProvisioningReload { userErrors { code message } } }');
    expect(res.body).toEqual({ data: { dataSourceProvisioningReload: { userErrors: [] } } });

    // The graph answers what the reload did, and a bad file's words as a user error.
    const COUNTS = 'mutation { dataSourceProvisioningReload { created updated deleted pruned unchanged userErrors { code message } } }';
    await files({ 'graph.yaml': 'apiVersion: 1\ndatasources:\n  - name: Via graph\n    type: tempo\n' });
    try {
      const added = (await gql(second, COUNTS)).body.data?.dataSourceProvisioningReload;
      expect(added).toEqual(expect.objectContaining({ created: 1, updated: 0, deleted: 0, pruned: 0, userErrors: [] }));
      const again = (await gql(second, COUNTS)).body.data?.dataSourceProvisioningReload as { created: number; unchanged: number };
      expect([again.created, again.unchanged]).toEqual([0, (added as { unchanged: number }).unchanged + 1]);
      await files({ 'graph.yaml': 'apiVersion: 1\ndatasources:\n  - name: [\n' });
      const bad = await reload(second);
      expect(bad.status).toBe(400);
      expect(await gql(second, COUNTS).then((r) => r.body)).toEqual({
        data: { dataSourceProvisioningReload: { created: null, updated: null, deleted: null, pruned: null, unchanged: null, userErrors: [{ code: 'BAD_REQUEST', message: bad.body.message }] } },
      });
    } finally {
      await files({ 'graph.yaml': null });
    }
  });
});
