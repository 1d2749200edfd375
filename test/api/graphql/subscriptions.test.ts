import { afterEach, describe, expect, it } from '@jest/globals';
import { createClient } from 'graphql-sse';
import { createToken } from '../../../src/cli/commands.ts';
import { createDataSourceService } from '../../../src/services/index.ts';
import { changeListenersBack, changeListeners, eventually, killChangeListeners, twoInstances } from '../../support/instances.ts';
import { ADMIN, basic, call, gql, type TestServer } from '../../support/server.ts';
import { ALERTS_PAUSED_CHANGED, DATA_SOURCE_CHANGED, ORG_MEMBERS_CHANGED, subscribe, type OpenSubscription } from '../../support/sse.ts';

let first: TestServer;
let second: TestServer;
twoInstances((a, b) => {
  first = a;
  second = b;
}, { overrides: { graphql: { max_subscriptions_per_principal: '6' } } });

const open: OpenSubscription[] = [];
afterEach(async () => {
  for (const stream of open.splice(0)) stream.close();
  // Closed streams leave the servers' books before the next test counts them.
  await eventually(async () => first.app.live.open + second.app.live.open, 0, 5000);
});

async function watch(server: TestServer, query = DATA_SOURCE_CHANGED, auth: string | null = ADMIN, headers?: Record<string, string>): Promise<OpenSubscription> {
  const stream = await subscribe(server, query, { auth, headers });
  open.push(stream);
  return stream;
}

