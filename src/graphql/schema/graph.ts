import { serverAdminFor, signedIn } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import type { OrgMember } from '../../services/org-members.ts';
import { getOrgByName, getOrgs, listOrgs, searchOrgs, type OrgDetails } from '../../services/organizations.ts';
import { readServiceAccounts } from '../../services/service-accounts.ts';
import { getUserProfiles } from '../../services/user-profiles.ts';
import { builder } from '../builder.ts';
import { SEES } from '../graph-access.ts';
import {
  membersOfOrg, orgById,
} from '../node-loaders.ts';
import { nodeKey } from '../node-ids.ts';
import { pageOf, type PageArgs } from '../paging.ts';
import { connection, totalCount } from './connections.ts';
import { selectsOnly } from '../selection.ts';
import { ORG_ACCESS, OrgMemberType } from './organization/membership.ts';
import { ActorInterface, CallerRef, isUser, type Actor } from './actor.ts';
import { orgsOfUser, userById } from './user/loaders.ts';
import { User } from './user/node.ts';

/**
 * The graph: node types with global ids (GraphQL Global Object Identification), cursor
 * connections (GraphQL Cursor Connections) and the relationships between them, from `viewer` and
 * `node(id)`. Each object reached is checked with the rule of the root field that reads the same
 * thing (graph-access.ts); each level is read in one statement (node-loaders.ts).
 */

export const contains = (text: string, part: string) => text.toLowerCase().includes(part.toLowerCase());

/** A relationship's list, or null when the caller may not see it; filtered, then paged (whole, for a REST row's answer). */
export async function pageIf<T>(allowed: Promise<boolean> | boolean, list: string, items: () => Promise<readonly T[]>, args: PageArgs, keep?: (item: T) => boolean, whole = false) {
  if (!(await allowed)) return null;
  const all = await items();
  return pageOf(list, keep ? all.filter(keep) : all, args, whole);
}

/** Fields of an actor answered from a CallerRef; any other field needs the row. */
const ACTOR_FIELDS_WITHOUT_ROW = new Set(['__typename', 'id', 'databaseId', 'currentOrganization', 'preferences']);
/** Fields of an org answered from its id alone; any other field needs the row. */
const ORG_FIELDS_WITHOUT_ROW = new Set(['__typename', 'id', 'databaseId', 'dataSources', 'dataSource', 'teams', 'team', 'members', 'serviceAccounts', 'serviceAccount']);

export { ActorInterface, type Actor };

export const OrganizationNode = builder.node(builder.objectRef<OrgDetails>('Organization'), {
  description: 'An organization: the unit that owns data sources, tokens and service accounts, with members in roles. Seen by its members and server admins.',
  // Its fields' rules apply in the org itself.
  extensions: { access: ORG_ACCESS.currentRead, orgOf: (org: OrgDetails) => org.id },
  id: nodeKey((org) => org.id),
  loadMany: (keys, ctx) => Promise.all(keys.map((key) => orgById(ctx).load(Number(key)))),
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The numeric id REST paths take (`/api/orgs/:orgId`, `X-Grafana-Org-Id`).' }),
    name: t.exposeString('name', { description: 'Unique among orgs.' }),
  }),
});






const OrganizationMemberConnection = connection('OrganizationMemberConnection', OrgMemberType, 'org members');
const OrganizationConnection = connection('OrganizationConnection', OrganizationNode, 'orgs');

/** An org of an actor with the role the actor holds there, carried on the edge (as GitHub carries a member's role). */
const ActorOrganizationConnection = builder.connectionObject({
  type: OrganizationNode,
  name: 'ActorOrganizationConnection',
  description: 'A page of the orgs an actor belongs to, each edge with the actor\'s role there.',
  fields: (t) => ({ totalCount: t.int({ ...totalCount, resolve: (c) => (c as unknown as { totalCount: number }).totalCount }) }),
}, {
  name: 'ActorOrganizationEdge',
  description: 'An org of the actor, with its role there.',
  fields: (t) => ({ role: t.string({ description: '`None` (a member with no permission of its own), `Viewer`, `Editor` or `Admin`.', resolve: (edge) => (edge as unknown as { role: string }).role }) }),
});

