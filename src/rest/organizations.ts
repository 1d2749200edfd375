import type { RequestContext } from '../context.ts';
import { MESSAGES } from '../errors/messages.ts';
import { requireRoleInOrg } from '../graphql/identity-access.ts';
import { listOrgMembers } from '../services/org-members.ts';
import { getOrg } from '../services/organizations.ts';
import { serviceRefusal, type Missing } from './executor.ts';
import { orgOfId } from '../graphql/access.ts';
import { messageOf } from './messages.ts';
import { computed, constant, from, goMap, object } from './wire.ts';

/**
 * What only the wire has of orgs: the original's answers around the graph's `Organization` (a
 * postal address it never keeps).
 */

const ADDRESS_FIELDS = ['address1', 'address2', 'city', 'zipCode', 'state', 'country'] as const;

/** An org as the original answers one (`OrgDetailsDTO`): its address always empty. */
export const ORG_DETAILS = object({
  id: from('id', undefined, 'The org\'s id (`/api/orgs/:orgId`, `X-Grafana-Org-Id`).'),
  name: 'name',
  address: constant(Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, ''])), {
    type: 'object',
    required: [...ADDRESS_FIELDS],
    properties: Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, { type: 'string', description: 'Always empty.' }])),
    description: 'Its postal address: not kept, so always empty.',
  }),
}, { component: 'OrgDetails', description: 'An organization: the unit that owns data sources, tokens and service accounts, with members in roles.' });

/** The answer to `POST /api/orgs` (a Go map: keys sorted), over the mutation's payload. */
export const ORG_CREATED = goMap({
  message: constant(MESSAGES.org.created, { type: 'string', description: 'Always `Organization created`.' }),
  orgId: from('organization.id', undefined, 'The new org\'s id.'),
});

/** What the OpenAPI document says of the numeric ids in an org's paths (the graph takes global ids). */
export const ORG_PARAMS = { orgId: 'The org\'s id.' };
/** The body of an org's creation and renaming. */
export const ORG_BODY = { name: 'Unique among orgs.' };

/** The answer to `POST /api/orgs/:orgId/users` and `POST /api/org/users` (a Go map: keys sorted). */
export const ORG_MEMBER_ADDED = goMap({
  message: constant(MESSAGES.orgUser.added, { type: 'string', description: 'Always `User added to organization`.' }),
  userId: from('member.userId', undefined, 'The user\'s id.'),
});

/** The answer to `DELETE /api/org/users/:userId`: whether the user, left in no org, went with its membership. */
export const ORG_MEMBER_REMOVED = messageOf(computed<string | null>('deletedUserId', (deleted) => (deleted ? MESSAGES.orgUser.userDeleted : MESSAGES.orgUser.removed), {
  type: 'string', description: '`User removed from organization`, or `User deleted` when the user, left in no org, was deleted.',
}));

/** What the OpenAPI document says of a membership's path. */
export const ORG_MEMBER_PARAMS = { ...ORG_PARAMS, userId: 'The user\'s id.' };
/** The body adding a member, or changing its role. */
export const ORG_MEMBER_BODY = {
  loginOrEmail: 'An existing user\'s login or e-mail.',
  role: '`None` (no permission of its own: only what teams and grants give), `Viewer`, `Editor` or `Admin`; not above the caller\'s own role there.',
};

/** The org a row names (its `orgId`, a global id), or the org the request acts in. */
const orgIdOf = (ctx: RequestContext, variables: Record<string, unknown>) => (variables.orgId === undefined ? ctx.orgId : orgOfId(variables.orgId));

/** Where the graph found no org the caller may see: 403 naming orgs:read for a non-member, else the service's 404. */
export const orgRefusal = serviceRefusal(async (ctx: RequestContext, variables) => {
  const orgId = orgIdOf(ctx, variables);
  await requireRoleInOrg(ctx, orgId, 'Viewer', 'orgs:read');
  return getOrg(ctx.em, orgId);
}, MESSAGES.org.notFound);

/**
 * Where the graph found no org, or no members the caller may list: 403 naming org.users:read for
 * anyone but its Admins and server admins; for them, the service's list (empty for no org, as the
 * original answers).
 */
export const orgMembersRefusal: Missing = async (ctx, variables) => {
  const orgId = orgIdOf(ctx, variables);
  await requireRoleInOrg(ctx, orgId, 'Admin', 'org.users:read');
  return listOrgMembers(ctx.em, orgId);
};

/** The members rows' `limit`: 0, negative or absent means all, as the original reads it; a page size otherwise. */
export const memberLimit = (values: Record<string, unknown>): Record<string, unknown> =>
  (typeof values.limit === 'number' && values.limit > 0 ? values : { ...values, limit: null });

/** The query parameters of the members rows of the org the request acts in. */
export const ORG_MEMBER_FILTER = {
  query: 'Only members whose login, e-mail or name contains it, in any case.',
  limit: 'At most this many; 0 or absent means all.',
};

/** An org as `GET /api/orgs` lists it. */
export const ORG_HIT = object({ id: from('id', undefined, 'The org\'s id (`/api/orgs/:orgId`, `X-Grafana-Org-Id`).'), name: 'name' });
