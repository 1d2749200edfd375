import type { RequestContext } from '../../../context.ts';
import { CallerRefusal } from '../../../errors/domain.ts';
import {
  addTeamMember, createTeam, deleteTeam, listTeamMembers, removeTeamMember, setTeamMemberships, updateTeam, updateTeamMember,
  type Team, type TeamMember,
} from '../../../services/teams.ts';
import { builder } from '../../builder.ts';
import { decodeNodeId, keyNumbers } from '../../node-ids.ts';
import { teamById } from './loaders.ts';
import { deletePayload, mutate, nodePayload, remove, rowId, UserErrorType, type Payload } from '../payloads.ts';
import { actorOf, TEAM_ACCESS, TeamMemberType, TeamType } from './node.ts';

/**
 * Mutations of the teams of the org the request acts in and of their members, as the
 * `/api/teams` rows: every member of the org passes the gate of those on a team, and the service
 * tells org Admins, the team's Admins and others apart, as it does for REST.
 */

const TeamPayload = nodePayload('TeamPayload', 'team', TeamType, 'team');
const TeamDeletePayload = deletePayload('TeamDeletePayload', 'deletedTeamId', 'team');

const TeamMemberPayload = builder.objectRef<Payload<{ team: Team | null; member: TeamMember | null }>>('TeamMemberPayload').implement({
  description: 'The team and the membership as stored after the change, or why it did not change.',
  fields: (t) => ({
    team: t.field({ type: TeamType, nullable: true, description: 'The team (its `memberCount` and `members`); null when `userErrors` says why not.', resolve: (p) => p.team }),
    member: t.field({ type: TeamMemberType, nullable: true, description: 'The user\'s membership of the team; null when `userErrors` says why not.', resolve: (p) => p.member }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const TeamMembersPayload = nodePayload('TeamMembersPayload', 'team', TeamType, 'team, with its members,');

const TeamCreateInput = builder.inputType('TeamCreateInput', {
  description: 'A new team of the org the request acts in.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique in the org, case-insensitively.' }),
    email: t.string({ required: false, description: 'The team\'s e-mail.' }),
  }),
});

const TeamUpdateInput = builder.inputType('TeamUpdateInput', {
  description: 'A team\'s new attributes; both are written.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique in the org, case-insensitively.' }),
    email: t.string({ required: false, description: 'The team\'s e-mail; absent clears it.' }),
  }),
});

const permission = 'The member\'s permission in the team: 0 Member (the default), 4 Admin.';

const TeamMemberAddInput = builder.inputType('TeamMemberAddInput', {
  description: 'A user to add to a team: any existing user, of the team\'s org or another one (as the original allows).',
  fields: (t) => ({
    userId: t.id({ required: true, description: 'The user: its `User.id` (a user of any org), or its `OrganizationMember.id` in the org the request acts in (`TeamMember.organizationMemberId`).' }),
    permission: t.int({ required: false, description: permission }),
  }),
});

const TeamMemberUpdateInput = builder.inputType('TeamMemberUpdateInput', {
  description: 'A team member\'s new permission.',
  fields: (t) => ({ permission: t.int({ required: false, description: permission }) }),
});

const TeamMembersSetInput = builder.inputType('TeamMembersSetInput', {
  description: 'Who the team\'s members are to be, by e-mail or login; one in both lists is an Admin.',
  fields: (t) => ({
    members: t.stringList({ required: false, description: 'Members (permission 0).' }),
    admins: t.stringList({ required: false, description: 'Admins of the team (permission 4).' }),
  }),
});

const teamIdArg = 'The team\'s global id (`Team.id`), in the org the request acts in.';
const userIdArg = 'The member: its `User.id`, or its `OrganizationMember.id` in the org the request acts in (`TeamMember.organizationMemberId`).';

/** The user a user's or a membership's global id names; 0 (no user) for another type's id, or a membership of another org. */
function userOf(ctx: RequestContext, globalId: string | number): number {
  const { typename, id } = decodeNodeId(String(globalId));
  const [first = 0, second] = keyNumbers(id);
  const userId = typename === 'User' && second === undefined ? first
    : typename === 'OrganizationMember' && first === ctx.orgId && second !== undefined ? second : 0;
  return userId <= 2_147_483_647 ? userId : 0;
}

const readTeam = async (ctx: RequestContext, id: number) => ({ team: await teamById(ctx).load(id) });

async function readMembership(ctx: RequestContext, teamId: number, userId: number) {
  // A team Admin who has just made itself a Member may no longer list the members: done, but not shown.
  const members = listTeamMembers(ctx.em, actorOf(ctx), teamId).catch((error: unknown) => {
    if (error instanceof CallerRefusal) return [];
    throw error;
  });
  const [{ team }, list] = await Promise.all([readTeam(ctx, teamId), members]);
  return { team, member: list.find((m) => m.userId === userId) ?? null };
}

const teamChange = (ctx: RequestContext, teamId: number, change: () => Promise<unknown>) =>
  mutate(ctx, change, () => readTeam(ctx, teamId), { team: null });

