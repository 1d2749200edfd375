import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { encodeNodeId } from '../../src/graphql/node-ids.ts';

/**
 * Preferences (user, org, team), a user's teams and switching a user's org, as the original
 * answers them and as grafana-client calls them (`elements/user.py`, `organization.py`, `team.py`:
 * `PersonalPreferences(...).asdict(filter_none=True)` bodies).
 */
let server: TestServer;
const VIEWER = basic('pref-viewer', 'viewer-pass');
let viewerId: number;

beforeAll(async () => {
  server = await startTestServer();
  viewerId = (await call(server, 'POST', '/api/admin/users', { body: { login: 'pref-viewer', email: 'pref-viewer@example.com', password: 'viewer-pass' } })).body.id;
});
afterAll(async () => {
  await server?.close();
});

const UPDATED = { message: 'Preferences updated' };

describe('user preferences', () => {
  it('answers {} until set, then only what is set, in the original\'s key order', async () => {
    expect((await call(server, 'GET', '/api/user/preferences', { auth: VIEWER })).body).toEqual({});
    // grafana-client's update_preferences(PersonalPreferences(theme=..., timezone=..., weekStart=..., locale=...)): `locale` is no key of the original's, ignored.
    const put = await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body: { locale: 'de-DE', theme: 'dark', timezone: 'utc', weekStart: 'monday' } });
    expect([put.status, put.body]).toEqual([200, UPDATED]);
    const got = await call(server, 'GET', '/api/user/preferences', { auth: VIEWER });
    expect(got.text).toBe('{"timezone":"utc","weekStart":"monday","theme":"dark"}');

    // PATCH changes what it names; PUT resets what it leaves out.
    expect((await call(server, 'PATCH', '/api/user/preferences', { auth: VIEWER, body: { theme: 'light', language: 'fr-FR' } })).body).toEqual(UPDATED);
    expect((await call(server, 'GET', '/api/user/preferences', { auth: VIEWER })).body).toEqual({ timezone: 'utc', weekStart: 'monday', theme: 'light', language: 'fr-FR' });
    expect((await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body: { theme: 'system' } })).body).toEqual(UPDATED);
    expect((await call(server, 'GET', '/api/user/preferences', { auth: VIEWER })).body).toEqual({ theme: 'system' });

    // The JSON parts: query history, navigation, language; cookie consents are kept but not answered, as in the original.
    const full = { theme: 'tron', timezone: 'Europe/Paris', weekStart: 'sunday', language: 'es-ES', queryHistory: { homeTab: 'starred' }, navbar: { bookmarkUrls: ['/d/abc', '/explore'] }, cookies: ['analytics', 'functional'] };
    expect((await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body: full })).status).toBe(200);
    expect((await call(server, 'GET', '/api/user/preferences', { auth: VIEWER })).text)
      .toBe('{"timezone":"Europe/Paris","weekStart":"sunday","theme":"tron","language":"es-ES","queryHistory":{"homeTab":"starred"},"navbar":{"bookmarkUrls":["/d/abc","/explore"]}}');
    const [stored] = await server.sql<{ json_data: Record<string, unknown> }>('select json_data from preferences where user_id = $1', [viewerId]);
    expect(stored!.json_data.cookiePreferences).toEqual({ analytics: {}, functional: {} });
    // Keys in any case, as Go decodes them.
    expect((await call(server, 'PATCH', '/api/user/preferences', { auth: VIEWER, body: { WEEKSTART: 'saturday', QueryHistory: { hometab: 'query' } } })).status).toBe(200);
    expect((await call(server, 'GET', '/api/user/preferences', { auth: VIEWER })).body).toMatchObject({ weekStart: 'saturday', queryHistory: { homeTab: 'query' } });
  });

  it('refuses what the original refuses, with its words', async () => {
    const theme = await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body: { theme: 'purple' } });
    expect([theme.status, theme.body]).toEqual([400, { message: 'Invalid theme' }]);
    expect((await call(server, 'PATCH', '/api/user/preferences', { auth: VIEWER, body: { theme: 'Dark' } })).body).toEqual({ message: 'Invalid theme' });
    // The home dashboard: no dashboard is kept here, so any named one does not exist.
    for (const body of [{ homeDashboardUID: 'no-such' }, { homeDashboardId: 42 }, { homeDashboardId: 99999999999 }]) {
      for (const method of ['PUT', 'PATCH']) {
        const res = await call(server, method, '/api/user/preferences', { auth: VIEWER, body });
        expect([method, res.status, res.body]).toEqual([method, 404, { message: 'Dashboard not found' }]);
      }
    }
    // Clearing it, and grafana-client's deprecated defaults (`homeDashboardId: 0`), are fine.
    expect((await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body: { homeDashboardUID: '', homeDashboardId: 0, theme: 'gloom' } })).status).toBe(200);
    const cookie = await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body: { cookies: ['tracking'] } });
    expect(cookie.status).toBe(400);
    expect(cookie.body).toEqual({
      message: "Got an unknown cookie preference type. Expected a set containing one or more of 'functional', 'performance', or 'analytics'}",
      messageId: 'preferences.unknownCookieType', statusCode: 400, traceID: '',
    });
    for (const body of [{ theme: 5 }, { homeDashboardId: 1.5 }, { queryHistory: 'starred' }, { navbar: { bookmarkUrls: [1] } }]) {
      const res = await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body });
      expect([JSON.stringify(body), res.status, res.body]).toEqual([JSON.stringify(body), 400, { message: 'bad request data' }]);
    }
    // Nothing of the refused writes was kept.
    expect((await call(server, 'GET', '/api/user/preferences', { auth: VIEWER })).body).toEqual({ theme: 'gloom' });
    await call(server, 'PUT', '/api/user/preferences', { auth: VIEWER, body: {} });
  });

  it('are kept per org, and per service account, and are no legacy API key\'s', async () => {
    const org = (await call(server, 'POST', '/api/orgs', { body: { name: 'Pref Org' } })).body.orgId;
    const other = { 'X-Grafana-Org-Id': String(org) };
    await call(server, 'PUT', '/api/user/preferences', { body: { theme: 'dark' } });
    await call(server, 'PUT', '/api/user/preferences', { headers: other, body: { theme: 'light' } });
    expect((await call(server, 'GET', '/api/user/preferences')).body).toEqual({ theme: 'dark' });
    expect((await call(server, 'GET', '/api/user/preferences', { headers: other })).body).toEqual({ theme: 'light' });

    const sa = (await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'pref-sa', role: 'Viewer' } })).body;
    const token = `Bearer ${(await call(server, 'POST', `/api/serviceaccounts/${sa.id}/tokens`, { body: { name: 't' } })).body.key}`;
    expect((await call(server, 'PATCH', '/api/user/preferences', { auth: token, body: { timezone: 'browser' } })).body).toEqual(UPDATED);
    expect((await call(server, 'GET', '/api/user/preferences', { auth: token })).body).toEqual({ timezone: 'browser' });

    const key = `Bearer ${(await call(server, 'POST', '/api/auth/keys', { body: { name: 'pref-key', role: 'Admin' } })).body.key}`;
    for (const method of ['GET', 'PUT', 'PATCH']) {
      const res = await call(server, method, '/api/user/preferences', { auth: key, ...(method === 'GET' ? {} : { body: { theme: 'dark' } }) });
      expect([method, res.status, res.body.message]).toEqual([method, 401, 'Not a valid identity']);
    }
  });

  it('answer a user in no org without a server error', async () => {
    // A server admin removed from its only org stays, in none.
    const lone = (await call(server, 'POST', '/api/admin/users', { body: { login: 'pref-lone', password: 'lone-pass' } })).body.id;
    await call(server, 'PUT', `/api/admin/users/${lone}/permissions`, { body: { isGrafanaAdmin: true } });
    expect((await call(server, 'DELETE', `/api/org/users/${lone}`)).status).toBe(200);
    const auth = basic('pref-lone', 'lone-pass');
    expect((await call(server, 'GET', '/api/user/preferences', { auth })).body).toEqual({});
    const put = await call(server, 'PUT', '/api/user/preferences', { auth, body: { theme: 'dark' } });
    expect([put.status, put.body]).toEqual([404, { message: 'Organization not found' }]);
  });

  it('survive racing first writes, and go with their user', async () => {
    const racer = (await call(server, 'POST', '/api/admin/users', { body: { login: 'pref-racer', password: 'racer-pass' } })).body.id;
    const auth = basic('pref-racer', 'racer-pass');
    const answers = await Promise.all(['dark', 'light', 'system', 'dark', 'light', 'system'].map((theme, i) =>
      call(server, i % 2 ? 'PUT' : 'PATCH', '/api/user/preferences', { auth, body: { theme } })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await server.sql('select count(*)::int as n from preferences where user_id = $1', [racer])).toEqual([{ n: 1 }]);
    expect((await call(server, 'DELETE', `/api/admin/users/${racer}`)).status).toBe(200);
    expect(await server.sql('select 1 from preferences where user_id = $1', [racer])).toEqual([]);
  });
});

