import { badRequest, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { message } from './messages.ts';
import type { LegacyInput } from './variables.ts';
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
export const USER_PASSWORD_CHANGED: Wire = message(MESSAGES.user.passwordChanged);
export const USER_PERMISSIONS_UPDATED: Wire = message(MESSAGES.user.permissionsUpdated);

/** Drops the keys a body sets to null, so that the operation's defaults apply as to absent keys. */
function withoutNull(values: Record<string, unknown>, ...keys: string[]): void {
  for (const key of keys) if (values[key] === null) delete values[key];
}

/** `PUT /api/user/password`: both passwords default to empty (a wrong old password, 401); `confirmNew` is read and ignored, as by the original. */
export const PASSWORD_CHANGE_BODY: LegacyInput = {
  fields: { confirmNew: { type: 'string', description: 'Accepted and ignored, as by the original server.' } },
  into(values) {
    delete values.confirmNew;
    withoutNull(values, 'oldPassword', 'newPassword');
  },
};
export const PASSWORD_CHANGE_PARAMS = { oldPassword: 'The current password; must match (401 otherwise).', newPassword: 'At least 4 characters.' };

/**
 * `PUT /api/admin/users/:id/permissions` takes the flag as `isServiceAdmin` or, from legacy clients,
 * `isGrafanaAdmin`. A body with neither is malformed: reading it as `false` would silently demote.
 */
export const USER_PERMISSIONS_BODY: LegacyInput = {
  fields: { isGrafanaAdmin: { type: 'boolean', description: 'The brand-named alias of `isServiceAdmin`, accepted for legacy clients.' } },
  into(values) {
    const legacy = values.isGrafanaAdmin;
    delete values.isGrafanaAdmin;
    // As a Boolean variable would: a value of another type is refused, wherever it is sent.
    if (legacy !== undefined && legacy !== null && typeof legacy !== 'boolean') throw badRequest();
    withoutNull(values, 'isServiceAdmin');
    values.isServiceAdmin ??= legacy ?? undefined;
    if (values.isServiceAdmin === undefined) throw badRequest();
  },
};
export const USER_PERMISSIONS_PARAMS = { isServiceAdmin: 'Grant (true) or revoke (false) the server-admin permission.' };

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
