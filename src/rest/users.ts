import { MESSAGES } from '../errors/messages.ts';
import { message } from './messages.ts';
import type { Wire } from './wire.ts';

/**
 * What only the wire has of users: the original answers its changes with a message where the
 * graph answers the user as changed (or its user errors, which the REST row answers as its 4xx).
 */

/** How the user rows' `:id` reads in the OpenAPI document. */
export const USER_ID = 'The user\'s id.';

export const USER_DELETED: Wire = message(MESSAGES.user.deleted);
export const USER_DISABLED: Wire = message(MESSAGES.user.disabled);
export const USER_ENABLED: Wire = message(MESSAGES.user.enabled);