builder.objectFields(OrganizationNode, (t) => ({
  address: t.field({
    type: 'JSONObject',
    description: 'A postal address; not kept by this server, so always empty fields.',
    resolve: (org) => ({ ...org.address }),
  }),
  members: t.connection({
    type: OrgMemberType,
    nullable: true,
    description: 'Its members (users) by login. Its Admins and server admins (org.users:read); null for anyone else.',
    args: { query: t.arg.string({ required: false, description: 'Only members whose login, e-mail or name contains it, in any case.' }) },
    resolve: (org, args, ctx) => pageIf(SEES.members(ctx, org.id), 'Organization.members', () => membersOfOrg(ctx).load(org.id), args,
      (m) => !args.query || contains(m.login, args.query) || contains(m.email, args.query) || contains(m.name, args.query), ctx.rest),
  }, OrganizationMemberConnection),
}));


builder.objectFields(OrgMemberType, (t) => ({
  organization: t.field({
    type: OrganizationNode,
    nullable: true,
    description: 'The org.',
    resolve: (m, _args, ctx) => orgById(ctx).load(m.orgId),
  }),
  user: t.field({
    type: User,
    nullable: true,
    description: 'The user; null unless the caller is that user or a server admin (users:read).',
    resolve: (m, _args, ctx) => userById(ctx).load(m.userId),
  }),
}));



ActorInterface.implement({
  description: 'Who is calling: a user (Basic credentials) or a service account (one of its tokens). Legacy org API keys have no actor.',
  resolveType: (a) => (isUser(a) ? 'User' : 'ServiceAccount'),
  interfaces: [builder.nodeInterfaceRef()],
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'Its numeric id (users and service accounts share one sequence).' }),
    login: t.exposeString('login', { description: 'Its login.' }),
    name: t.exposeString('name', { description: 'Its display name.' }),
    isServiceAdmin: t.boolean({ description: 'Holds the server-admin permission (never a service account).', resolve: (a) => isUser(a) && a.isGrafanaAdmin }),
    currentOrganization: t.field({
      type: OrganizationNode,
      nullable: true,
      description: 'The org this request acts in (`X-Grafana-Org-Id`, or the user\'s current org); null for any actor but the caller.',
      resolve: (a, _args, ctx, info) => (isCaller(ctx, a) ? requestOrg(ctx, info) : null),
    }),
    organizations: t.connection({
      type: OrganizationNode,
      nullable: true,
      description: 'The orgs it belongs to by name, each edge with its role there. The actor itself and server admins; null for anyone else.',
      resolve: async (a, args, ctx) => {
        if (!isCaller(ctx, a) && !SEES.user(ctx, a.id)) return null;
        const orgs = isUser(a)
          ? (await orgsOfUser(ctx).load(a.id)).map((o) => ({ org: { id: o.orgId, name: o.name, address: { ...NO_ADDRESS } }, role: o.role }))
          : (await getOrgs(ctx.em, [a.orgId])).map((org) => ({ org, role: a.role }));
        const page = pageOf('Actor.organizations', orgs, args, ctx.rest);
        // Each edge carries the role; as on every page, edges are made only when asked for.
        return {
          pageInfo: page.pageInfo,
          totalCount: page.totalCount,
          nodes: page.nodes.map((o) => o.org),
          get edges() { return page.edges.map((e) => ({ cursor: e.cursor, node: e.node.org, role: e.node.role })); },
        };
      },
    }, ActorOrganizationConnection),
  }),
});

export const NO_ADDRESS = Object.freeze({ address1: '', address2: '', city: '', zipCode: '', state: '', country: '' });

/**
 * The org the request acts in: one the caller belongs to (its principal says so), so when nothing
 * asked of it needs its row (a walk on to its lists) there is no row to read or check it by.
 * Typed as the row it stands in for: only the fields in ORG_FIELDS_WITHOUT_ROW read it.
 */
