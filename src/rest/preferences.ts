import { notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { rowId } from '../graphql/schema/payloads.ts';
import { notValidIdentity } from '../graphql/schema/preferences.ts';
import { actorOf } from '../graphql/schema/team/node.ts';
import { teamPreferencesAccess } from '../services/teams.ts';
import type { Missing } from './executor.ts';
import { message } from './messages.ts';
import type { Wire } from './wire.ts';

/**
 * What only the wire has of preferences: Go's `omitempty` on the answer, the message answering a
 * change, and what the rows answer where the graph has nothing to give (a legacy API key has no
 * viewer; the original looks no team up for an org Admin).
 */

export const PREFERENCES_UPDATED: Wire = message(MESSAGES.preferences.updated);

/** Go's `omitempty`: what is not set (null) is left out of the answer, at every depth; `{}` when nothing is. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value) || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
}

/** A legacy API key is no viewer: the original's 401 for its preferences. */
export const viewerPreferencesRefusal: Missing = () => {
  throw notValidIdentity();
};

/**
 * Where the graph found no team of the org (or its mutation none to change): the original looks no
 * team up, so an org Admin gets `answer` (shaped as the row's) for an id the org has not, and nothing is kept; anyone
 * else gets the team rule's refusal (403), or the mutation's own user error.
 */
export function teamPreferencesMissing(need: 'read' | 'admin', answer: unknown): Missing {
  return async (ctx, variables) => {
    const teamId = typeof variables.teamId === 'number' ? variables.teamId : rowId(String(variables.teamId), 'Team');
    if (!(await teamPreferencesAccess(ctx.em, actorOf(ctx), teamId, need))) return answer;
    throw ctx.userError ?? notFound(MESSAGES.team.notFound);
  };
}
