import { MESSAGES } from '../errors/messages.ts';
import { getServiceAccount } from '../services/service-accounts.ts';
import { serviceRefusal } from './executor.ts';
import { constant, from, goMap, object } from './wire.ts';

/**
 * What only the wire has of service accounts: the original's envelope around an update (a Go map),
 * its constant `teams`, the new token's answer, and what its rows answer where the graph answers
 * null (the service's own refusal).
 */

/** The answer to `PATCH /api/serviceaccounts/:id` (a Go map: keys sorted), over the mutation's payload. */
export const SERVICE_ACCOUNT_UPDATED = goMap({
  id: from('serviceAccount.id', undefined, 'The account\'s id.'),
  message: constant(MESSAGES.serviceAccount.updated, { type: 'string', description: 'Always `Service account updated`.' }),
  name: from('serviceAccount.name', undefined, 'Its name now.'),
  serviceaccount: from('serviceAccount', object({
    id: 'id', name: 'name', login: 'login', orgId: 'orgId', isDisabled: 'isDisabled', createdAt: 'createdAt', updatedAt: 'updatedAt', role: 'role',
    teams: constant([], { type: 'array', items: { type: 'string' }, description: 'Always empty: a service account here belongs to no team through this answer.' }),
  }, { component: 'ServiceAccountProfile', description: 'A service account as an update answers it.' }), 'The account as stored now.'),
});

/** The answer to a token's creation: its secret, shown this once. */
export const TOKEN_CREATED = object({
  id: from('token.id', undefined, 'The token\'s id.'),
  name: from('token.name', undefined, 'Its name.'),
  key: from('key', undefined, 'The secret (`glsa_...`), shown this once.'),
}, { component: 'NewServiceAccountToken', description: 'A token just created, with its secret.' });

/** What the OpenAPI document says of the numeric ids in a service account's paths (the graph takes global ids). */
export const SERVICE_ACCOUNT_PARAMS = { id: 'The account\'s id.', serviceAccountId: 'The account\'s id.', tokenId: 'The token\'s id.' };

/** Where the graph found no such account in the org: the service's refusal (404), or, created since, not found. */
export const serviceAccountRefusal = (key: 'id' | 'serviceAccountId') =>
  serviceRefusal((ctx, variables) => getServiceAccount(ctx.em, ctx.orgId, variables[key] as number), MESSAGES.serviceAccount.notFound);