async function createDataSource(server: TestServer, body: Record<string, unknown>): Promise<{ id: number; uid: string }> {
  const created = await call(server, 'POST', '/api/datasources', { body: { type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9090', ...body } });
  expect(created.status).toBe(200);
  return { id: created.body.id, uid: created.body.datasource.uid };
}

/** A service account of org `orgId` with one token, made through the command line's own function. */
async function token(server: TestServer, orgId = 1, role = 'Viewer'): Promise<{ auth: string; keyId: number }> {
  const key = await createToken(server.orm.em.fork(), { orgId, role, name: `t-${Math.random().toString(36).slice(2)}`, secondsToLive: 0 });
  const [row] = await server.sql<{ id: number }>('select id from api_key order by id desc limit 1');
  return { auth: `Bearer ${key}`, keyId: row!.id };
}

describe('dataSourceChanged over Server-Sent Events', () => {
  it('speaks graphql-sse (distinct connections): its own client receives a change made on the other instance', async () => {
    const client = createClient({ url: `${second.url}/graphql`, headers: { authorization: ADMIN }, singleConnection: false, retryAttempts: 0 });
    const received: any[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const stop = client.subscribe({ query: DATA_SOURCE_CHANGED }, {
        next: (value) => {
          received.push(value);
          stop();
          resolve();
        },
        error: reject,
        complete: () => resolve(),
      });
    });
    // The client connects asynchronously; changes count from the moment the server holds the stream.
    await eventually(async () => second.app.live.open, 1, 5000);
    await createDataSource(first, { name: 'sse-client', secureJsonData: { password: 'hunter2-secret' } });
    await done;
    client.dispose();
    expect(received).toEqual([{ data: { dataSourceChanged: expect.objectContaining({ kind: 'CREATED', name: 'sse-client' }) } }]);
  });

  it('delivers creations, updates and deletions from either instance to every subscriber of the org within 1 s, secrets never', async () => {
    const streams = [await watch(first), await watch(second), await watch(second)];
    for (const stream of streams) {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    }
    await eventually(async () => first.app.live.open + second.app.live.open, 3, 5000);

    const sent = performance.now();
    const { id, uid } = await createDataSource(first, { name: 'live-prom', secureJsonData: { password: 'hunter2-secret' } });
    for (const stream of streams) {
      const event = await stream.next();
      expect(event.event).toBe('next');
      expect(event.data.data.dataSourceChanged).toEqual({
        kind: 'CREATED', id, uid, name: 'live-prom',
        dataSource: { id, uid, name: 'live-prom', type: 'prometheus', url: 'http://127.0.0.1:9090', isDefault: expect.any(Boolean), version: 1, jsonData: {}, secureJsonFields: { password: true }, readOnly: false },
      });
      expect(event.at - sent).toBeLessThan(1000);
    }

    // An update through GraphQL on the second instance.
    const updated = await gql(second, `mutation($uid: String!) { dataSourceUpdate(uid: $uid, input: { name: "live-prom", type: "prometheus", access: "proxy", url: "http://127.0.0.1:9191" }) { dataSource { id } userErrors { message } } }`, { uid });
    expect(updated.body.errors).toBeUndefined();
    expect(updated.body.data.dataSourceUpdate.userErrors).toEqual([]);
    for (const stream of streams) {
      const event = await stream.next();
      expect(event.data.data.dataSourceChanged).toMatchObject({ kind: 'UPDATED', id, dataSource: { url: 'http://127.0.0.1:9191', version: 1 } });
    }

    expect((await call(first, 'DELETE', `/api/datasources/uid/${uid}`)).status).toBe(200);
    for (const stream of streams) {
      const event = await stream.next();
      expect(event.data.data.dataSourceChanged).toEqual({ kind: 'DELETED', id, uid, name: 'live-prom', dataSource: null });
      expect(JSON.stringify(stream.events)).not.toContain('hunter2');
    }
  });

  it('tells the former default data source that it lost the flag', async () => {
    const stream = await watch(second);
    await eventually(async () => second.app.live.open, 1, 5000);
    const a = await createDataSource(first, { name: 'default-a', isDefault: true });
    await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.id === a.id);
    const b = await createDataSource(first, { name: 'default-b', isDefault: true });
    const demoted = await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.id === a.id && e.data.data.dataSourceChanged.kind === 'UPDATED');
    expect(demoted.data.data.dataSourceChanged.dataSource.isDefault).toBe(false);
    await stream.waitFor((e) => e.data?.data?.dataSourceChanged?.id === b.id && e.data.data.dataSourceChanged.dataSource.isDefault === true);
    await call(first, 'DELETE', `/api/datasources/${a.id}`);
    await call(first, 'DELETE', `/api/datasources/${b.id}`);
  });

  it('follows provisioning and SQL written elsewhere, announced by the trigger on the table', async () => {
    const stream = await watch(first);
    await eventually(async () => first.app.live.open, 1, 5000);

    // Provisioning in another process: its own ORM and services on the same database.
    const dataSources = createDataSourceService(second.settings);
    expect(await dataSources.provision(second.orm.em.fork(), 1, { name: 'provisioned', type: 'loki', access: 'proxy', url: 'http://loki:3100', readOnly: true })).toBe('created');
    const created = await stream.next();
    expect(created.data.data.dataSourceChanged).toMatchObject({ kind: 'CREATED', name: 'provisioned', dataSource: { type: 'loki', readOnly: true } });
    const id = created.data.data.dataSourceChanged.id as number;

    // Plain SQL, as with psql: the trigger announces each committed change.
    const [row] = await first.sql<{ uid: string }>(`update data_source set url = 'http://loki:3101' where id = $1 returning uid`, [id]);
    expect((await stream.next()).data.data.dataSourceChanged).toMatchObject({ kind: 'UPDATED', id, dataSource: { url: 'http://loki:3101' } });
    const [inserted] = await first.sql<{ id: number }>(`insert into data_source (org_id, uid, name, type, access) values (1, 'sql-made', 'sql-made', 'graphite', 'proxy') returning id`);
    expect((await stream.next()).data.data.dataSourceChanged).toMatchObject({ kind: 'CREATED', id: inserted!.id, uid: 'sql-made' });
    await first.sql('delete from data_source where id = $1', [id]);
    expect((await stream.next()).data.data.dataSourceChanged).toEqual({ kind: 'DELETED', id, uid: row!.uid, name: 'provisioned', dataSource: null });
    await first.sql('delete from data_source where id = $1', [inserted!.id]);
    expect((await stream.next()).data.data.dataSourceChanged).toEqual({ kind: 'DELETED', id: inserted!.id, uid: 'sql-made', name: 'sql-made', dataSource: null });
  });

  it('understands the other payloads a hand-sent notification may carry', async () => {
    const stream = await watch(first);
    await eventually(async () => first.app.live.open, 1, 5000);
    const ds = await createDataSource(first, { name: 'hand-notified' });
    expect((await stream.next()).data.data.dataSourceChanged).toMatchObject({ kind: 'CREATED', id: ds.id });
    // By org and uid in JSON, no operation; then by org and id only.
    await first.sql(`select pg_notify('dashgate_datasource_changed', $1)`, [JSON.stringify({ org_id: 1, uid: ds.uid })]);
    expect((await stream.next()).data.data.dataSourceChanged).toMatchObject({ kind: 'UPDATED', id: ds.id });
    await first.sql(`select pg_notify('dashgate_datasource_changed', $1)`, [`1:${ds.id}`]);
    expect((await stream.next()).data.data.dataSourceChanged).toMatchObject({ kind: 'UPDATED', id: ds.id });
    await call(first, 'DELETE', `/api/datasources/${ds.id}`);
  });

  it('keeps each org to itself', async () => {
    const [org] = await first.sql<{ id: number }>(`insert into org (name) values ('Live Org') returning id`);
    const other = await token(first, org!.id, 'Admin');
    const mine = await watch(second);
    const theirs = await watch(second, DATA_SOURCE_CHANGED, other.auth);
    await eventually(async () => second.app.live.open, 2, 5000);

    const created = await call(first, 'POST', '/api/datasources', { auth: other.auth, body: { name: 'theirs', type: 'prometheus', access: 'proxy' } });
    expect(created.status).toBe(200);
    expect((await theirs.next()).data.data.dataSourceChanged).toMatchObject({ kind: 'CREATED', name: 'theirs', dataSource: { name: 'theirs' } });
    const ours = await createDataSource(first, { name: 'ours' });
    expect((await mine.next()).data.data.dataSourceChanged).toMatchObject({ kind: 'CREATED', id: ours.id });
    expect(theirs.events).toHaveLength(1);
    await call(first, 'DELETE', `/api/datasources/${ours.id}`);
  });
});