describe('org preferences', () => {
  it('are the org Admins\' (orgs.preferences:*), as grafana-client writes them', async () => {
    expect((await call(server, 'GET', '/api/org/preferences')).body).toEqual({});
    // organizations.organization_preference_update(theme="", home_dashboard_id=0, timezone="utc"), deprecated but still sent.
    expect((await call(server, 'PUT', '/api/org/preferences', { body: { theme: '', homeDashboardId: 0, timezone: 'utc' } })).body).toEqual(UPDATED);
    expect((await call(server, 'GET', '/api/org/preferences')).body).toEqual({ timezone: 'utc' });
    expect((await call(server, 'PATCH', '/api/org/preferences', { body: { weekStart: 'monday' } })).body).toEqual(UPDATED);
    expect((await call(server, 'GET', '/api/org/preferences')).body).toEqual({ timezone: 'utc', weekStart: 'monday' });
    for (const method of ['GET', 'PUT', 'PATCH']) {
      const res = await call(server, method, '/api/org/preferences', { auth: VIEWER, ...(method === 'GET' ? {} : { body: {} }) });
      expect([method, res.status]).toEqual([method, 403]);
      expect(res.body.message).toContain(method === 'GET' ? 'orgs.preferences:read' : 'orgs.preferences:write');
    }
    // The user's own are apart from the org's.
    expect((await call(server, 'GET', '/api/user/preferences')).body).toEqual({ theme: 'dark' });
  });
});

