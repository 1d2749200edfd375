import { isServerAdmin } from '../../../auth/access.ts';
import { listTeamsOfOrg, searchTeams, teamsOfUser } from '../../../services/teams.ts';
import { builder } from '../../builder.ts';
import { actorOf, TEAM_ACCESS, TeamType } from './node.ts';

/** The root fields of lists REST pages its own way (`page` and `perPage`, a total), and the lists of the REST-shaped user. */

const TeamSearchType = builder.objectRef<Awaited<ReturnType<typeof searchTeams>>>('TeamSearch').implement({
  description: 'A page of teams with the total of all pages.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount', { description: 'Teams matching, on every page.' }),
    teams: t.field({ type: [TeamType], description: 'This page\'s teams, by name.', resolve: (r) => r.teams }),
    page: t.exposeInt('page', { description: 'The page, from 1.' }),
    perPage: t.exposeInt('perPage', { description: 'The page size.' }),
  }),
});

builder.queryFields((t) => ({
  teamSearch: t.field({
    type: TeamSearchType,
    description: 'The org\'s teams by name, a page at a time, as `GET /api/teams/search`: all for org Admins, else the caller\'s own. Org members of any role (`None` included) (teams:read).',
    args: {
      query: t.arg.string({ description: 'Only teams whose name contains it, in any case.' }),
      name: t.arg.string({ description: 'Only the team of exactly this name.' }),
      page: t.arg.int({ description: 'From 1 (the default).' }),
      perPage: t.arg.int({ description: 'Page size; 0 or absent means 1000.' }),
    },
    extensions: { access: TEAM_ACCESS.read, restOnly: true },
    resolve: (_root, args, ctx) => searchTeams(ctx.em, actorOf(ctx), args),
  }),
  userTeams: t.field({
    type: [TeamType],
    args: { id: t.arg.int({ required: true, description: 'The user\'s id.' }) },
    description: 'A user\'s teams in the org the request acts in, by name, as `GET /api/users/:id/teams` (an unknown user has none). Server admins only (users:read).',
    // Each team's `permission` is the listed user's own there (the graph's `Team.permission` is the caller's).
    extensions: { access: TEAM_ACCESS.ofUser, restOnly: true },
    resolve: (_root, { id }, ctx) => teamsOfUser(ctx.em, ctx.orgId, id),
  }),
}));
