import { orgMember, orgRole } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import { listTeamMembers, teamsByIds, type Team, type TeamActor, type TeamMember } from '../../../services/teams.ts';
import { builder } from '../../builder.ts';
import { orgActors, SEES } from '../../graph-access.ts';
import { encodeNodeId, isRowId, nodeKey } from '../../node-ids.ts';
import { orgById } from '../organization/loaders.ts';
import { teamById, teamsOfOrg } from './loaders.ts';
import { pageOf } from '../../paging.ts';
import { connection } from '../connections.ts';
import { databaseId } from '../payloads.ts';
import { contains, pageIf } from '../connections.ts';
import { OrganizationType } from '../organization/node.ts';
import { teamIdsOfUser } from '../user/loaders.ts';
import { User } from '../user/node.ts';
import { avatarOf, USERS_READ } from '../user/profile.ts';

/**
 * A team: its one type in the graph, its members, and how the org and its users lead to it.
 * Every member of the org passes the gate of the fields on a team; what it may do with a given
 * team (org Admin, team Admin, member) depends on the data and is decided by the service.
 */
export const TEAM_ACCESS = {
  read: orgMember('teams:read'),
  create: orgRole('Admin', 'teams:create'),
  write: orgMember('teams:write'),
  delete: orgMember('teams:delete'),
  membersRead: orgMember('teams.permissions:read'),
  membersWrite: orgMember('teams.permissions:write'),
  /** `GET /api/users/:id/teams`, with the other `/api/users` rows' rule. */
  ofUser: USERS_READ,
};

export const actorOf = (ctx: RequestContext): TeamActor => ({ orgId: ctx.orgId, orgRole: ctx.caller.orgRole, userId: ctx.caller.userId, isUser: ctx.caller.kind === 'user' });

export const TeamMemberType = builder.objectRef<TeamMember>('TeamMember').implement({
  description: 'A user\'s membership of a team.',
  fields: (t) => ({
    orgId: t.exposeInt('orgId', { description: 'The team\'s org.' }),
    teamId: t.exposeInt('teamId', { description: 'The team\'s numeric id.' }),
    teamUID: t.exposeString('teamUid', { description: 'The team\'s uid.' }),
    userId: t.exposeInt('userId', { description: 'The user\'s numeric id.' }),
    userUID: t.exposeString('userUid', { description: 'The user\'s uid.' }),
    auth_module: t.string({ description: 'Always empty: no external authentication here.', resolve: () => '' }),
    email: t.exposeString('email', { description: 'The user\'s e-mail.' }),
    name: t.exposeString('name', { description: 'The user\'s display name.' }),
    login: t.exposeString('login', { description: 'The user\'s login.' }),
    avatarUrl: t.string({ description: 'Path of the user\'s avatar image.', resolve: (m, _args, ctx) => avatarOf(ctx, m.email) }),
    labels: t.stringList({ description: 'Always empty.', resolve: () => [] }),
    permission: t.exposeInt('permission', { description: '0 Member, 4 Admin.' }),
    organizationMemberId: t.id({
      nullable: true,
      description: 'The global id of the user\'s membership of the team\'s org (`OrganizationMember.id`), which the team member mutations take as `userId`; null for a member of the team who is not in its org (`User.id` names it then).',
      resolve: (m) => (m.orgMember ? encodeNodeId('OrganizationMember', `${m.orgId}:${m.userId}`) : null),
    }),
    isOrganizationMember: t.exposeBoolean('orgMember', {
      description: 'Whether the user is a member of the team\'s org too. A team may hold users of other orgs (as the original allows); the membership gives them nothing in the team\'s org until they join it.',
    }),
  }),
});

