import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';

// Spec 4.1 pause-all-alerts (reference 2.7), with alerts created through GraphQL so the pause acts
// on real rows of several orgs.

let server: TestServer;
let otherOrg: number;
/** Editors of the main org and of the other org (new users join as Editors on this server). */
let mainEditor: string;
let otherEditor: string;
let mainViewer: string;

const CREATE = 'mutation($input: CreateAlertInput!) { createAlert(input: $input) { id orgId name state dashboardId panelId } }';
const createAlert = (auth: string, input: Record<string, unknown>) => gql(server, CREATE, { input }, auth);
const pause = (paused: unknown) => call(server, 'POST', '/api/admin/pause-all-alerts', { body: { paused } });
const states = async () => (await server.sql<{ state: string }>('select state from alert order by id')).map((r) => r.state);

beforeAll(async () => {
  server = await startTestServer({ overrides: { users: { auto_assign_org_role: 'Editor' } } });
  otherOrg = (await server.sql<{ id: number }>(`insert into org (name) values ('Other Org') returning id`))[0]!.id;
  await call(server, 'POST', '/api/admin/users', { body: { login: 'main-editor', password: 'pass1234' } });
  await call(server, 'POST', '/api/admin/users', { body: { login: 'other-editor', password: 'pass1234', orgId: otherOrg } });
  const viewer = await call(server, 'POST', '/api/admin/users', { body: { login: 'main-viewer', password: 'pass1234' } });
  await server.sql(`update org_user set role = 'Viewer' where user_id = $1`, [viewer.body.id]);
  mainEditor = basic('main-editor', 'pass1234');
  otherEditor = basic('other-editor', 'pass1234');
  mainViewer = basic('main-viewer', 'pass1234');
});
afterAll(() => server.close());

describe('alerts over GraphQL', () => {
  it('createAlert makes an alert in the caller\'s org, Editors and up; alerts lists only that org', async () => {
    const [dashboard] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values (1, 'alerting', 'Alerting') returning id`);
    const created = await createAlert(mainEditor, { name: 'CPU high', dashboardId: dashboard!.id, panelId: 3 });
    expect(created.body.data?.createAlert).toEqual({ id: expect.any(Number), orgId: 1, name: 'CPU high', state: 'unknown', dashboardId: dashboard!.id, panelId: 3 });
    expect((await createAlert(otherEditor, { name: 'Disk full' })).body.data?.createAlert).toMatchObject({ orgId: otherOrg, state: 'unknown', dashboardId: null, panelId: 0 });

    const mine = await gql(server, '{ alerts { name orgId } }', {}, mainViewer);
    expect(mine.body.data?.alerts).toEqual([{ name: 'CPU high', orgId: 1 }]);
    const theirs = await gql(server, '{ alerts { name orgId } }', {}, otherEditor);
    expect(theirs.body.data?.alerts).toEqual([{ name: 'Disk full', orgId: otherOrg }]);

    const denied = await createAlert(mainViewer, { name: 'viewer alert' });
    expect(denied.status).toBe(403);
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await gql(server, '{ alerts { name } }', {}, null)).status).toBe(401);
  });

  it('refuses bad input with 4xx answers and no row', async () => {
    const [foreign] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values ($1, 'foreign', 'F') returning id`, [otherOrg]);
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ name: '   ' }, 400, 'bad request data'],
      [{ name: 'x'.repeat(256) }, 400, 'name is too long (at most 255 characters)'],
      [{ name: 'nul\u0000' }, 400, 'name must not contain NUL characters'],
      [{ name: 'negative', panelId: -1 }, 400, 'panelId must not be negative'],
      [{ name: 'unknown dashboard', dashboardId: 987654 }, 404, 'Dashboard not found'],
      // Another org's dashboard is as unknown as a missing one.
      [{ name: 'foreign dashboard', dashboardId: foreign!.id }, 404, 'Dashboard not found'],
    ];
    const before = await states();
    for (const [input, status, message] of cases) {
      const res = await createAlert(mainEditor, input);
      expect({ input, status: res.status, message: res.body.errors?.[0]?.message }).toEqual({ input, status, message });
    }
    expect(await states()).toEqual(before);
  });
});

