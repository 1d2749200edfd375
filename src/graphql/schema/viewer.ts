import { signedIn } from '../../auth/access.ts';
import { getOrgs } from '../../services/organizations.ts';
import { readServiceAccounts } from '../../services/service-accounts.ts';
import { getUserProfiles } from '../../services/user-profiles.ts';
import { builder } from '../builder.ts';
import { SEES } from '../graph-access.ts';
import { pageOf } from '../paging.ts';
import { selectsOnly } from '../selection.ts';
import { ActorInterface, CallerRef, isCaller, isUser, type Actor } from './actor.ts';
import { totalCount } from './connections.ts';
import { NO_ADDRESS, OrganizationType, requestOrg } from './organization/node.ts';
import { orgsOfUser } from './user/loaders.ts';

/**
 * The caller (`viewer`) and what every actor, user or service account, answers: its orgs with its
 * role in each, and the org the request acts in.
 */

/** Fields of an actor answered from a CallerRef; any other field needs the row. */
const ACTOR_FIELDS_WITHOUT_ROW = new Set(['__typename', 'id', 'databaseId', 'currentOrganization', 'preferences']);
/** An org of an actor with the role the actor holds there, carried on the edge (as GitHub carries a member's role). */
const ActorOrganizationConnection = builder.connectionObject({
  type: OrganizationType,
  name: 'ActorOrganizationConnection',
  description: 'A page of the orgs an actor belongs to, each edge with the actor\'s role there.',
  fields: (t) => ({ totalCount: t.int({ ...totalCount, resolve: (c) => (c as unknown as { totalCount: number }).totalCount }) }),
}, {
  name: 'ActorOrganizationEdge',
  description: 'An org of the actor, with its role there.',
  fields: (t) => ({ role: t.string({ description: '`None` (a member with no permission of its own), `Viewer`, `Editor` or `Admin`.', resolve: (edge) => (edge as unknown as { role: string }).role }) }),
});

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
      type: OrganizationType,
      nullable: true,
      description: 'The org this request acts in (`X-Grafana-Org-Id`, or the user\'s current org); null for any actor but the caller.',
      resolve: (a, _args, ctx, info) => (isCaller(ctx, a) ? requestOrg(ctx, info) : null),
    }),
    organizations: t.connection({
      type: OrganizationType,
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
}));
