import { badRequest, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { DEFAULT_MAX_CHARS } from '../graphql/input-limits.ts';
import { message } from './messages.ts';
import { bodyId, type LegacyInput } from './variables.ts';
import { constant, from, list, object, type JsonSchema, type Wire } from './wire.ts';

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

/** `POST /api/admin/users` answers the new user's id beside its message. */
export const USER_CREATED: Wire = object({ id: from('user.id', undefined, 'The new user\'s id.'), message: constant(MESSAGES.user.created, { type: 'string', description: 'Always `User created`.' }) });

/** The body of `POST /api/admin/users`: the org to join by its numeric id (`orgId`), where the graph takes the org's global id. */
export const USER_CREATE_BODY: LegacyInput = {
  fields: { orgId: { type: 'integer', format: 'int32', nullable: true } },
  into(input) {
    // The REST body names the org by `orgId` only: a key the graph's input has is not REST's.
    delete input.organizationId;
    withinBound(input, 'orgId');
    const orgId = bodyId('Organization', input.orgId);
    delete input.orgId;
    if (orgId !== null && orgId !== undefined) input.organizationId = orgId;
  },
};

/** The same body as the OpenAPI document has always named it. */
export const USER_CREATE_SCHEMA: JsonSchema = {
  'x-component': ['AdminCreateUserInput', {
    type: 'object',
    required: ['password'],
    properties: {
      email: { type: 'string', nullable: true, description: 'E-mail address; defaults to the login. Unique, case-insensitively.' },
      login: { type: 'string', nullable: true, description: 'Login name (trimmed). Unique, case-insensitively, also against e-mails.' },
      name: { type: 'string', nullable: true, description: 'Display name.' },
      orgId: { type: 'integer', format: 'int32', nullable: true, description: 'The org to join; defaults to `[users] auto_assign_org_id`.' },
      password: { type: 'string', description: 'At least 4 characters; stored only as an argon2id hash.' },
    },
    description: 'A new global user. Either `login` or `email` is needed; the login defaults to the e-mail.',
  }],
};

/** The bound the graph's String inputs have, named as the key REST took: a legacy key is held to it as the variable it was. */
function withinBound(values: Record<string, unknown>, key: string): void {
  const value = values[key];
  if (typeof value === 'string' && value.length > DEFAULT_MAX_CHARS) throw badRequest(MESSAGES.http.tooLong(key, DEFAULT_MAX_CHARS));
}

/** Drops the keys a body sets to null, so that the operation's defaults apply as to absent keys. */
function withoutNull(values: Record<string, unknown>, ...keys: string[]): void {
  for (const key of keys) if (values[key] === null) delete values[key];
}

/** `PUT /api/user/password`: both passwords default to empty (a wrong old password, 401); `confirmNew` is read and ignored, as by the original. */
export const PASSWORD_CHANGE_BODY: LegacyInput = {
  fields: { confirmNew: { type: 'string', description: 'Accepted and ignored, as by the original server.' } },
  into(values) {
    withinBound(values, 'confirmNew');
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
    withinBound(values, 'isGrafanaAdmin');
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

/** The original's fields about external providers, which this server has none of: constants of the wire, not of the graph. */
const NOT_SYNCED = constant(false, { type: 'boolean', description: 'Always false (no external provider).' });

/** A user as the original's reads answer it (`GET /api/users/:id`, `GET /api/user`), over the `UserFields` fragment. */
export const USER_PROFILE: Wire = object({
  id: from('id', undefined, 'The user\'s id.'), uid: 'uid', email: 'email', name: 'name', login: 'login', theme: 'theme', orgId: 'orgId',
  isGrafanaAdmin: from('isGrafanaAdmin', undefined, 'Holds the server-admin permission (`isGrafanaAdmin` in the REST API).'), isDisabled: 'isDisabled',
  isExternal: constant(false, { type: 'boolean', description: 'Always false: users are managed here, not synced from an external provider.' }),
  isExternallySynced: NOT_SYNCED, isGrafanaAdminExternallySynced: NOT_SYNCED,
  authLabels: constant([], { type: 'array', items: { type: 'string' }, description: 'External providers the user signs in with; always empty.' }),
  updatedAt: 'updatedAt', createdAt: 'createdAt', avatarUrl: 'avatarUrl',
}, { component: 'UserProfileFields', description: 'A user (never a service account) with its server-wide attributes.' });

/** Where the graph answers null for a user id (unknown, a service account's, or past int4), the original's 404. */
export const userNotFound = (): never => {
  throw notFound(MESSAGES.user.notFound);
};

/** A user's orgs as the original lists them, over the edges of the graph's `organizations` (the role on each edge). */
export const USER_ORGS: Wire = list(object({
  orgId: from('node.orgId', undefined, 'The org\'s id.'),
  name: from('node.name', undefined, 'The org\'s name.'),
  role: 'role',
}));

/** An id naming no user (or a service account's) has no orgs: the original answers an empty list. */
export const noOrgs = (): unknown[] => [];