function requestOrg(ctx: RequestContext, info: Parameters<typeof selectsOnly>[0]): OrgDetails | Promise<OrgDetails | null> {
  if (selectsOnly(info, ORG_FIELDS_WITHOUT_ROW)) return { id: ctx.orgId } as OrgDetails;
  return orgById(ctx).load(ctx.orgId);
}

/** Whether `a` is the caller itself (a user's id and a service account's may not be told apart by number alone). */
export function isCaller(ctx: RequestContext, a: Actor): boolean {
  const caller = ctx.caller;
  return caller.userId === a.id && (caller.kind === 'user') === isUser(a);
}

builder.queryFields((t) => ({
  viewer: t.field({
    type: ActorInterface,
    nullable: true,
    description: 'Who is calling: the signed-in user, or the service account whose token is used; null for a legacy org API key. Any signed-in caller.',
    extensions: { access: signedIn },
    resolve: async (_root, _args, ctx, info): Promise<Actor | null> => {
      const caller = ctx.caller;
      if (caller.userId === null) return null;
      // Typed as the row it stands in for: only the fields in ACTOR_FIELDS_WITHOUT_ROW read it.
      if (selectsOnly(info, ACTOR_FIELDS_WITHOUT_ROW)) return new CallerRef(caller.userId, caller.kind === 'user') as unknown as Actor;
      if (caller.kind === 'user') return (await getUserProfiles(ctx.em, [caller.userId]))[0] ?? null;
      return (await readServiceAccounts(ctx.em, { ids: [caller.userId] }))[0] ?? null;
    },
  }),
  currentOrganization: t.field({
    type: OrganizationNode,
    nullable: true,
    description: 'The org the request acts in (`X-Grafana-Org-Id`, or the caller\'s current org), whoever calls: a user, a service account or a legacy API key '
      + '(`viewer.currentOrganization` for the first two). Any signed-in caller; its fields and lists each apply their own rule (its name and address: its Viewers and up, and server admins).',
    extensions: { access: signedIn, requestOrg: true },
    resolve: (_root, _args, ctx, info) => requestOrg(ctx, info),
  }),
  organizations: t.field({
    type: [OrganizationNode],
    args: {
      query: t.arg.string({ required: false, description: 'Only orgs whose name starts with it.' }),
      name: t.arg.string({ required: false, description: 'Only the org of exactly this name.' }),
      page: t.arg.int({ required: false, description: 'Page number from 0 (default 0).' }),
      perPage: t.arg.int({ required: false, description: 'Page size; 0 or absent means 1000.' }),
    },
    description: 'Every org by id, one page at a time (a page past the end is empty), as `GET /api/orgs`. Server admins only (orgs:read).',
    // REST's own paging (page numbers from 0 to any depth, perPage up to 1000 by default): no connection form.
    extensions: { access: ORG_ACCESS.list, restOnly: true },
    resolve: async (_root, args, ctx) => (await searchOrgs(ctx.em, args)).map((org) => ({ ...org, address: { ...NO_ADDRESS } })),
  }),
  organizationByName: t.field({
    type: OrganizationNode,
    args: { name: t.arg.string({ required: true, description: 'The exact name.' }) },
    description: 'An org by name, as `GET /api/orgs/name/:name`. Server admins only (orgs:read).',
    extensions: { access: ORG_ACCESS.list },
    resolve: (_root, { name }, ctx) => getOrgByName(ctx.em, name),
  }),
  allOrganizations: t.connection({
    type: OrganizationNode,
    description: 'Every org by id. Server admins only (orgs:read).',
    args: { query: t.arg.string({ required: false, description: 'Only orgs whose name starts with it.' }) },
    extensions: { access: serverAdminFor('orgs:read') },
    resolve: async (_root, args, ctx) => pageOf('Query.allOrganizations', await listOrgs(ctx.em, args.query ?? ''), args),
  }, OrganizationConnection),
}));