describe('alertsPausedChanged', () => {
  it('sends the switch, then every flip made through REST or SQL on any instance', async () => {
    const viewer = await token(first, 1, 'Viewer');
    const stream = await watch(second, ALERTS_PAUSED_CHANGED, viewer.auth);
    expect((await stream.next()).data).toEqual({ data: { alertsPausedChanged: { paused: false } } });

    const sent = performance.now();
    expect((await call(first, 'POST', '/api/admin/pause-all-alerts', { body: { paused: true } })).status).toBe(200);
    const paused = await stream.next();
    expect(paused.data).toEqual({ data: { alertsPausedChanged: { paused: true } } });
    expect(paused.at - sent).toBeLessThan(1000);

    await first.sql('update alert_pause_state set paused = false where id = 1');
    expect((await stream.next()).data).toEqual({ data: { alertsPausedChanged: { paused: false } } });
    // Writing the same state again is no change.
    await first.sql('update alert_pause_state set updated = now() where id = 1');
    await call(first, 'POST', '/api/admin/pause-all-alerts', { body: { paused: true } });
    expect((await stream.next()).data).toEqual({ data: { alertsPausedChanged: { paused: true } } });
    await call(first, 'POST', '/api/admin/pause-all-alerts', { body: { paused: false } });
    expect((await stream.next()).data).toEqual({ data: { alertsPausedChanged: { paused: false } } });
  });
});

