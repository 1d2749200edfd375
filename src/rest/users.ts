import { notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { message } from './messages.ts';
import { from, object, type Wire } from './wire.ts';

/**
 * What only the wire has of users: the original answers its changes with a message where the
 * graph answers the user as changed (or its user errors, which the REST row answers as its 4xx).
 */

/** How the user rows' `:id` reads in the OpenAPI document. */
export const USER_ID = 'The user\'s id.';

export const USER_DELETED: Wire = message(MESSAGES.user.deleted);
export const USER_DISABLED: Wire = message(MESSAGES.user.disabled);
export const USER_ENABLED: Wire = message(MESSAGES.user.enabled);
export const USER_UPDATED: Wire = message(MESSAGES.user.updated);
export const USER_PASSWORD_UPDATED: Wire = message(MESSAGES.user.passwordUpdated);
export const USER_ORG_CHANGED: Wire = message(MESSAGES.user.orgChanged);

/** The rule of the signed-in user's own rows, as the OpenAPI document reads it. */
export const SELF_ONLY = 'Signed-in users (Basic credentials; tokens are refused).';

/** A user as the original's reads answer it (`GET /api/users/:id`, `GET /api/user`), over the `UserFields` fragment. */
export const USER_PROFILE: Wire = object({
  id: from('id', undefined, 'The user\'s id.'), uid: 'uid', email: 'email', name: 'name', login: 'login', theme: 'theme', orgId: 'orgId',
  isGrafanaAdmin: from('isGrafanaAdmin', undefined, 'Holds the server-admin permission.'), isDisabled: 'isDisabled', isExternal: 'isExternal',
  isExternallySynced: 'isExternallySynced', isGrafanaAdminExternallySynced: 'isGrafanaAdminExternallySynced', authLabels: 'authLabels',
  updatedAt: 'updatedAt', createdAt: 'createdAt', avatarUrl: 'avatarUrl',
}, { component: 'UserProfileFields', description: 'A user (never a service account) with its server-wide attributes.' });

/** Where the graph answers null for a user id (unknown, a service account's, or past int4), the original's 404. */
export const userNotFound = (): never => {
  throw notFound(MESSAGES.user.notFound);
};