describe('team preferences', () => {
  it('follow the team rules: its members read them, its Admins and the org\'s write them', async () => {
    const team = (await call(server, 'POST', '/api/teams', { body: { name: 'pref-team' } })).body.teamId;
    const other = (await call(server, 'POST', '/api/teams', { body: { name: 'pref-other' } })).body.teamId;
    expect((await call(server, 'GET', `/api/teams/${team}/preferences`)).body).toEqual({});
    // grafana-client's teams.update_preferences(team_id, PersonalPreferences(...)).
    expect((await call(server, 'PUT', `/api/teams/${team}/preferences`, { body: { theme: 'dark', homeDashboardUID: '' } })).body).toEqual(UPDATED);
    expect((await call(server, 'GET', `/api/teams/${team}/preferences`)).body).toEqual({ theme: 'dark' });

    await call(server, 'POST', `/api/teams/${team}/members`, { body: { userId: viewerId } });
    expect((await call(server, 'GET', `/api/teams/${team}/preferences`, { auth: VIEWER })).body).toEqual({ theme: 'dark' });
    const write = await call(server, 'PUT', `/api/teams/${team}/preferences`, { auth: VIEWER, body: { theme: 'light' } });
    expect(write.status).toBe(403);
    expect(write.body.message).toContain('teams:write');
    const outside = await call(server, 'GET', `/api/teams/${other}/preferences`, { auth: VIEWER });
    expect(outside.status).toBe(403);
    expect(outside.body.message).toContain('teams:read');
    await call(server, 'PUT', `/api/teams/${team}/members/${viewerId}`, { body: { permission: 4 } });
    expect((await call(server, 'PUT', `/api/teams/${team}/preferences`, { auth: VIEWER, body: { theme: 'light' } })).body).toEqual(UPDATED);
    expect((await call(server, 'GET', `/api/teams/${team}/preferences`)).body).toEqual({ theme: 'light' });
    // A team the org has, with a wrong body: the write's own 400 for the team's Admin and the org's, nothing kept.
    for (const auth of [VIEWER, undefined]) {
      const wrong = await call(server, 'PUT', `/api/teams/${team}/preferences`, { auth, body: { theme: 'purple' } });
      expect([wrong.status, wrong.body]).toEqual([400, { message: 'Invalid theme' }]);
    }
    expect((await call(server, 'GET', `/api/teams/${team}/preferences`)).body).toEqual({ theme: 'light' });

    // As the original, no team is looked up for an org Admin: an unknown one reads {} and writes are answered but kept nowhere.
    expect((await call(server, 'GET', '/api/teams/999999/preferences')).body).toEqual({});
    expect((await call(server, 'PUT', '/api/teams/999999/preferences', { body: { theme: 'dark' } })).body).toEqual(UPDATED);
    expect(await server.sql('select 1 from preferences where team_id = 999999')).toEqual([]);
    expect((await call(server, 'GET', '/api/teams/abc/preferences')).body).toEqual({ message: 'teamId is invalid' });
    // They go with the team.
    expect((await call(server, 'DELETE', `/api/teams/${team}`)).status).toBe(200);
    expect(await server.sql('select 1 from preferences where team_id = $1', [team])).toEqual([]);
  });
});

