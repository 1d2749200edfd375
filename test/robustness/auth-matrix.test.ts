import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newServiceAccountToken } from '../../src/auth/tokens.ts';
import { ROUTES } from '../../src/http/routes.ts';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { createDataSource, createOrg, createUser, fillPath, routeKey } from './helpers.ts';

/**
 * Every route against every kind of caller. The expected statuses are written out below; a route
 * missing from this table (a new row in ROUTES) fails the test until someone decides its row.
 */
const CALLERS = ['anonymous', 'bad Basic', 'bad token', 'expired token', 'revoked token', 'Viewer', 'Editor', 'org Admin', 'server admin', 'other org Admin'] as const;
type Caller = (typeof CALLERS)[number];

// Writes aim at what only the last caller (the other org's Admin) owns, so org 1 admins get 404
// (org isolation) and that caller 200; create bodies fail validation, which runs after the role check.
const EXPECTED: Record<string, readonly number[]> = {
  //                                                          anon badB badT exp  rev  View Edit oAdm sAdm other
  'GET /api/datasources':                                    [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'POST /api/datasources':                                   [401, 401, 401, 401, 401, 403, 403, 400, 400, 400],
  'GET /api/datasources/:id':                                [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'PUT /api/datasources/:id':                                [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'DELETE /api/datasources/:id':                             [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'GET /api/datasources/uid/:uid':                           [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'PUT /api/datasources/uid/:uid':                           [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'DELETE /api/datasources/uid/:uid':                        [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'GET /api/datasources/name/:name':                         [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'DELETE /api/datasources/name/:name':                      [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'GET /api/datasources/id/:name':                           [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'GET /api/datasources/uid/:uid/health':                    [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'GET /api/datasources/:id/health':                         [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'GET /api/frontend/settings':                              [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'GET /api/admin/settings':                                 [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/admin/stats':                                    [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'POST /api/admin/users':                                   [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'PUT /api/admin/users/:id/password':                       [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'PUT /api/admin/users/:id/permissions':                    [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'DELETE /api/admin/users/:id':                             [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'POST /api/admin/pause-all-alerts':                        [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'POST /api/admin/provisioning/datasources/reload':         [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/auth/keys':                                      [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'POST /api/auth/keys':                                     [401, 401, 401, 401, 401, 403, 403, 400, 400, 400],
  'DELETE /api/auth/keys/:id':                               [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'POST /api/serviceaccounts':                               [401, 401, 401, 401, 401, 403, 403, 400, 400, 400],
  'GET /api/serviceaccounts/search':                         [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'GET /api/serviceaccounts/:id':                            [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'PATCH /api/serviceaccounts/:id':                          [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'DELETE /api/serviceaccounts/:id':                         [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'GET /api/serviceaccounts/:serviceAccountId/tokens':       [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'POST /api/serviceaccounts/:serviceAccountId/tokens':      [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'DELETE /api/serviceaccounts/:serviceAccountId/tokens/:tokenId': [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  // Users: server admins only; the signed-in user's own routes for every user (bodies fail validation).
  'GET /api/users':                                          [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/users/search':                                   [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/users/lookup':                                   [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/users/:id':                                      [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'PUT /api/users/:id':                                      [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/users/:id/orgs':                                 [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/user':                                           [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'PUT /api/user':                                           [401, 401, 401, 401, 401, 400, 400, 400, 400, 400],
  // The old password is the matrix users' (the server admin's differs: 401), the new one too short.
  'PUT /api/user/password':                                  [401, 401, 401, 401, 401, 400, 400, 400, 401, 400],
  'GET /api/user/orgs':                                      [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'POST /api/user/using/:id':                                [401, 401, 401, 401, 401, 200, 200, 200, 200, 401],
  'POST /api/admin/users/:id/disable':                       [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'POST /api/admin/users/:id/enable':                        [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  // Orgs: server admins everywhere; an org's members read it, its Admins change it and its members.
  'POST /api/orgs':                                          [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/orgs':                                           [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/orgs/name/:name':                                [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/orgs/:orgId':                                    [401, 401, 401, 401, 401, 200, 200, 200, 200, 403],
  'PUT /api/orgs/:orgId':                                    [401, 401, 401, 401, 401, 403, 403, 200, 200, 403],
  'DELETE /api/orgs/:orgId':                                 [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'GET /api/orgs/:orgId/users':                              [401, 401, 401, 401, 401, 403, 403, 200, 200, 403],
  'POST /api/orgs/:orgId/users':                             [401, 401, 401, 401, 401, 403, 403, 404, 404, 403],
  'PATCH /api/orgs/:orgId/users/:userId':                    [401, 401, 401, 401, 401, 403, 403, 200, 200, 403],
  'DELETE /api/orgs/:orgId/users/:userId':                   [401, 401, 401, 401, 401, 403, 403, 200, 404, 403],
  // The current org: the caller's own (org 2 for the last caller), so its writes hit org 2's user.
  'GET /api/org':                                            [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'PUT /api/org':                                            [401, 401, 401, 401, 401, 403, 403, 400, 400, 400],
  'GET /api/org/users':                                      [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'POST /api/org/users':                                     [401, 401, 401, 401, 401, 403, 403, 404, 404, 404],
  'GET /api/org/users/lookup':                               [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'PATCH /api/org/users/:userId':                            [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'DELETE /api/org/users/:userId':                           [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  // Data source permissions: the data source's Admins (org Admins here); org 2's Admin finds no org 1 data source.
  'GET /api/access-control/datasources/description':        [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'GET /api/access-control/datasources/:uid':                [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'POST /api/access-control/datasources/:uid':               [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'POST /api/access-control/datasources/:uid/users/:userId': [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'POST /api/access-control/datasources/:uid/teams/:teamId': [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'POST /api/access-control/datasources/:uid/builtInRoles/:builtInRole': [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  // Teams: org Admins; others only teams they belong to (none here). Writes aim at org 2's teams.
  'GET /api/teams/search':                                   [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'POST /api/teams':                                         [401, 401, 401, 401, 401, 403, 403, 400, 400, 400],
  'GET /api/teams/:teamId':                                  [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'PUT /api/teams/:teamId':                                  [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'DELETE /api/teams/:teamId':                               [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'GET /api/teams/:teamId/members':                          [401, 401, 401, 401, 401, 403, 403, 200, 200, 404],
  'POST /api/teams/:teamId/members':                         [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'PUT /api/teams/:teamId/members':                          [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'PUT /api/teams/:teamId/members/:userId':                  [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'DELETE /api/teams/:teamId/members/:userId':               [401, 401, 401, 401, 401, 403, 403, 404, 404, 200],
  'GET /api/user/teams':                                     [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  // Team preferences: org 1's team for reads (org 2's Admin, finding no such team, reads {} as the
  // original does); writes aim at org 2's team (org 1's Admins are answered, and nothing is kept).
  'GET /api/teams/:teamId/preferences':                      [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'PUT /api/teams/:teamId/preferences':                      [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'GET /api/users/:id/teams':                                [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  'POST /api/users/:id/using/:orgId':                        [401, 401, 401, 401, 401, 403, 403, 403, 200, 403],
  // Everyone's own preferences; the org's are its Admins'.
  'GET /api/user/preferences':                               [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'PUT /api/user/preferences':                               [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'PATCH /api/user/preferences':                             [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'GET /api/org/preferences':                                [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'PUT /api/org/preferences':                                [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  'PATCH /api/org/preferences':                              [401, 401, 401, 401, 401, 403, 403, 200, 200, 200],
  // Endpoints with their own handlers: GraphQL, the proxy, the unauthenticated ones, the fallback.
  'ANY /graphql':                                            [401, 401, 401, 401, 401, 200, 200, 200, 200, 200],
  'ANY /api/datasources/proxy/:id/*':                        [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'ANY /api/datasources/proxy/uid/:uid/*':                   [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  // Queries and resources of org 1's TestData data source: every org role, not another org's.
  'POST /api/ds/query':                                      [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'ANY /api/datasources/uid/:uid/resources/*':               [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'ANY /api/datasources/:id/resources/*':                    [401, 401, 401, 401, 401, 200, 200, 200, 200, 404],
  'GET /api/health':                                         [200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  'HEAD /api/health':                                        [200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  'GET /metrics':                                            [200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  'GET /api/openapi.json':                                   [200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  'ANY /api/*':                                              [401, 401, 401, 401, 401, 404, 404, 404, 404, 404],
};

let server: TestServer;
let upstream: Server;
const auth: Partial<Record<Caller, string | null>> = {};
/** Per route key: the concrete path and body to send. */
const requests = new Map<string, { method: string; path: string; body?: unknown }>();

async function key(as: string, body: Record<string, unknown>): Promise<{ id: number; key: string }> {
  const res = await call(server, 'POST', '/api/auth/keys', { auth: as, body });
  expect(res.status).toBe(200);
  return res.body;
}

async function serviceAccount(as: string, name: string): Promise<number> {
  const res = await call(server, 'POST', '/api/serviceaccounts', { auth: as, body: { name, role: 'Viewer' } });
  expect(res.status).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  server = await startTestServer();
  upstream = createServer((_req, res) => res.end('{"upstream":true}'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

  const otherOrg = await createOrg(server, 'Other Org');
  auth.anonymous = null;
  auth['bad Basic'] = basic('nobody-here', 'wrong-password');
  auth['bad token'] = `Bearer ${newServiceAccountToken().token}`;
  auth.Viewer = (await createUser(server, 'm-viewer', 'Viewer')).auth;
  auth.Editor = (await createUser(server, 'm-editor', 'Editor')).auth;
  auth['org Admin'] = (await createUser(server, 'm-admin', 'Admin')).auth;
  auth['server admin'] = ADMIN;
  const other = (await createUser(server, 'm-other', 'Admin', otherOrg)).auth;
  auth['other org Admin'] = other;
  const expiring = await key(ADMIN, { name: 'm-expired', role: 'Admin' });
  await server.sql(`update api_key set expires = now() - interval '1 minute' where id = $1`, [expiring.id]);
  auth['expired token'] = `Bearer ${expiring.key}`;
  const revoked = await key(ADMIN, { name: 'm-revoked', role: 'Admin' });
  expect((await gql(server, 'mutation($id: Int!) { apiKeyRevoke(id: $id) { revokedApiKeyId } }', { id: revoked.id })).body.data).toEqual({ apiKeyRevoke: { revokedApiKeyId: revoked.id } });
  auth['revoked token'] = `Bearer ${revoked.key}`;

  // Org 1's readable things, and org 2's things to delete.
  const ds = await createDataSource(server, ADMIN, { name: 'matrix-ds', url: upstreamUrl });
  const sa = await serviceAccount(ADMIN, 'matrix-sa');
  // A kind whose check calls nothing, so every caller allowed to check gets OK.
  const checked = await createDataSource(server, ADMIN, { name: 'matrix-health', type: 'testdata' });
  const victims = {
    byId: await createDataSource(server, other, { name: 'victim-by-id' }),
    byUid: await createDataSource(server, other, { name: 'victim-by-uid' }),
    byName: await createDataSource(server, other, { name: 'victim-by-name' }),
    key: await key(other, { name: 'victim-key', role: 'Viewer' }),
    account: await serviceAccount(other, 'victim-account'),
    patched: await serviceAccount(other, 'victim-patched'),
    tokenOwner: await serviceAccount(other, 'victim-token-owner'),
  };
  const victimToken = await call(server, 'POST', `/api/serviceaccounts/${victims.tokenOwner}/tokens`, { auth: other, body: { name: 'victim-token' } });
  expect(victimToken.status).toBe(200);
  const created = async (login: string) => (await call(server, 'POST', '/api/admin/users', { body: { login, password: 'throwaway-pw' } })).body.id as number;
  const throwaway = await created('m-throwaway');
  const doomed = await created('m-doomed');
  const renamed = await created('m-renamed');
  const switchable = await created('m-switchable');
  const [viewerId] = await server.sql<{ id: number }>(`select id from "user" where login = 'm-viewer'`);
  // In org 1 only: removed by its Admin (200), then already gone for the server admin (404).
  const leaver = (await createUser(server, 'm-leaver', 'Viewer')).id;
  // In org 2 only, with org 2's Admin as the only one to change it.
  const otherMember = (await createUser(server, 'm-other-member', 'Viewer', otherOrg)).id;
  const doomedOrg = await createOrg(server, 'Matrix Doomed Org');
  const team = (await call(server, 'POST', '/api/teams', { body: { name: 'matrix-team' } })).body.teamId as number;
  const otherTeam = async (name: string, memberId?: number) => {
    const id = (await call(server, 'POST', '/api/teams', { auth: other, body: { name } })).body.teamId as number;
    if (memberId) expect((await call(server, 'POST', `/api/teams/${id}/members`, { auth: other, body: { userId: memberId } })).status).toBe(200);
    return id;
  };
  const joiner = (await createUser(server, 'm-team-joiner', 'Viewer', otherOrg)).id;
  const teams = {
    renamed: await otherTeam('victim-team-renamed'),
    doomed: await otherTeam('victim-team-doomed'),
    joined: await otherTeam('victim-team-joined'),
    bulk: await otherTeam('victim-team-bulk'),
    promoted: await otherTeam('victim-team-promoted', joiner),
    left: await otherTeam('victim-team-left', joiner),
  };

  const sample: Record<string, { params?: Record<string, string | number>; query?: string; body?: unknown }> = {
    'GET /api/datasources': {},
    'POST /api/datasources': { body: { name: 'matrix-new', type: 'loki', access: 'proxy', url: 'http://[broken' } },
    'GET /api/datasources/:id': { params: { id: ds.id } },
    'PUT /api/datasources/:id': { params: { id: ds.id }, body: { name: 'matrix-ds', type: 'loki', access: 'proxy', url: upstreamUrl } },
    'DELETE /api/datasources/:id': { params: { id: victims.byId.id } },
    'GET /api/datasources/uid/:uid': { params: { uid: ds.uid } },
    'PUT /api/datasources/uid/:uid': { params: { uid: ds.uid }, body: { name: 'matrix-ds', type: 'loki', access: 'proxy', url: upstreamUrl } },
    'DELETE /api/datasources/uid/:uid': { params: { uid: victims.byUid.uid } },
    'GET /api/datasources/name/:name': { params: { name: 'matrix-ds' } },
    'DELETE /api/datasources/name/:name': { params: { name: 'victim-by-name' } },
    'GET /api/datasources/id/:name': { params: { name: 'matrix-ds' } },
    'GET /api/datasources/uid/:uid/health': { params: { uid: checked.uid } },
    'GET /api/datasources/:id/health': { params: { id: checked.id } },
    'GET /api/frontend/settings': {},
    'GET /api/admin/settings': {},
    'GET /api/admin/stats': {},
    'POST /api/admin/users': { body: { login: 'm-created', password: 'created-pw' } },
    'PUT /api/admin/users/:id/password': { params: { id: throwaway }, body: { password: 'changed-pw' } },
    'PUT /api/admin/users/:id/permissions': { params: { id: throwaway }, body: { isServiceAdmin: false } },
    'DELETE /api/admin/users/:id': { params: { id: doomed } },
    'POST /api/admin/pause-all-alerts': { body: { paused: false } },
    'POST /api/admin/provisioning/datasources/reload': {},
    'GET /api/auth/keys': {},
    'POST /api/auth/keys': { body: { name: 'm-new-key', role: 'NotARole' } },
    'DELETE /api/auth/keys/:id': { params: { id: victims.key.id } },
    'POST /api/serviceaccounts': { body: { name: '   ' } },
    'GET /api/serviceaccounts/search': {},
    'GET /api/serviceaccounts/:id': { params: { id: sa } },
    'PATCH /api/serviceaccounts/:id': { params: { id: victims.patched }, body: { name: 'patched by its org' } },
    'DELETE /api/serviceaccounts/:id': { params: { id: victims.account } },
    'GET /api/serviceaccounts/:serviceAccountId/tokens': { params: { serviceAccountId: sa } },
    'POST /api/serviceaccounts/:serviceAccountId/tokens': { params: { serviceAccountId: victims.tokenOwner }, body: { name: 'm-new-token' } },
    'DELETE /api/serviceaccounts/:serviceAccountId/tokens/:tokenId': { params: { serviceAccountId: victims.tokenOwner, tokenId: victimToken.body.id } },
    'GET /api/users': {},
    'GET /api/users/search': {},
    'GET /api/users/lookup': { query: '?loginOrEmail=m-viewer' },
    'GET /api/users/:id': { params: { id: viewerId!.id } },
    'PUT /api/users/:id': { params: { id: renamed }, body: { login: 'm-renamed', name: 'Renamed' } },
    'GET /api/users/:id/orgs': { params: { id: viewerId!.id } },
    'GET /api/user': {},
    'PUT /api/user': { body: { name: 'No Login Nor E-mail' } },
    'PUT /api/user/password': { body: { oldPassword: 'matrix-pw', newPassword: 'ab' } },
    'GET /api/user/orgs': {},
    'POST /api/user/using/:id': { params: { id: 1 } },
    'POST /api/admin/users/:id/disable': { params: { id: switchable } },
    'POST /api/admin/users/:id/enable': { params: { id: switchable } },
    'POST /api/orgs': { body: { name: 'Matrix Created Org' } },
    'GET /api/orgs': {},
    'GET /api/orgs/name/:name': { params: { name: 'Main Org.' } },
    'GET /api/orgs/:orgId': { params: { orgId: 1 } },
    'PUT /api/orgs/:orgId': { params: { orgId: 1 }, body: { name: 'Main Org.' } },
    'DELETE /api/orgs/:orgId': { params: { orgId: doomedOrg } },
    'GET /api/orgs/:orgId/users': { params: { orgId: 1 } },
    'POST /api/orgs/:orgId/users': { params: { orgId: 1 }, body: { loginOrEmail: 'm-nobody-at-all', role: 'Viewer' } },
    'PATCH /api/orgs/:orgId/users/:userId': { params: { orgId: 1, userId: viewerId!.id }, body: { role: 'Viewer' } },
    'DELETE /api/orgs/:orgId/users/:userId': { params: { orgId: 1, userId: leaver } },
    'GET /api/org': {},
    'PUT /api/org': { body: {} },
    'GET /api/org/users': {},
    'POST /api/org/users': { body: { loginOrEmail: 'm-nobody-at-all', role: 'Viewer' } },
    'GET /api/org/users/lookup': {},
    'PATCH /api/org/users/:userId': { params: { userId: otherMember }, body: { role: 'Editor' } },
    'DELETE /api/org/users/:userId': { params: { userId: otherMember } },
    'GET /api/access-control/datasources/description': {},
    'GET /api/access-control/datasources/:uid': { params: { uid: ds.uid } },
    'POST /api/access-control/datasources/:uid': { params: { uid: ds.uid }, body: { permissions: [] } },
    'POST /api/access-control/datasources/:uid/users/:userId': { params: { uid: ds.uid, userId: viewerId!.id }, body: { permission: 'Query' } },
    'POST /api/access-control/datasources/:uid/teams/:teamId': { params: { uid: ds.uid, teamId: team }, body: { permission: 'Query' } },
    'POST /api/access-control/datasources/:uid/builtInRoles/:builtInRole': { params: { uid: ds.uid, builtInRole: 'Viewer' }, body: { permission: 'Query' } },
    'GET /api/teams/search': {},
    'POST /api/teams': { body: { name: '' } },
    'GET /api/teams/:teamId': { params: { teamId: team } },
    'PUT /api/teams/:teamId': { params: { teamId: teams.renamed }, body: { name: 'victim-team-renamed' } },
    'DELETE /api/teams/:teamId': { params: { teamId: teams.doomed } },
    'GET /api/teams/:teamId/members': { params: { teamId: team } },
    'POST /api/teams/:teamId/members': { params: { teamId: teams.joined }, body: { userId: joiner } },
    'PUT /api/teams/:teamId/members': { params: { teamId: teams.bulk }, body: { members: [] } },
    'PUT /api/teams/:teamId/members/:userId': { params: { teamId: teams.promoted, userId: joiner }, body: { permission: 4 } },
    'DELETE /api/teams/:teamId/members/:userId': { params: { teamId: teams.left, userId: joiner } },
    'GET /api/user/teams': {},
    'GET /api/teams/:teamId/preferences': { params: { teamId: team } },
    'PUT /api/teams/:teamId/preferences': { params: { teamId: teams.renamed }, body: { theme: 'dark' } },
    'GET /api/users/:id/teams': { params: { id: viewerId!.id } },
    'POST /api/users/:id/using/:orgId': { params: { id: viewerId!.id, orgId: 1 } },
    'GET /api/user/preferences': {},
    'PUT /api/user/preferences': { body: { theme: 'dark' } },
    'PATCH /api/user/preferences': { body: { weekStart: 'monday' } },
    'GET /api/org/preferences': {},
    'PUT /api/org/preferences': { body: { timezone: 'utc' } },
    'PATCH /api/org/preferences': { body: { theme: 'light' } },
  };
  for (const route of ROUTES) {
    const s = sample[routeKey(route)];
    if (s) requests.set(routeKey(route), { method: route.method, path: fillPath(route, s.params ?? {}) + (s.query ?? ''), body: s.body });
  }
  requests.set('ANY /graphql', { method: 'POST', path: '/graphql', body: { query: '{ currentOrganization { dataSources { nodes { name } } } }' } });
  requests.set('ANY /api/datasources/proxy/:id/*', { method: 'GET', path: `/api/datasources/proxy/${ds.id}/api/v1/query` });
  requests.set('ANY /api/datasources/proxy/uid/:uid/*', { method: 'GET', path: `/api/datasources/proxy/uid/${ds.uid}/api/v1/query` });
  requests.set('POST /api/ds/query', { method: 'POST', path: '/api/ds/query', body: { from: 'now-5m', to: 'now', queries: [{ refId: 'A', datasource: { uid: checked.uid }, scenarioId: 'random_walk', seed: 1 }] } });
  requests.set('ANY /api/datasources/uid/:uid/resources/*', { method: 'GET', path: `/api/datasources/uid/${checked.uid}/resources/scenarios` });
  requests.set('ANY /api/datasources/:id/resources/*', { method: 'GET', path: `/api/datasources/${checked.id}/resources/scenarios` });
  requests.set('GET /api/health', { method: 'GET', path: '/api/health' });
  requests.set('HEAD /api/health', { method: 'HEAD', path: '/api/health' });
  requests.set('GET /metrics', { method: 'GET', path: '/metrics' });
  requests.set('GET /api/openapi.json', { method: 'GET', path: '/api/openapi.json' });
  requests.set('ANY /api/*', { method: 'GET', path: '/api/no/such/thing' });
});

afterAll(async () => {
  await server.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

describe('the authorization matrix', () => {
  it('has a decided row, and a request, for every route there is', () => {
    const routes = ROUTES.map(routeKey);
    expect(routes.filter((r) => !(r in EXPECTED))).toEqual([]); // a new route: add its row
    expect(Object.keys(EXPECTED).filter((r) => !routes.includes(r))).toEqual([]); // a removed route: drop its row
    expect(routes.filter((r) => !requests.has(r))).toEqual([]); // and say how to call it
    for (const row of Object.values(EXPECTED)) expect(row).toHaveLength(CALLERS.length);
  });

  it('answers every route, for every caller, with the status in the table', async () => {
    const deviations: string[] = [];
    for (const [route, expected] of Object.entries(EXPECTED)) {
      const request = requests.get(route);
      if (!request) continue; // reported by the test above
      // In caller order: the other org's Admin, whose writes succeed, goes last.
      for (const [i, caller] of CALLERS.entries()) {
        const res = await call(server, request.method, request.path, { auth: auth[caller] ?? null, body: request.body });
        if (res.status !== expected[i]) deviations.push(`${route} as ${caller}: ${res.status} (expected ${expected[i]}) ${res.text.slice(0, 120)}`);
        else if (res.status >= 400) {
          const message = route === 'ANY /graphql' ? res.body?.errors?.[0]?.message : res.body?.message;
          if (typeof message !== 'string' || !message) deviations.push(`${route} as ${caller}: ${res.status} without a message: ${res.text.slice(0, 120)}`);
        }
      }
    }
    expect(deviations).toEqual([]);
  });
});