describe('orgMembersChanged', () => {
  const changeOf = (event: { data: any }) => event.data.data.orgMembersChanged;

  it('delivers additions, role and profile changes and removals made through REST, GraphQL or SQL on either instance to every subscriber within 1 s, secrets never', async () => {
    const streams = [await watch(first, ORG_MEMBERS_CHANGED), await watch(second, ORG_MEMBERS_CHANGED)];
    for (const stream of streams) expect(stream.status).toBe(200);
    await eventually(async () => first.app.live.open + second.app.live.open, 2, 5000);

    const sent = performance.now();
    const created = await call(first, 'POST', '/api/admin/users', { body: { login: 'joiner', email: 'joiner@example.com', name: 'Joiner', password: 'joiner-secret-pw' } });
    expect(created.status).toBe(200);
    const userId = created.body.id as number;
    const [{ uid }] = await first.sql<{ uid: string }>('select uid from "user" where id = $1', [userId]) as [{ uid: string }];
    const member = { orgId: 1, userId, uid, login: 'joiner', email: 'joiner@example.com', name: 'Joiner', role: 'Viewer', isDisabled: false };
    for (const stream of streams) {
      const event = await stream.next();
      expect(changeOf(event)).toEqual({ kind: 'ADDED', userId, login: 'joiner', member });
      expect(event.at - sent).toBeLessThan(1000);
    }

    // The role, through REST on the other instance.
    expect((await call(second, 'PATCH', `/api/org/users/${userId}`, { body: { role: 'Editor' } })).status).toBe(200);
    for (const stream of streams) expect(changeOf(await stream.next())).toEqual({ kind: 'UPDATED', userId, login: 'joiner', member: { ...member, role: 'Editor' } });

    // The profile, through GraphQL.
    const renamed = await gql(first, `mutation($id: ID!) { userUpdate(id: $id, input: { login: "joiner2", email: "joiner@example.com", name: "Joiner Two" }) { userErrors { message } } }`,
      { id: Buffer.from(`User:${userId}`).toString('base64url') });
    expect(renamed.body.errors).toBeUndefined();
    expect(renamed.body.data.userUpdate.userErrors).toEqual([]);
    for (const stream of streams) expect(changeOf(await stream.next())).toEqual({ kind: 'UPDATED', userId, login: 'joiner2', member: { ...member, role: 'Editor', login: 'joiner2', name: 'Joiner Two' } });

    // Plain SQL: what members show changes; activity alone (last_seen_at) announces nothing.
    await first.sql('update "user" set last_seen_at = now() where id = $1', [userId]);
    await first.sql(`update "user" set email = 'moved@example.com', is_disabled = true where id = $1`, [userId]);
    for (const stream of streams) {
      expect(changeOf(await stream.next())).toEqual({ kind: 'UPDATED', userId, login: 'joiner2', member: { ...member, role: 'Editor', login: 'joiner2', name: 'Joiner Two', email: 'moved@example.com', isDisabled: true } });
    }
    await first.sql('delete from org_user where org_id = 1 and user_id = $1', [userId]);
    for (const stream of streams) {
      expect(changeOf(await stream.next())).toEqual({ kind: 'REMOVED', userId, login: 'joiner2', member: null });
      expect(stream.events).toHaveLength(5);
      expect(JSON.stringify(stream.events)).not.toMatch(/argon2|joiner-secret-pw|password/i);
    }

    // Back through SQL, then deleted with the user (the membership goes by cascade).
    await first.sql(`insert into org_user (org_id, user_id, role) values (1, $1, 'Admin')`, [userId]);
    for (const stream of streams) expect(changeOf(await stream.next())).toMatchObject({ kind: 'ADDED', userId, member: { role: 'Admin', isDisabled: true } });
    await first.sql('delete from "user" where id = $1', [userId]);
    for (const stream of streams) expect(changeOf(await stream.next())).toEqual({ kind: 'REMOVED', userId, login: 'joiner2', member: null });
  });

  it('keeps each org to itself: a member of both orgs is announced in each with its own role', async () => {
    const [org] = await first.sql<{ id: number }>(`insert into org (name) values ('Members Org') returning id`);
    const other = await token(first, org!.id, 'Admin');
    const mine = await watch(first, ORG_MEMBERS_CHANGED);
    const theirs = await watch(second, ORG_MEMBERS_CHANGED, other.auth);
    expect(theirs.status).toBe(200);
    await eventually(async () => first.app.live.open + second.app.live.open, 2, 5000);

    const [user] = await first.sql<{ id: number }>(`insert into "user" (login, email, name, org_id) values ('two-orgs', 'two-orgs@example.com', 'Two Orgs', $1) returning id`, [org!.id]);
    await first.sql(`insert into org_user (org_id, user_id, role) values ($1, $2, 'Editor')`, [org!.id, user!.id]);
    expect(changeOf(await theirs.next())).toMatchObject({ kind: 'ADDED', userId: user!.id, member: { orgId: org!.id, role: 'Editor' } });
    const ours = await call(second, 'POST', '/api/org/users', { body: { loginOrEmail: 'two-orgs', role: 'Viewer' } });
    expect(ours.status).toBe(200);
    expect(changeOf(await mine.next())).toMatchObject({ kind: 'ADDED', userId: user!.id, member: { orgId: 1, role: 'Viewer' } });

    await first.sql(`update "user" set name = 'Renamed' where id = $1`, [user!.id]);
    expect(changeOf(await mine.next())).toMatchObject({ kind: 'UPDATED', member: { orgId: 1, role: 'Viewer', name: 'Renamed' } });
    expect(changeOf(await theirs.next())).toMatchObject({ kind: 'UPDATED', member: { orgId: org!.id, role: 'Editor', name: 'Renamed' } });

    // Changes of org 1's members only, none of which the other org may hear of.
    await first.sql(`update org_user set role = 'Admin' where org_id = 1 and user_id = $1`, [user!.id]);
    await call(first, 'DELETE', `/api/org/users/${user!.id}`, { headers: { 'x-grafana-org-id': '1' } });
    expect(changeOf(await mine.next())).toMatchObject({ kind: 'UPDATED', member: { role: 'Admin' } });
    expect(changeOf(await mine.next())).toMatchObject({ kind: 'REMOVED', userId: user!.id });
    expect(theirs.events).toHaveLength(2);
    await first.sql('delete from "user" where id = $1', [user!.id]);
    expect(changeOf(await theirs.next())).toMatchObject({ kind: 'REMOVED', userId: user!.id, login: 'two-orgs' });
    expect(mine.events).toHaveLength(4);
  });

  it('admits the org\'s Admins and server admins only, and ends a stream whose caller stops being one', async () => {
    const created = await call(first, 'POST', '/api/admin/users', { body: { login: 'org-admin', password: 'org-admin-pw' } });
    const userId = created.body.id as number;
    const auth = basic('org-admin', 'org-admin-pw');
    for (const role of ['Viewer', 'Editor']) {
      await first.sql('update org_user set role = $1 where user_id = $2', [role, userId]);
      const refused = await watch(second, ORG_MEMBERS_CHANGED, auth);
      expect(refused.status).toBe(403);
      await refused.ended;
      expect(refused.events[0]!.data.errors[0]).toMatchObject({ message: expect.stringContaining('org.users:read'), extensions: { code: 'FORBIDDEN' } });
    }
    const editorToken = await token(first, 1, 'Editor');
    expect((await watch(first, ORG_MEMBERS_CHANGED, editorToken.auth)).status).toBe(403);

    await first.sql(`update org_user set role = 'Admin' where user_id = $1`, [userId]);
    const streams = [await watch(first, ORG_MEMBERS_CHANGED, auth), await watch(second, ORG_MEMBERS_CHANGED, auth)];
    for (const stream of streams) expect(stream.status).toBe(200);
    await eventually(async () => first.app.live.open + second.app.live.open, 2, 5000);
    // Its own demotion ends the stream with the error a new request would get.
    await first.sql(`update org_user set role = 'Editor' where user_id = $1`, [userId]);
    for (const stream of streams) {
      const end = await stream.waitFor((e) => e.data?.errors !== undefined, 3000);
      expect(end.data.errors[0]).toMatchObject({ message: expect.stringContaining('org.users:read'), extensions: { code: 'FORBIDDEN' } });
      await stream.ended;
    }
    await first.sql('delete from "user" where id = $1', [userId]);
  });
});

