import { constant, from, object } from './wire.ts';

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
