import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, basic, call, gql, startTestServer, type TestServer } from '../../support/server.ts';

// The graph applies the data source permissions and the teams' visibility as the REST rows do:
// an org's connections list only what the caller may see, and node(id) answers null for the rest.

let server: TestServer;
const VIEWER = basic('g-viewer', 'viewer-pass');
let viewerId: number;

beforeAll(async () => {
  server = await startTestServer();
  for (const name of ['g-open', 'g-hidden']) {
    expect((await call(server, 'POST', '/api/datasources', { body: { name, type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9' } })).status).toBe(200);
  }
  const hidden = (await call(server, 'GET', '/api/datasources/name/g-hidden')).body;
  for (const role of ['Viewer', 'Editor']) {
    expect((await call(server, 'POST', `/api/access-control/datasources/${hidden.uid}/builtInRoles/${role}`, { body: { permission: '' } })).status).toBe(200);
  }
  viewerId = (await call(server, 'POST', '/api/admin/users', { body: { login: 'g-viewer', password: 'viewer-pass' } })).body.id;
  const mine = (await call(server, 'POST', '/api/teams', { body: { name: 'g-mine' } })).body.teamId;
  await call(server, 'POST', '/api/teams', { body: { name: 'g-other' } });
  expect((await call(server, 'POST', `/api/teams/${mine}/members`, { body: { userId: viewerId } })).status).toBe(200);
});

afterAll(async () => {
  await server?.close();
});

const ORG = `{ viewer { currentOrganization {
  dataSources(first: 50) { totalCount nodes { id name } }
  teams(first: 50) { totalCount nodes { id databaseId name memberCount } }
} } }`;

interface OrgView {
  dataSources: { totalCount: number; nodes: Array<{ id: string; name: string }> };
  teams: { totalCount: number; nodes: Array<{ id: string; databaseId: number; name: string; memberCount: number }> };
}

async function org(auth: string): Promise<OrgView> {
  const res = await gql<{ viewer: { currentOrganization: OrgView } }>(server, ORG, {}, auth);
  expect(res.body.errors).toBeUndefined();
  return res.body.data!.viewer.currentOrganization;
}

describe('the graph and the permissions', () => {
  it('lists only the data sources and teams the caller may see, and node(id) answers null for the others', async () => {
    const admin = await org(ADMIN);
    const viewer = await org(VIEWER);
    expect(admin.dataSources.nodes.map((d) => d.name)).toEqual(['g-hidden', 'g-open']);
    expect(viewer.dataSources).toEqual({ totalCount: 1, nodes: [admin.dataSources.nodes[1]] });
    expect(admin.teams.nodes.map((t) => t.name)).toEqual(['g-mine', 'g-other']);
    // Its creator (the admin) is a member too.
    expect(viewer.teams.nodes.map((t) => [t.name, t.memberCount])).toEqual([['g-mine', 2]]);

    const ids = [...admin.dataSources.nodes.map((d) => d.id), ...admin.teams.nodes.map((t) => t.id)];
    const NODES = 'query($ids: [ID!]!) { nodes(ids: $ids) { id ... on DataSource { name } ... on Team { name } } }';
    const seenByAdmin = await gql(server, NODES, { ids }, ADMIN);
    expect(seenByAdmin.body.data.nodes.map((n: { name: string } | null) => n?.name ?? null)).toEqual(['g-hidden', 'g-open', 'g-mine', 'g-other']);
    const seenByViewer = await gql(server, NODES, { ids }, VIEWER);
    expect(seenByViewer.body.data.nodes.map((n: { name: string } | null) => n?.name ?? null)).toEqual([null, 'g-open', 'g-mine', null]);

    // A team node leads to its members for those who may read them (the org's Admins).
    const members = await gql(server, 'query($id: ID!) { node(id: $id) { ... on Team { members { login permission } organization { name } } } }', { id: admin.teams.nodes[0]!.id }, ADMIN);
    expect(members.body.data.node).toEqual({ members: [{ login: 'admin', permission: 4 }, { login: 'g-viewer', permission: 0 }], organization: { name: 'Main Org.' } });
  });
});