describe('authorization for the life of a stream', () => {
  it('refuses to open without credentials or the role, as a query would', async () => {
    const anonymous = await watch(first, DATA_SOURCE_CHANGED, null);
    expect(anonymous.status).toBe(401);
    await anonymous.ended;
    expect(anonymous.events[0]!.data.errors[0]).toMatchObject({ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } });

    await first.sql(`insert into "user" (login, email, org_id) values ('outsider', 'outsider@example.com', 1)`);
    const password = await call(first, 'PUT', `/api/admin/users/${(await first.sql<{ id: number }>(`select id from "user" where login = 'outsider'`))[0]!.id}/password`, { body: { password: 'outsider-pw' } });
    expect(password.status).toBe(200);
    const noRole = await watch(first, DATA_SOURCE_CHANGED, basic('outsider', 'outsider-pw'));
    expect(noRole.status).toBe(403);
    await noRole.ended;
    expect(noRole.events[0]!.data.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(first.app.live.open).toBe(0);
  });

  it('ends a stream with an error event when its token is deleted, on every instance', async () => {
    const { auth, keyId } = await token(first);
    const a = await watch(first, DATA_SOURCE_CHANGED, auth);
    const b = await watch(second, ALERTS_PAUSED_CHANGED, auth);
    await eventually(async () => first.app.live.open + second.app.live.open, 2, 5000);
    await b.next();
    await first.sql('delete from api_key where id = $1', [keyId]);
    for (const stream of [a, b]) {
      const last = await stream.waitFor((e) => e.event === 'next' && e.data.errors !== undefined, 2000);
      expect(last.data).toEqual({ data: null, errors: [expect.objectContaining({ message: 'Invalid API key', extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] });
      await stream.ended;
      expect(stream.events.at(-1)!.event).toBe('complete');
    }
  });

  it('ends the streams of a disabled service account, and of a user disabled or gone from the org', async () => {
    const sa = (await call(first, 'POST', '/api/serviceaccounts', { body: { name: 'streaming-sa', role: 'Viewer' } })).body as { id: number };
    const auth = `Bearer ${(await call(first, 'POST', `/api/serviceaccounts/${sa.id}/tokens`, { body: { name: 'streaming-sa-token' } })).body.key}`;
    const created = await call(first, 'POST', '/api/admin/users', { body: { login: 'streamer', password: 'streamer-pw' } });
    const userId = created.body.id as number;
    const viewer = basic('streamer', 'streamer-pw');
    const bySa = await watch(second, DATA_SOURCE_CHANGED, auth);
    const byUser = await watch(second, DATA_SOURCE_CHANGED, viewer);
    const byUser2 = await watch(first, DATA_SOURCE_CHANGED, viewer);
    await eventually(async () => first.app.live.open + second.app.live.open, 3, 5000);

    await first.sql('update "user" set is_disabled = true where id = $1', [sa.id]);
    const saEnd = await bySa.waitFor((e) => e.data?.errors !== undefined, 2000);
    expect(saEnd.data.errors[0]).toMatchObject({ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } });
    expect(byUser.events).toEqual([]);

    await first.sql('delete from org_user where user_id = $1 and org_id = 1', [userId]);
    for (const stream of [byUser, byUser2]) {
      const end = await stream.waitFor((e) => e.data?.errors !== undefined, 2000);
      expect(end.data.errors[0]).toMatchObject({ message: expect.stringContaining('datasources:read'), extensions: { code: 'FORBIDDEN' } });
    }

    await first.sql(`insert into org_user (org_id, user_id, role) values (1, $1, 'Viewer')`, [userId]);
    const again = await watch(first, DATA_SOURCE_CHANGED, viewer);
    expect(again.status).toBe(200);
    await eventually(async () => first.app.live.open, 1, 5000);
    await first.sql('update "user" set is_disabled = true where id = $1', [userId]);
    const disabled = await again.waitFor((e) => e.data?.errors !== undefined, 2000);
    expect(disabled.data.errors[0]).toMatchObject({ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('ends a Basic stream when the password changes, and keeps it when only the role does', async () => {
    const created = await call(first, 'POST', '/api/admin/users', { body: { login: 'changer', password: 'changer-pw' } });
    const userId = created.body.id as number;
    const stream = await watch(second, DATA_SOURCE_CHANGED, basic('changer', 'changer-pw'));
    await eventually(async () => second.app.live.open, 1, 5000);
    await first.sql(`update org_user set role = 'Editor' where user_id = $1`, [userId]);
    const ds = await createDataSource(first, { name: 'still-watching' });
    expect((await stream.next()).data.data.dataSourceChanged.id).toBe(ds.id);
    expect((await call(first, 'PUT', `/api/admin/users/${userId}/password`, { body: { password: 'changed-pw' } })).status).toBe(200);
    const end = await stream.waitFor((e) => e.data?.errors !== undefined, 2000);
    expect(end.data.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    await call(first, 'DELETE', `/api/datasources/${ds.id}`);
  });
});

describe('limits and lifecycle', () => {
  it('limits streams per principal ([graphql] max_subscriptions_per_principal)', async () => {
    const { auth } = await token(first);
    const streams = [];
    for (let i = 0; i < 6; i++) streams.push(await watch(first, DATA_SOURCE_CHANGED, auth));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const refused = await watch(first, DATA_SOURCE_CHANGED, auth);
    expect(refused.status).toBe(429);
    await refused.ended;
    expect(refused.events[0]!.data.errors[0]).toMatchObject({ message: 'Too many open subscriptions for these credentials (limit 6)', extensions: { code: 'TOO_MANY_REQUESTS' } });
    // Other credentials, and the other instance, have their own count.
    expect((await watch(first)).status).toBe(200);
    expect((await watch(second, DATA_SOURCE_CHANGED, auth)).status).toBe(200);
    // A closed stream frees its place.
    streams[0]!.close();
    await eventually(async () => first.app.live.open, 6, 5000);
    expect((await watch(first, DATA_SOURCE_CHANGED, auth)).status).toBe(200);
  });

  it('sends keep-alive comments while nothing changes', async () => {
    const stream = await watch(first);
    await eventually(async () => stream.pings, 3, 5000);
    expect(stream.pings).toBeGreaterThanOrEqual(3);
    expect(stream.events).toEqual([]);
  });

  it('ends every stream when the change feed is lost, and serves new ones once it is back', async () => {
    const a = await watch(first);
    const b = await watch(second, ALERTS_PAUSED_CHANGED);
    await eventually(async () => first.app.live.open + second.app.live.open, 2, 5000);
    const before = await changeListeners(first);
    await killChangeListeners(first);
    for (const stream of [a, b]) {
      const end = await stream.waitFor((e) => e.data?.errors !== undefined, 3000);
      expect(end.data.errors[0]).toMatchObject({ message: 'Change feed interrupted; subscribe again and reload', extensions: { code: 'UNAVAILABLE' } });
    }
    expect(await changeListenersBack([first, second], before)).toBe(true);
    const c = await watch(first);
    expect(c.status).toBe(200);
    await eventually(async () => first.app.live.open, 1, 5000);
    const ds = await createDataSource(second, { name: 'after-the-gap' });
    expect((await c.next()).data.data.dataSourceChanged.id).toBe(ds.id);
    await call(first, 'DELETE', `/api/datasources/${ds.id}`);
  });
});