builder.mutationFields((t) => ({
  teamCreate: t.field({
    type: TeamPayload,
    args: { input: t.arg({ type: TeamCreateInput, required: true, description: 'The team.' }) },
    description: 'Creates a team in the org the request acts in, as `POST /api/teams`. Org Admins (teams:create).',
    extensions: { access: TEAM_ACCESS.create },
    resolve: (_root, { input }, ctx) => mutate(ctx, () => createTeam(ctx.em, actorOf(ctx), input), (team) => readTeam(ctx, team.id), { team: null }),
  }),
  teamUpdate: t.field({
    type: TeamPayload,
    args: { id: t.arg.id({ required: true, description: teamIdArg }), input: t.arg({ type: TeamUpdateInput, required: true, description: 'What to write.' }) },
    description: 'Renames a team and sets its e-mail, as `PUT /api/teams/:teamId`. Org members of any role (`None` included) pass the gate (teams:write); then org Admins and the team\'s Admins.',
    extensions: { access: TEAM_ACCESS.write },
    resolve: (_root, { id, input }, ctx) => {
      const teamId = rowId(id, 'Team');
      return teamChange(ctx, teamId, () => updateTeam(ctx.em, actorOf(ctx), teamId, input));
    },
  }),
  teamDelete: t.field({
    type: TeamDeletePayload,
    args: { id: t.arg.id({ required: true, description: teamIdArg }) },
    description: 'Deletes a team with its memberships and data source permissions, as `DELETE /api/teams/:teamId`. Org members of any role (`None` included) pass the gate (teams:delete); then org Admins and the team\'s Admins.',
    extensions: { access: TEAM_ACCESS.delete },
    resolve: (_root, { id }, ctx) => {
      const teamId = rowId(id, 'Team');
      return remove(ctx, 'deletedTeamId', id, () => deleteTeam(ctx.em, actorOf(ctx), teamId));
    },
  }),
  teamMemberAdd: t.field({
    type: TeamMemberPayload,
    args: { teamId: t.arg.id({ required: true, description: teamIdArg }), input: t.arg({ type: TeamMemberAddInput, required: true, description: 'The member.' }) },
    description: 'Adds a user (of any org) to a team, as `POST /api/teams/:teamId/members`. Org members of any role (`None` included) pass the gate (teams.permissions:write); then org Admins and the team\'s Admins.',
    extensions: { access: TEAM_ACCESS.membersWrite },
    resolve: (_root, { teamId: id, input }, ctx) => {
      const teamId = rowId(id, 'Team');
      const userId = userOf(ctx, input.userId);
      return mutate(ctx, () => addTeamMember(ctx.em, actorOf(ctx), teamId, userId, input.permission), () => readMembership(ctx, teamId, userId), { team: null, member: null });
    },
  }),
  teamMemberUpdate: t.field({
    type: TeamMemberPayload,
    args: {
      teamId: t.arg.id({ required: true, description: teamIdArg }),
      userId: t.arg.id({ required: true, description: userIdArg }),
      input: t.arg({ type: TeamMemberUpdateInput, required: true, description: 'What to change.' }),
    },
    description: 'Changes a team member\'s permission, as `PUT /api/teams/:teamId/members/:userId`. Org members of any role (`None` included) pass the gate (teams.permissions:write); then org Admins and the team\'s Admins.',
    extensions: { access: TEAM_ACCESS.membersWrite },
    resolve: (_root, { teamId: id, userId: user, input }, ctx) => {
      const teamId = rowId(id, 'Team');
      const userId = userOf(ctx, user);
      return mutate(ctx, () => updateTeamMember(ctx.em, actorOf(ctx), teamId, userId, input.permission), () => readMembership(ctx, teamId, userId), { team: null, member: null });
    },
  }),
  teamMemberRemove: t.field({
    type: TeamMembersPayload,
    args: { teamId: t.arg.id({ required: true, description: teamIdArg }), userId: t.arg.id({ required: true, description: userIdArg }) },
    description: 'Removes a member from a team, as `DELETE /api/teams/:teamId/members/:userId`. Org members of any role (`None` included) pass the gate (teams.permissions:write); then org Admins and the team\'s Admins.',
    extensions: { access: TEAM_ACCESS.membersWrite },
    resolve: (_root, { teamId: id, userId: user }, ctx) => {
      const teamId = rowId(id, 'Team');
      const userId = userOf(ctx, user);
      return teamChange(ctx, teamId, () => removeTeamMember(ctx.em, actorOf(ctx), teamId, userId));
    },
  }),
  teamMembersSet: t.field({
    type: TeamMembersPayload,
    args: { teamId: t.arg.id({ required: true, description: teamIdArg }), input: t.arg({ type: TeamMembersSetInput, required: true, description: 'The members and Admins.' }) },
    description: 'Makes a team\'s members exactly these (users of any org), in one transaction, as `PUT /api/teams/:teamId/members`; an unknown user changes nothing. '
      + 'Org members of any role (`None` included) pass the gate (teams.permissions:write); then org Admins and the team\'s Admins.',
    extensions: { access: TEAM_ACCESS.membersWrite },
    resolve: (_root, { teamId: id, input }, ctx) => {
      const teamId = rowId(id, 'Team');
      return teamChange(ctx, teamId, () => setTeamMemberships(ctx.em, actorOf(ctx), teamId, input));
    },
  }),
}));
