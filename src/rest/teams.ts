import { MESSAGES } from '../errors/messages.ts';
import { actorOf } from '../graphql/schema/team/node.ts';
import { getTeam, listTeamMembers } from '../services/teams.ts';
import { serviceRefusal } from './executor.ts';
import { constant, from, goMap } from './wire.ts';

/**
 * What only the wire has of teams: the original's envelope around a new team, and what its rows
 * answer where the graph answers null (the service's own refusal: 404 for an org Admin, 403 for
 * anyone else).
 */

/** The answer to `POST /api/teams` (a Go map: keys sorted), over the mutation's payload. */
export const TEAM_CREATED = goMap({
  message: constant(MESSAGES.team.created, { type: 'string', description: 'Always `Team created`.' }),
  teamId: from('team.id', undefined, 'The new team\'s id.'),
  uid: from('team.uid', undefined, 'Its uid.'),
});

const teamIdOf = (variables: Record<string, unknown>) => variables.teamId as number;

/** Where the graph found no team of the org: the service's refusal of a read of it. */
export const teamRefusal = serviceRefusal((ctx, variables) => getTeam(ctx.em, actorOf(ctx), teamIdOf(variables)), MESSAGES.team.notFound);

/** Where the graph found no team of the org to list the members of: the service's refusal. */
export const teamMembersRefusal = serviceRefusal((ctx, variables) => listTeamMembers(ctx.em, actorOf(ctx), teamIdOf(variables)), MESSAGES.team.notFound);

/** What the OpenAPI document says of the numeric ids in a team's paths (the graph takes global ids). */
export const TEAM_PARAMS = { teamId: 'The team\'s id.' };
export const TEAM_MEMBER_PARAMS = { ...TEAM_PARAMS, userId: 'The member\'s user id.', permission: 'The member\'s permission in the team: 0 Member (the default), 4 Admin.' };
/** The body of a team's creation and update. */
export const TEAM_BODY = { name: 'Unique in the org, case-insensitively.', email: 'The team\'s e-mail.' };
/** The body of `PUT /api/teams/:teamId/members`. */
export const TEAM_MEMBERSHIPS_BODY = { members: 'Members (permission 0), by e-mail or login.', admins: 'Admins of the team (permission 4), by e-mail or login; Admin wins for one in both lists.' };

/** How the rule reads for the rows on a team: every member passes the gate, the service decides. */
export const onTeam = (action: string, who: 'members' | 'Admins') =>
  `Org members of any role (\`None\` included) pass the gate (${action}); then org Admins and the team's ${who}.`;
