import { builder } from '../builder.ts';
import { encodeNodeId } from '../node-ids.ts';
import { isServerAdmin, orgRole, signedInUser } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { MESSAGES } from '../../errors/messages.ts';
import {
  addTeamMember, createTeam, deleteTeam, getTeam, listTeamMembers, removeTeamMember, searchTeams, setTeamMemberships,
  teamsOfOrg, teamsOfUser, updateTeam, updateTeamMember, type Team, type TeamActor, type TeamMember,
} from '../../services/teams.ts';
import { MessageType } from './message.ts';
import { OrganizationType } from './organization.ts';
import { avatarOf } from './user-profile.ts';

/**
 * Who may call each root field; REST rows running these fields declare the same rules. Every
 * member of the org passes the gate; what it may do with a given team (org Admin, team Admin,
 * member) depends on the data and is decided by the service.
 */
export const TEAM_ACCESS = {
  read: orgRole('Viewer', 'teams:read'),
  create: orgRole('Admin', 'teams:create'),
  write: orgRole('Viewer', 'teams:write'),
  delete: orgRole('Viewer', 'teams:delete'),
  membersRead: orgRole('Viewer', 'teams.permissions:read'),
  membersWrite: orgRole('Viewer', 'teams.permissions:write'),
  mine: signedInUser,
};

export const actorOf = (ctx: RequestContext): TeamActor => ({ orgId: ctx.orgId, orgRole: ctx.caller.orgRole, userId: ctx.caller.userId });

export const TeamType = builder.objectRef<Team>('Team').implement({
  description: 'A group of an org\'s members, to which data source permissions can be granted.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    uid: t.exposeString('uid', { description: 'Stable string identifier, assigned by the server.' }),
    orgId: t.exposeInt('orgId'),
    name: t.exposeString('name', { description: 'Unique in the org, case-insensitively.' }),
    email: t.exposeString('email'),
    avatarUrl: t.string({ description: 'From the e-mail, or the name when there is none.', resolve: (team, _args, ctx) => avatarOf(ctx, team.email || team.name) }),
    memberCount: t.exposeInt('memberCount'),
    permission: t.exposeInt('permission', { description: 'The caller\'s own member permission: 0 Member (or none), 4 Admin.' }),
    members: t.field({
      type: [TeamMemberType],
      description: 'For the org\'s Admins and the team\'s Admins (`teams.permissions:read`).',
      resolve: (team, _args, ctx) => listTeamMembers(ctx.em, { ...actorOf(ctx), orgId: team.orgId }, team.id),
    }),
  }),
});

export const TeamMemberType = builder.objectRef<TeamMember>('TeamMember').implement({
  description: 'A user\'s membership of a team.',
  fields: (t) => ({
    orgId: t.exposeInt('orgId'),
    teamId: t.exposeInt('teamId'),
    teamUID: t.exposeString('teamUid'),
    userId: t.exposeInt('userId'),
    userUID: t.exposeString('userUid'),
    auth_module: t.string({ description: 'Always empty: no external authentication here.', resolve: () => '' }),
    email: t.exposeString('email'),
    name: t.exposeString('name'),
    login: t.exposeString('login'),
    avatarUrl: t.string({ resolve: (m, _args, ctx) => avatarOf(ctx, m.email) }),
    labels: t.stringList({ resolve: () => [] }),
    permission: t.exposeInt('permission', { description: '0 Member, 4 Admin.' }),
    organizationMemberId: t.id({
      description: 'The global id of the user\'s membership of the org (`OrganizationMember.id`), which the team member mutations take as `userId`.',
      resolve: (m) => encodeNodeId('OrganizationMember', `${m.orgId}:${m.userId}`),
    }),
  }),
});

const TeamSearchType = builder.objectRef<Awaited<ReturnType<typeof searchTeams>>>('TeamSearch').implement({
  description: 'A page of teams with the total of all pages.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    teams: t.field({ type: [TeamType], resolve: (r) => r.teams }),
    page: t.exposeInt('page'),
    perPage: t.exposeInt('perPage'),
  }),
});

const TeamCreation = builder.objectRef<Team>('TeamCreation').implement({
  description: 'Result of creating a team.',
  fields: (t) => ({
    message: t.string({ resolve: () => MESSAGES.team.created }),
    teamId: t.exposeInt('id'),
    uid: t.exposeString('uid'),
    team: t.field({ type: TeamType, resolve: (team) => team }),
  }),
});

