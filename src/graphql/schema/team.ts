import { builder } from '../builder.ts';
import { encodeNodeId } from '../node-ids.ts';
import { isServerAdmin, orgMember, orgRole, serverAdminFor, signedInUser } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { MESSAGES } from '../../errors/messages.ts';
import {
  addTeamMember, createTeam, deleteTeam, getTeam, listTeamMembers, removeTeamMember, searchTeams, setTeamMemberships,
  listTeamsOfOrg, teamsOfUser, updateTeam, updateTeamMember, type Team, type TeamActor, type TeamMember,
} from '../../services/teams.ts';
import { MessageType } from './message.ts';
import { OrganizationType } from './organization.ts';
import { avatarOf } from './user/profile.ts';

/**
 * Who may call each root field; REST rows running these fields declare the same rules. Every
 * member of the org passes the gate; what it may do with a given team (org Admin, team Admin,
 * member) depends on the data and is decided by the service.
 */
export const TEAM_ACCESS = {
  read: orgMember('teams:read'),
  create: orgRole('Admin', 'teams:create'),
  write: orgMember('teams:write'),
  delete: orgMember('teams:delete'),
  membersRead: orgMember('teams.permissions:read'),
  membersWrite: orgMember('teams.permissions:write'),
  mine: signedInUser,
  /** `GET /api/users/:id/teams`, with the other `/api/users` rows' rule. */
  ofUser: serverAdminFor('users:read'),
};

export const actorOf = (ctx: RequestContext): TeamActor => ({ orgId: ctx.orgId, orgRole: ctx.caller.orgRole, userId: ctx.caller.userId, isUser: ctx.caller.kind === 'user' });

export const TeamType = builder.objectRef<Team>('Team').implement({
  description: 'A group of an org\'s members, to which data source permissions can be granted.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The team\'s id (`/api/teams/:teamId`).' }),
    uid: t.exposeString('uid', { description: 'Stable string identifier, assigned by the server.' }),
    orgId: t.exposeInt('orgId', { description: 'The org it belongs to.' }),
    name: t.exposeString('name', { description: 'Unique in the org, case-insensitively.' }),
    email: t.exposeString('email', { description: 'The team\'s e-mail, possibly empty.' }),
    avatarUrl: t.string({ description: 'From the e-mail, or the name when there is none.', resolve: (team, _args, ctx) => avatarOf(ctx, team.email || team.name) }),
    memberCount: t.exposeInt('memberCount', { description: 'How many users belong to it.' }),
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
    orgId: t.exposeInt('orgId', { description: 'The team\'s org.' }),
    teamId: t.exposeInt('teamId', { description: 'The team\'s id.' }),
    teamUID: t.exposeString('teamUid', { description: 'The team\'s uid.' }),
    userId: t.exposeInt('userId', { description: 'The user\'s id.' }),
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

const TeamSearchType = builder.objectRef<Awaited<ReturnType<typeof searchTeams>>>('TeamSearch').implement({
  description: 'A page of teams with the total of all pages.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount', { description: 'Teams matching, on every page.' }),
    teams: t.field({ type: [TeamType], description: 'This page\'s teams, by name.', resolve: (r) => r.teams }),
    page: t.exposeInt('page', { description: 'The page, from 1.' }),
    perPage: t.exposeInt('perPage', { description: 'The page size.' }),
  }),
});

const TeamCreation = builder.objectRef<Team>('TeamCreation').implement({
  description: 'Result of creating a team.',
  fields: (t) => ({
    message: t.string({ description: 'Always `Team created`.', resolve: () => MESSAGES.team.created }),
    teamId: t.exposeInt('id', { description: 'The new team\'s id.' }),
    uid: t.exposeString('uid', { description: 'Its uid.' }),
    team: t.field({ type: TeamType, description: 'The team as stored.', resolve: (team) => team }),
  }),
});