describe('POST /api/admin/pause-all-alerts', () => {
  it('pauses every alert of every org in one statement and records the switch', async () => {
    await createAlert(mainEditor, { name: 'Memory' });
    const count = (await states()).length;
    expect(count).toBe(3);

    const res = await pause(true);
    expect(res.status).toBe(200);
    // The spec's key order: state, message, alertsAffected.
    expect(res.text).toBe(`{"state":"paused","message":"alerts paused","alertsAffected":${count}}`);
    expect(await states()).toEqual(['paused', 'paused', 'paused']);
    expect(await server.sql('select paused from alert_pause_state')).toEqual([{ paused: true }]);
    // The other org's editor sees its alert paused too.
    expect((await gql(server, '{ alerts { state } }', {}, otherEditor)).body.data?.alerts).toEqual([{ state: 'paused' }]);
  });

  it('starts alerts created while paused as paused', async () => {
    expect((await createAlert(mainEditor, { name: 'Created while paused' })).body.data?.createAlert.state).toBe('paused');
    expect((await createAlert(otherEditor, { name: 'Also while paused' })).body.data?.createAlert.state).toBe('paused');
  });

  it('counts every alert it changes, even if already in the target state', async () => {
    // The original's UPDATE has no WHERE: re-pausing reports every row again.
    expect((await pause(true)).body).toEqual({ state: 'paused', message: 'alerts paused', alertsAffected: 5 });
  });

  it('unpauses: state "pending" in the answer, "unknown" in the rows, new alerts start unknown', async () => {
    const stamp = (await server.sql<{ t: Date }>('select max(new_state_date) as t from alert'))[0]!.t;
    const res = await pause(false);
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"state":"pending","message":"alerts un paused","alertsAffected":5}');
    expect(await states()).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'unknown']);
    expect(await server.sql('select paused from alert_pause_state')).toEqual([{ paused: false }]);
    const [row] = await server.sql<{ t: Date }>('select min(new_state_date) as t from alert');
    expect(new Date(row!.t).getTime()).toBeGreaterThanOrEqual(new Date(stamp).getTime());
    expect((await createAlert(mainEditor, { name: 'After unpause' })).body.data?.createAlert.state).toBe('unknown');
  });

  it('leaves no alert unpaused when creations race a pause', async () => {
    const creations = Array.from({ length: 16 }, (_, i) => createAlert(i % 2 ? mainEditor : otherEditor, { name: `racing-${i}` }));
    const paused = pause(true);
    const results = await Promise.all([...creations, paused]);
    expect(results.every((r) => r.status === 200)).toBe(true);
    // Every alert, whether the pause's UPDATE saw it or it saw the switch, is paused.
    expect(new Set(await states())).toEqual(new Set(['paused']));
    await pause(false);
  });

  it('answers "bad request data" for a non-boolean, and is the GraphQL mutation alertsPause too', async () => {
    for (const paused of ['yes', 1, { on: true }]) {
      const res = await pause(paused);
      expect({ paused, status: res.status, body: res.body }).toEqual({ paused, status: 400, body: { message: 'bad request data' } });
    }
    expect(new Set(await states())).toEqual(new Set(['unknown']));
    const viaGraphql = await gql(server, 'mutation { alertsPause(paused: true) { paused alertsAffected userErrors { code message } } }');
    expect(viaGraphql.body.data?.alertsPause).toEqual({ paused: true, alertsAffected: (await states()).length, userErrors: [] });
    await pause(false);
  });

  it('refuses with 400 and changes nothing when legacy alerting is disabled', async () => {
    const disabled = await startTestServer({ connection: server.connection, overrides: { alerting: { enabled: 'false' } } });
    try {
      const before = await states();
      const res = await call(disabled, 'POST', '/api/admin/pause-all-alerts', { body: { paused: true } });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { message: 'legacy alerting is disabled, so this call has no effect.' } });
      expect(await states()).toEqual(before);
      expect(await server.sql('select paused from alert_pause_state')).toEqual([{ paused: false }]);
      const viaGraphql = await gql(disabled, 'mutation { alertsPause(paused: true) { paused alertsAffected userErrors { code message } } }');
      expect(viaGraphql.body).toEqual({
        data: { alertsPause: { paused: null, alertsAffected: null, userErrors: [{ code: 'BAD_REQUEST', message: 'legacy alerting is disabled, so this call has no effect.' }] } },
      });
      expect(await states()).toEqual(before);
    } finally {
      await disabled.close();
    }
  });
});