builder.objectField(OrganizationType, 'teams', (t) => t.field({
  type: [TeamType],
  description: 'The org\'s teams the caller may read: all of them for its Admins (and server admins), otherwise those it belongs to.',
  resolve: (org, _args, ctx) => {
    const caller = ctx.caller;
    if (org.id === caller.orgId) return teamsOfOrg(ctx.em, actorOf(ctx));
    return isServerAdmin(caller) ? teamsOfOrg(ctx.em, { orgId: org.id, orgRole: 'Admin', userId: caller.userId }) : [];
  },
}));

const { read, create, write, delete: remove, membersRead, membersWrite, mine } = TEAM_ACCESS;
const message = (text: string) => () => ({ message: text });

builder.queryFields((t) => ({
  teamSearch: t.field({
    type: TeamSearchType,
    description: 'The org\'s teams by name, a page at a time: all for org Admins, else the caller\'s own.',
    args: { query: t.arg.string(), name: t.arg.string(), page: t.arg.int(), perPage: t.arg.int() },
    extensions: { access: read },
    resolve: (_root, args, ctx) => searchTeams(ctx.em, actorOf(ctx), args),
  }),
  team: t.field({
    type: TeamType,
    args: { teamId: t.arg.int({ required: true }) },
    extensions: { access: read },
    resolve: (_root, { teamId }, ctx) => getTeam(ctx.em, actorOf(ctx), teamId),
  }),
  teamMembers: t.field({
    type: [TeamMemberType],
    args: { teamId: t.arg.int({ required: true }) },
    extensions: { access: membersRead },
    resolve: (_root, { teamId }, ctx) => listTeamMembers(ctx.em, actorOf(ctx), teamId),
  }),
  viewerTeams: t.field({
    type: [TeamType],
    description: 'The signed-in user\'s teams in the org it acts in.',
    extensions: { access: mine },
    resolve: (_root, _args, ctx) => teamsOfUser(ctx.em, ctx.orgId, ctx.caller.userId!),
  }),
}));

builder.mutationFields((t) => ({
  createTeam: t.field({
    type: TeamCreation,
    args: { name: t.arg.string(), email: t.arg.string() },
    extensions: { access: create },
    resolve: (_root, args, ctx) => createTeam(ctx.em, actorOf(ctx), args),
  }),
  updateTeam: t.field({
    type: MessageType,
    args: { teamId: t.arg.int({ required: true }), name: t.arg.string(), email: t.arg.string() },
    extensions: { access: write },
    resolve: async (_root, { teamId, ...input }, ctx) => updateTeam(ctx.em, actorOf(ctx), teamId, input).then(message(MESSAGES.team.updated)),
  }),
  deleteTeam: t.field({
    type: MessageType,
    args: { teamId: t.arg.int({ required: true }) },
    extensions: { access: remove },
    resolve: (_root, { teamId }, ctx) => deleteTeam(ctx.em, actorOf(ctx), teamId).then(message(MESSAGES.team.deleted)),
  }),
  addTeamMember: t.field({
    type: MessageType,
    args: { teamId: t.arg.int({ required: true }), userId: t.arg.int(), permission: t.arg.int() },
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, userId, permission }, ctx) => addTeamMember(ctx.em, actorOf(ctx), teamId, userId, permission).then(message(MESSAGES.team.memberAdded)),
  }),
  updateTeamMember: t.field({
    type: MessageType,
    description: 'A member\'s permission in the team: 0 Member, 4 Admin.',
    args: { teamId: t.arg.int({ required: true }), userId: t.arg.int({ required: true }), permission: t.arg.int() },
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, userId, permission }, ctx) => updateTeamMember(ctx.em, actorOf(ctx), teamId, userId, permission).then(message(MESSAGES.team.memberUpdated)),
  }),
  removeTeamMember: t.field({
    type: MessageType,
    args: { teamId: t.arg.int({ required: true }), userId: t.arg.int({ required: true }) },
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, userId }, ctx) => removeTeamMember(ctx.em, actorOf(ctx), teamId, userId).then(message(MESSAGES.team.memberRemoved)),
  }),
  setTeamMemberships: t.field({
    type: MessageType,
    description: 'The team\'s members become exactly these (e-mails or logins); Admin wins for one in both lists.',
    args: { teamId: t.arg.int({ required: true }), members: t.arg.stringList(), admins: t.arg.stringList() },
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, members, admins }, ctx) => setTeamMemberships(ctx.em, actorOf(ctx), teamId, { members, admins }).then(message(MESSAGES.team.membershipsUpdated)),
  }),
}));