builder.objectField(OrganizationType, 'teams', (t) => t.field({
  type: [TeamType],
  description: 'The org\'s teams the caller may read: all of them for its Admins (and server admins), otherwise those it belongs to.',
  resolve: (org, _args, ctx) => {
    const caller = ctx.caller;
    if (org.id === caller.orgId) return listTeamsOfOrg(ctx.em, actorOf(ctx));
    return isServerAdmin(caller) ? listTeamsOfOrg(ctx.em, { orgId: org.id, orgRole: 'Admin', userId: caller.userId }) : [];
  },
}));

const { read, create, write, delete: remove, membersRead, membersWrite, mine } = TEAM_ACCESS;
const message = (text: string) => () => ({ message: text });

const teamIdArg = 'The team\'s id.';
const userIdArg = 'The user\'s id.';
const permissionArg = 'The member\'s permission in the team: 0 Member (the default), 4 Admin.';
/** How the rule reads for the rows on a team: every member passes the gate, the service decides. */
const onTeam = (action: string) => `Org members of any role (\`None\` included) pass the gate (${action}); then org Admins and the team's Admins.`;

builder.queryFields((t) => ({
  teamSearch: t.field({
    deprecationReason: 'Use `viewer.currentOrganization.teams`, a connection.',
    type: TeamSearchType,
    description: 'The org\'s teams by name, a page at a time, as `GET /api/teams/search`: all for org Admins, else the caller\'s own. Org members of any role (`None` included) (teams:read).',
    args: {
      query: t.arg.string({ description: 'Only teams whose name contains it, in any case.' }),
      name: t.arg.string({ description: 'Only the team of exactly this name.' }),
      page: t.arg.int({ description: 'From 1 (the default).' }),
      perPage: t.arg.int({ description: 'Page size; 0 or absent means 1000.' }),
    },
    extensions: { access: read },
    resolve: (_root, args, ctx) => searchTeams(ctx.em, actorOf(ctx), args),
  }),
  team: t.field({
    deprecationReason: 'Use `node(id:)` with a `TeamNode` id.',
    type: TeamType,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }) },
    description: 'A team of the org by id, as `GET /api/teams/:teamId`. Org members of any role (`None` included) pass the gate (teams:read); then org Admins and the team\'s members.',
    extensions: { access: read },
    resolve: (_root, { teamId }, ctx) => getTeam(ctx.em, actorOf(ctx), teamId),
  }),
  teamMembers: t.field({
    deprecationReason: 'Use `members` of a `TeamNode`.',
    type: [TeamMemberType],
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }) },
    description: `A team's members by login, as \`GET /api/teams/:teamId/members\`. ${onTeam('teams.permissions:read')}`,
    extensions: { access: membersRead },
    resolve: (_root, { teamId }, ctx) => listTeamMembers(ctx.em, actorOf(ctx), teamId),
  }),
  viewerTeams: t.field({
    type: [TeamType],
    description: 'The signed-in user\'s teams in the org it acts in, as `GET /api/user/teams`. Signed-in users (Basic credentials; tokens are refused).',
    extensions: { access: mine },
    resolve: (_root, _args, ctx) => teamsOfUser(ctx.em, ctx.orgId, ctx.caller.userId!),
  }),
  userTeams: t.field({
    deprecationReason: 'Use `teams` of a `User`, a connection over every org.',
    type: [TeamType],
    args: { id: t.arg.int({ required: true, description: 'The user\'s id.' }) },
    description: 'A user\'s teams in the org the request acts in, by name, as `GET /api/users/:id/teams` (an unknown user has none). Server admins only (users:read).',
    extensions: { access: TEAM_ACCESS.ofUser },
    resolve: (_root, { id }, ctx) => teamsOfUser(ctx.em, ctx.orgId, id),
  }),
}));

