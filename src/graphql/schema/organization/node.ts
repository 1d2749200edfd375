import { serverAdminFor, signedIn } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import { getOrgByName, listOrgs, searchOrgs, type OrgDetails } from '../../../services/organizations.ts';
import { builder } from '../../builder.ts';
import { SEES } from '../../graph-access.ts';
import { nodeKey } from '../../node-ids.ts';
import { pageOf } from '../../paging.ts';
import { selectsOnly } from '../../selection.ts';
import { connection, contains, pageIf } from '../connections.ts';
import { userById } from '../user/loaders.ts';
import { User } from '../user/node.ts';
import { membersOfOrg, orgById } from './loaders.ts';
import { ORG_ACCESS, OrgMemberType } from './membership.ts';

/** Fields of an org answered from its id alone; any other field needs the row. */
const ORG_FIELDS_WITHOUT_ROW = new Set(['__typename', 'id', 'databaseId', 'dataSources', 'dataSource', 'teams', 'team', 'members', 'serviceAccounts', 'serviceAccount']);

export const OrganizationType = builder.node(builder.objectRef<OrgDetails>('Organization'), {
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
const OrganizationConnection = connection('OrganizationConnection', OrganizationType, 'orgs');

builder.objectFields(OrganizationType, (t) => ({
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
    type: OrganizationType,
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

export const NO_ADDRESS = Object.freeze({ address1: '', address2: '', city: '', zipCode: '', state: '', country: '' });

/**
 * The org the request acts in: one the caller belongs to (its principal says so), so when nothing
 * asked of it needs its row (a walk on to its lists) there is no row to read or check it by.
 * Typed as the row it stands in for: only the fields in ORG_FIELDS_WITHOUT_ROW read it.
 */
export function requestOrg(ctx: RequestContext, info: Parameters<typeof selectsOnly>[0]): OrgDetails | Promise<OrgDetails | null> {
  if (selectsOnly(info, ORG_FIELDS_WITHOUT_ROW)) return { id: ctx.orgId } as OrgDetails;
  return orgById(ctx).load(ctx.orgId);
}

builder.queryFields((t) => ({
  currentOrganization: t.field({
    type: OrganizationType,
    nullable: true,
    description: 'The org the request acts in (`X-Grafana-Org-Id`, or the caller\'s current org), whoever calls: a user, a service account or a legacy API key '
      + '(`viewer.currentOrganization` for the first two). Any signed-in caller; its fields and lists each apply their own rule (its name and address: its Viewers and up, and server admins).',
    extensions: { access: signedIn, requestOrg: true },
    resolve: (_root, _args, ctx, info) => requestOrg(ctx, info),
  }),
  organizations: t.field({
    type: [OrganizationType],
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
    type: OrganizationType,
    args: { name: t.arg.string({ required: true, description: 'The exact name.' }) },
    description: 'An org by name, as `GET /api/orgs/name/:name`. Server admins only (orgs:read).',
    extensions: { access: ORG_ACCESS.list },
    resolve: (_root, { name }, ctx) => getOrgByName(ctx.em, name),
  }),
  allOrganizations: t.connection({
    type: OrganizationType,
    description: 'Every org by id. Server admins only (orgs:read).',
    args: { query: t.arg.string({ required: false, description: 'Only orgs whose name starts with it.' }) },
    extensions: { access: serverAdminFor('orgs:read') },
    resolve: async (_root, args, ctx) => pageOf('Query.allOrganizations', await listOrgs(ctx.em, args.query ?? ''), args),
  }, OrganizationConnection),
}));