export const TeamType = builder.node(builder.objectRef<Team>('Team'), {
  description: 'A group of an org\'s members, to which data source permissions can be granted. Seen by the org\'s Admins, and by its own members (teams:read).',
  // Its fields' rules apply in the team's org.
  extensions: { orgOf: (team: Team) => team.orgId },
  id: nodeKey((team) => team.id),
  loadMany: (keys, ctx) => Promise.all(keys.map((key) => teamById(ctx).load(Number(key)))),
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The numeric id REST paths take (`/api/teams/:teamId`).' }),
    uid: t.exposeString('uid', { description: 'Stable string identifier, assigned by the server.' }),
    orgId: t.exposeInt('orgId', { description: 'The numeric id of the org it belongs to (`organization` is the org itself).' }),
    name: t.exposeString('name', { description: 'Unique in the org, case-insensitively.' }),
    email: t.exposeString('email', { description: 'The team\'s e-mail, possibly empty.' }),
    avatarUrl: t.string({ description: 'From the e-mail, or the name when there is none.', resolve: (team, _args, ctx) => avatarOf(ctx, team.email || team.name) }),
    memberCount: t.exposeInt('memberCount', { description: 'How many users belong to it.' }),
    permission: t.exposeInt('permission', { description: 'The caller\'s own member permission: 0 Member (or none), 4 Admin.' }),
    organization: t.field({ type: OrganizationType, nullable: true, description: 'The org it belongs to.', resolve: (team, _args, ctx) => orgById(ctx).load(team.orgId) }),
    members: t.field({
      type: [TeamMemberType],
      description: 'Its members by login (users; a service account member counts in `memberCount` only). The org\'s Admins and the team\'s Admins: org members of any role (`None` included) pass the gate (teams.permissions:read), then the service decides.',
      extensions: { access: TEAM_ACCESS.membersRead },
      resolve: async (team, _args, ctx) => {
        const [actor] = await orgActors(ctx, [team.orgId]);
        return listTeamMembers(ctx.em, actor ?? { orgId: team.orgId, orgRole: null, userId: ctx.caller.userId }, team.id);
      },
    }),
  }),
});

const TeamConnection = connection('TeamConnection', TeamType, 'teams');

builder.objectFields(OrganizationType, (t) => ({
  teams: t.connection({
    type: TeamType,
    nullable: true,
    description: 'Its teams by name (case-insensitively): all of them for its Admins, the teams they belong to for other members (teams:read); null for anyone else.',
    args: { query: t.arg.string({ required: false, description: 'Only teams whose name contains it, in any case.' }) },
    resolve: (org, args, ctx) => pageIf(SEES.teams(ctx, org.id), 'Organization.teams', () => teamsOfOrg(ctx).load(org.id), args,
      (team) => !args.query || contains(team.name, args.query)),
  }, TeamConnection),
  team: t.field({
    type: TeamType,
    nullable: true,
    description: 'One of its teams by numeric id (`/api/teams/:teamId`); null when it has none of that id, or the caller may not see it: its Admins see every team, other members (any role, `None` included) those they belong to (teams:read).',
    extensions: { access: TEAM_ACCESS.read },
    args: { databaseId: t.arg.int({ required: true, description: 'The team\'s numeric id.' }) },
    resolve: async (org, { databaseId }, ctx) => {
      if (!isRowId(databaseId)) return null;
      const [team] = await teamsByIds(ctx.em, [databaseId], await orgActors(ctx, [org.id]));
      return team ?? null;
    },
  }),
}));

builder.objectFields(User, (t) => ({
  teams: t.connection({
    type: TeamType,
    description: 'The teams it belongs to, in every org, by name (case-insensitively); each shown only to whoever may see that team (`GET /api/users/:id/teams` lists those of the org the request acts in). '
      + 'A team of an org the user is not in counts too (the original allows such members); it gives the user nothing there.',
    args: { organizationId: t.arg.id({ required: false, description: 'Only the teams of this org (`Organization.id`).' }) },
    resolve: async (user, args, ctx) => {
      const orgId = args.organizationId == null ? undefined : databaseId(args.organizationId, 'Organization');
      const ids = await teamIdsOfUser(ctx).load(user.id);
      const teams = (await teamById(ctx).loadMany(ids))
        .filter((team): team is Team => team !== null && !(team instanceof Error) && (orgId === undefined || team.orgId === orgId));
      teams.sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()) || a.id - b.id);
      return pageOf('User.teams', teams, args, ctx.rest);
    },
  }, TeamConnection),
}));