builder.mutationFields((t) => ({
  createTeam: t.field({
    deprecationReason: 'Use `teamCreate`: its payload carries the node and `userErrors`.',
    type: TeamCreation,
    args: { name: t.arg.string({ description: 'Unique in the org, case-insensitively.' }), email: t.arg.string({ description: 'The team\'s e-mail.' }) },
    description: 'Creates a team in the org the request acts in, as `POST /api/teams`. Org Admins (teams:create).',
    extensions: { access: create },
    resolve: (_root, args, ctx) => createTeam(ctx.em, actorOf(ctx), args),
  }),
  updateTeam: t.field({
    deprecationReason: 'Use `teamUpdate` with a `TeamNode` id.',
    type: MessageType,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }), name: t.arg.string({ description: 'Unique in the org, case-insensitively.' }), email: t.arg.string({ description: 'The team\'s e-mail.' }) },
    description: `Renames a team and sets its e-mail, as \`PUT /api/teams/:teamId\`. ${onTeam('teams:write')}`,
    extensions: { access: write },
    resolve: async (_root, { teamId, ...input }, ctx) => updateTeam(ctx.em, actorOf(ctx), teamId, input).then(message(MESSAGES.team.updated)),
  }),
  deleteTeam: t.field({
    deprecationReason: 'Use `teamDelete` with a `TeamNode` id.',
    type: MessageType,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }) },
    description: `Deletes a team, as \`DELETE /api/teams/:teamId\`. ${onTeam('teams:delete')}`,
    extensions: { access: remove },
    resolve: (_root, { teamId }, ctx) => deleteTeam(ctx.em, actorOf(ctx), teamId).then(message(MESSAGES.team.deleted)),
  }),
  addTeamMember: t.field({
    deprecationReason: 'Use `teamMemberAdd` with a `TeamNode` id.',
    type: MessageType,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }), userId: t.arg.int({ description: 'An existing user, of any org.' }), permission: t.arg.int({ description: permissionArg }) },
    description: `Adds a user (of any org) to a team, as \`POST /api/teams/:teamId/members\`. ${onTeam('teams.permissions:write')}`,
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, userId, permission }, ctx) => addTeamMember(ctx.em, actorOf(ctx), teamId, userId, permission).then(message(MESSAGES.team.memberAdded)),
  }),
  updateTeamMember: t.field({
    deprecationReason: 'Use `teamMemberUpdate` with a `TeamNode` id.',
    type: MessageType,
    description: `A member's permission in the team: 0 Member, 4 Admin, as \`PUT /api/teams/:teamId/members/:userId\`. ${onTeam('teams.permissions:write')}`,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }), userId: t.arg.int({ required: true, description: userIdArg }), permission: t.arg.int({ description: permissionArg }) },
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, userId, permission }, ctx) => updateTeamMember(ctx.em, actorOf(ctx), teamId, userId, permission).then(message(MESSAGES.team.memberUpdated)),
  }),
  removeTeamMember: t.field({
    deprecationReason: 'Use `teamMemberRemove` with a `TeamNode` id.',
    type: MessageType,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }), userId: t.arg.int({ required: true, description: userIdArg }) },
    description: `Removes a member from a team, as \`DELETE /api/teams/:teamId/members/:userId\`. ${onTeam('teams.permissions:write')}`,
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, userId }, ctx) => removeTeamMember(ctx.em, actorOf(ctx), teamId, userId).then(message(MESSAGES.team.memberRemoved)),
  }),
  setTeamMemberships: t.field({
    deprecationReason: 'Use `teamMembersSet` with a `TeamNode` id.',
    type: MessageType,
    description: `The team's members become exactly these (e-mails or logins); Admin wins for one in both lists. As \`PUT /api/teams/:teamId/members\`. ${onTeam('teams.permissions:write')}`,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }), members: t.arg.stringList({ description: 'Members (permission 0).' }), admins: t.arg.stringList({ description: 'Admins of the team (permission 4).' }) },
    extensions: { access: membersWrite },
    resolve: (_root, { teamId, members, admins }, ctx) => setTeamMemberships(ctx.em, actorOf(ctx), teamId, { members, admins }).then(message(MESSAGES.team.membershipsUpdated)),
  }),
}));