describe('a user\'s teams and its current org (server admins)', () => {
  it('lists a user\'s teams in the org the request acts in', async () => {
    const team = (await call(server, 'POST', '/api/teams', { body: { name: 'ut-team' } })).body.teamId;
    await call(server, 'POST', `/api/teams/${team}/members`, { body: { userId: viewerId } });
    const listed = await call(server, 'GET', `/api/users/${viewerId}/teams`);
    expect(listed.status).toBe(200);
    expect(listed.body).toContainEqual({
      id: team, uid: expect.any(String), orgId: 1, name: 'ut-team', email: '', avatarUrl: expect.stringMatching(/^\/avatar\//), memberCount: 2, permission: 0,
    });
    // Another org's teams are not the request's org's.
    const org = (await call(server, 'POST', '/api/orgs', { body: { name: 'UT Org' } })).body.orgId;
    expect((await call(server, 'GET', `/api/users/${viewerId}/teams`, { headers: { 'X-Grafana-Org-Id': String(org) } })).body).toEqual([]);
    expect((await call(server, 'GET', '/api/users/999999/teams')).body).toEqual([]);
    const refused = await call(server, 'GET', `/api/users/${viewerId}/teams`, { auth: VIEWER });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('users:read');
    expect((await call(server, 'GET', '/api/users/x/teams')).body).toEqual({ message: 'id is invalid' });
  });

  it('switches a user\'s current org (grafana-client\'s switch_user_organisation)', async () => {
    const org = (await call(server, 'POST', '/api/orgs', { body: { name: 'Switch Org' } })).body.orgId;
    const notMember = await call(server, 'POST', `/api/users/${viewerId}/using/${org}`);
    expect([notMember.status, notMember.body]).toEqual([401, { message: 'Not a valid organization' }]);
    expect((await call(server, 'POST', `/api/orgs/${org}/users`, { body: { loginOrEmail: 'pref-viewer', role: 'Viewer' } })).status).toBe(200);
    const switched = await call(server, 'POST', `/api/users/${viewerId}/using/${org}`);
    expect([switched.status, switched.body]).toEqual([200, { message: 'Active organization changed' }]);
    expect((await call(server, 'GET', '/api/user', { auth: VIEWER })).body.orgId).toBe(org);
    expect((await call(server, 'POST', `/api/users/${viewerId}/using/1`)).status).toBe(200);
    expect((await call(server, 'POST', `/api/users/999999/using/1`)).status).toBe(401);
    expect((await call(server, 'POST', `/api/users/${viewerId}/using/x`)).body).toEqual({ message: 'orgId is invalid' });
    const refused = await call(server, 'POST', `/api/users/${viewerId}/using/1`, { auth: VIEWER });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('users:write');
  });
});

describe('in the graph', () => {
  it('shows the viewer\'s, the org\'s and a team\'s preferences, and a user\'s teams', async () => {
    const team = (await call(server, 'POST', '/api/teams', { body: { name: 'graph-pref-team' } })).body.teamId;
    await call(server, 'PUT', `/api/teams/${team}/preferences`, { body: { weekStart: 'monday' } });
    const read = await gql(server, `{ viewer { preferences { theme timezone } currentOrganization { preferences { timezone weekStart }
      teams(query: "graph-pref") { nodes { name preferences { weekStart theme } } } } ... on User { teams(first: 50) { totalCount nodes { name } } } } }`);
    expect(read.body.errors).toBeUndefined();
    const viewer = read.body.data.viewer;
    expect(viewer.preferences).toEqual({ theme: 'dark', timezone: null });
    expect(viewer.currentOrganization.preferences).toEqual({ timezone: 'utc', weekStart: 'monday' });
    expect(viewer.currentOrganization.teams.nodes).toEqual([{ name: 'graph-pref-team', preferences: { weekStart: 'monday', theme: null } }]);
    expect(viewer.teams.nodes.map((t: { name: string }) => t.name)).toContain('graph-pref-team');
    // A Viewer: no org preferences, and its own teams only.
    const asViewer = await gql(server, '{ viewer { currentOrganization { preferences { timezone } } ... on User { teams { nodes { name } } } } }', {}, VIEWER);
    expect(asViewer.body.data.viewer.currentOrganization.preferences).toBeNull();
    expect(asViewer.body.data.viewer.teams.nodes.map((t: { name: string }) => t.name)).toEqual(['ut-team']);
    // A server admin reads another user's teams, as GET /api/users/:id/teams does for one org.
    const USER_TEAMS = 'query($id: ID!, $org: ID!) { node(id: $id) { ... on User { login teams(organizationId: $org) { nodes { name } } } } }';
    const ofViewer = { id: encodeNodeId('User', viewerId), org: encodeNodeId('Organization', 1) };
    const byAdmin = await gql(server, USER_TEAMS, ofViewer);
    expect(byAdmin.body).toEqual({ data: { node: { login: 'pref-viewer', teams: { nodes: [{ name: 'ut-team' }] } } } });
    const rest = await call(server, 'GET', `/api/users/${viewerId}/teams`);
    expect(rest.body.map((t: { name: string }) => t.name)).toEqual(['ut-team']);
    // Anyone else reads no other user (users:read), so none of its teams.
    const byViewer = await gql(server, USER_TEAMS, { id: encodeNodeId('User', 1), org: ofViewer.org }, VIEWER);
    expect(byViewer.body).toEqual({ data: { node: null } });
  });

  it('changes them through mutations carrying the preferences and userErrors', async () => {
    const mine = await gql(server, 'mutation { viewerPreferencesUpdate(input: { theme: "light", navbar: { bookmarkUrls: ["/x"] } }) { preferences { theme navbar { bookmarkUrls } } userErrors { message code } } }', {}, VIEWER);
    expect(mine.body.data.viewerPreferencesUpdate).toEqual({ preferences: { theme: 'light', navbar: { bookmarkUrls: ['/x'] } }, userErrors: [] });
    const bad = await gql(server, 'mutation { viewerPreferencesUpdate(input: { theme: "purple" }) { preferences { theme } userErrors { message code } } }', {}, VIEWER);
    expect(bad.body.data.viewerPreferencesUpdate).toEqual({ preferences: null, userErrors: [{ message: 'Invalid theme', code: 'BAD_REQUEST' }] });
    const missing = await gql(server, 'mutation { viewerPreferencesUpdate(input: { homeDashboardUID: "nope" }) { userErrors { message code } } }', {}, VIEWER);
    expect(missing.body.data.viewerPreferencesUpdate.userErrors).toEqual([{ message: 'Dashboard not found', code: 'NOT_FOUND' }]);

    const orgId = (await gql(server, '{ viewer { currentOrganization { id } } }')).body.data.viewer.currentOrganization.id;
    const orgChange = `mutation($id: ID!) { organizationPreferencesUpdate(id: $id, input: { language: "de-DE" }) { preferences { language timezone } userErrors { message } } }`;
    expect((await gql(server, orgChange, { id: orgId })).body.data.organizationPreferencesUpdate).toEqual({ preferences: { language: 'de-DE', timezone: 'utc' }, userErrors: [] });
    expect((await gql(server, orgChange, { id: orgId }, VIEWER)).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const teamNode = (await gql(server, '{ viewer { currentOrganization { teams(query: "graph-pref") { nodes { id } } } } }')).body.data.viewer.currentOrganization.teams.nodes[0].id;
    const teamChange = await gql(server, 'mutation($id: ID!) { teamPreferencesUpdate(teamId: $id, input: { theme: "zen" }) { preferences { theme weekStart } userErrors { message } } }', { id: teamNode });
    expect(teamChange.body.data.teamPreferencesUpdate).toEqual({ preferences: { theme: 'zen', weekStart: 'monday' }, userErrors: [] });
    // `replace` writes them whole, as REST's PUT: what the input leaves out is no longer set.
    const replaced = await gql(server, 'mutation($id: ID!) { teamPreferencesUpdate(teamId: $id, input: { timezone: "utc" }, replace: true) { preferences { theme weekStart timezone } userErrors { message } } }', { id: teamNode });
    expect(replaced.body.data.teamPreferencesUpdate).toEqual({ preferences: { theme: null, weekStart: null, timezone: 'utc' }, userErrors: [] });
    const mineReplaced = await gql(server, 'mutation { viewerPreferencesUpdate(input: { weekStart: "sunday" }, replace: true) { preferences { theme weekStart navbar { bookmarkUrls } } } }', {}, VIEWER);
    expect(mineReplaced.body.data.viewerPreferencesUpdate.preferences).toEqual({ theme: null, weekStart: 'sunday', navbar: null });
    // The graph names teams that exist: an org Admin's write to one the org has not is not found (REST answers as the original).
    const unknownTeam = await gql(server, 'mutation($id: ID!) { teamPreferencesUpdate(teamId: $id, input: { theme: "dark" }) { preferences { theme } userErrors { message code } } }', { id: encodeNodeId('Team', 999999) });
    expect(unknownTeam.body.data?.teamPreferencesUpdate ?? unknownTeam.body.errors).toEqual({ preferences: null, userErrors: [{ message: 'Team not found', code: 'NOT_FOUND' }] });

    // A server admin switches a user's current org by ids.
    const user = (await gql(server, '{ allUsers(query: "pref-viewer") { nodes { id } } }')).body.data.allUsers.nodes[0].id;
    const other = (await gql(server, '{ allOrganizations(query: "Switch Org") { nodes { id } } }')).body.data.allOrganizations.nodes[0].id;
    const switchOrg = 'mutation($id: ID!, $org: ID!) { userOrganizationSwitch(id: $id, organizationId: $org) { user { orgId } userErrors { message code } } }';
    const switched = await gql(server, switchOrg, { id: user, org: other });
    expect(switched.body.data.userOrganizationSwitch.userErrors).toEqual([]);
    const strange = (await gql(server, '{ allOrganizations(query: "UT Org") { nodes { id } } }')).body.data.allOrganizations.nodes[0].id;
    expect((await gql(server, switchOrg, { id: user, org: strange })).body.data.userOrganizationSwitch).toEqual({ user: null, userErrors: [{ message: 'Not a valid organization', code: 'UNAUTHENTICATED' }] });
    expect((await gql(server, switchOrg, { id: user, org: other }, VIEWER)).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    await call(server, 'POST', `/api/users/${viewerId}/using/1`);
  });
});

