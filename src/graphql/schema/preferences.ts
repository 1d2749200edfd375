import { orgMember, orgRole, signedIn, type Access } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { CallerRefusal, accessDenied, notFound } from '../../errors/domain.ts';
import { MESSAGES } from '../../errors/messages.ts';
import {
  getPreferences, patchPreferences, preferencesOf, replacePreferences, type PreferencesInput, type PreferencesOwner, type PreferencesView,
} from '../../services/preferences.ts';
import { teamPreferencesAccess } from '../../services/teams.ts';
import { roleAtLeast } from '../../roles.ts';
import { builder } from '../builder.ts';
import { roleIn } from '../graph-access.ts';
import { perRequestLoader } from '../loaders.ts';
import { mutate, rowId, UserErrorType, type Payload } from './payloads.ts';
import { ActorInterface, isCaller, OrganizationNode } from './graph.ts';
import { MessageType } from './message.ts';
import { actorOf, TeamType } from './team/node.ts';

/**
 * Preferences of the signed-in user (in the org the request acts in), of that org and of its
 * teams, as the original's `/api/user/preferences`, `/api/org/preferences` and
 * `/api/teams/:teamId/preferences` with their rules; in the graph, on the viewer, the org and the
 * team, with one mutation each that changes only what it names.
 */

/** Who may call each root field; REST rows running these fields declare the same rules. */
export const PREFERENCES_ACCESS = {
  /** Users and service accounts: their own, in the org the request acts in. */
  viewer: signedIn,
  orgRead: orgRole('Admin', 'orgs.preferences:read'),
  orgWrite: orgRole('Admin', 'orgs.preferences:write'),
  teamRead: orgMember('teams:read'),
  teamWrite: orgMember('teams:write'),
} satisfies Record<string, Access>;

const QueryHistoryType = builder.objectRef<{ homeTab: string }>('PreferencesQueryHistory').implement({
  description: 'Explore\'s query history preferences.',
  fields: (t) => ({ homeTab: t.exposeString('homeTab', { description: 'The tab the query history opens on.' }) }),
});

const NavbarType = builder.objectRef<{ bookmarkUrls: string[] }>('PreferencesNavbar').implement({
  description: 'Navigation preferences.',
  fields: (t) => ({ bookmarkUrls: t.exposeStringList('bookmarkUrls', { description: 'Bookmarked pages, as URLs.' }) }),
});

export const PreferencesType = builder.objectRef<PreferencesView>('Preferences').implement({
  description: 'Preferences of a user, an org or a team, as the original keeps them; what is not set is null (and left out of REST answers).',
  fields: (t) => ({
    homeDashboardUID: t.exposeString('homeDashboardUID', { nullable: true, description: 'The home dashboard\'s uid.' }),
    timezone: t.exposeString('timezone', { nullable: true, description: '`utc`, `browser` or an IANA time zone.' }),
    weekStart: t.exposeString('weekStart', { nullable: true, description: 'The first day of the week (`monday`, `sunday`, ...).' }),
    theme: t.exposeString('theme', { nullable: true, description: '`light`, `dark`, `system` or one of the extra themes.' }),
    language: t.exposeString('language', { nullable: true, description: 'The interface language (`en-US`, ...).' }),
    queryHistory: t.field({ type: QueryHistoryType, nullable: true, description: 'Query history preferences.', resolve: (p) => p.queryHistory }),
    navbar: t.field({ type: NavbarType, nullable: true, description: 'Navigation preferences.', resolve: (p) => p.navbar }),
  }),
});

/** The body of `PUT` and `PATCH` on the preference routes, as the original reads it (unknown keys are ignored). */
export const PreferencesInputType = builder.inputType('PreferencesInput', {
  description: 'Preferences to write. With `PUT` (REST) whatever is left out goes back to not set; with `PATCH` and the graph\'s mutations only what is given changes.',
  fields: (t) => ({
    theme: t.string({ required: false, description: '`light`, `dark`, `system`, one of the extra themes, or empty for the default; anything else is 400 `Invalid theme`.' }),
    homeDashboardUID: t.string({ required: false, description: 'The home dashboard\'s uid; empty clears it. One the org does not have is 404 `Dashboard not found`.' }),
    homeDashboardId: t.float({ required: false, description: 'The home dashboard\'s id (deprecated in the original for `homeDashboardUID`); 0 clears it.' }),
    timezone: t.string({ required: false, description: '`utc`, `browser`, an IANA time zone, or empty for the default.' }),
    weekStart: t.string({ required: false, description: 'The first day of the week, or empty for the default.' }),
    language: t.string({ required: false, description: 'The interface language, or empty for the default.' }),
    queryHistory: t.field({ type: 'JSONObject', required: false, description: '`{"homeTab": "..."}`.' }),
    navbar: t.field({ type: 'JSONObject', required: false, description: '`{"bookmarkUrls": ["..."]}`.' }),
    cookies: t.stringList({ required: false, description: 'Cookie consents: `analytics`, `performance`, `functional`.' }),
  }),
});

/** The signed-in caller's own preferences owner: a user or a service account, in the org the request acts in. */
function viewerOwner(ctx: RequestContext): PreferencesOwner {
  // A legacy API key is no user: it has no preferences, as in the original.
  if (ctx.caller.userId === null) throw new CallerRefusal('UNAUTHENTICATED', MESSAGES.preferences.notValidIdentity);
  return { orgId: ctx.orgId, userId: ctx.caller.userId };
}

/** A team's preferences owner after the team rule (`need`), or null for an org Admin's team that does not exist. */
async function teamOwner(ctx: RequestContext, teamId: number, need: 'read' | 'admin'): Promise<PreferencesOwner | null> {
  const exists = await teamPreferencesAccess(ctx.em, actorOf(ctx), teamId, need);
  return exists ? { orgId: ctx.orgId, teamId } : null;
}

const EMPTY: PreferencesView = { homeDashboardUID: null, timezone: null, weekStart: null, theme: null, language: null, queryHistory: null, navbar: null };
const updated = () => ({ message: MESSAGES.preferences.updated });
const input = (i: Record<string, unknown>): PreferencesInput => i as PreferencesInput;
const teamIdArg = 'The team\'s id.';
const restShaped = (graph: string) => `Use \`${graph}\` in the graph.`;

builder.queryFields((t) => ({
  viewerPreferences: t.field({
    deprecationReason: restShaped('viewer.preferences'),
    type: PreferencesType,
    description: 'The signed-in user\'s (or service account\'s) preferences in the org the request acts in, as `GET /api/user/preferences`. Any signed-in caller; a legacy API key is 401 `Not a valid identity`.',
    extensions: { access: PREFERENCES_ACCESS.viewer },
    resolve: (_root, _args, ctx) => getPreferences(ctx.em, viewerOwner(ctx)),
  }),
  currentOrganizationPreferences: t.field({
    deprecationReason: restShaped('viewer.currentOrganization.preferences'),
    type: PreferencesType,
    description: 'The preferences of the org the request acts in, as `GET /api/org/preferences`. Org Admins (orgs.preferences:read).',
    extensions: { access: PREFERENCES_ACCESS.orgRead },
    resolve: (_root, _args, ctx) => getPreferences(ctx.em, { orgId: ctx.orgId }),
  }),
  teamPreferences: t.field({
    deprecationReason: restShaped('Team.preferences'),
    type: PreferencesType,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }) },
    description: 'A team\'s preferences, as `GET /api/teams/:teamId/preferences`. Org members of any role (`None` included) pass the gate (teams:read); then org Admins (who get none for a team the org does not have, as the original answers) and the team\'s members.',
    extensions: { access: PREFERENCES_ACCESS.teamRead },
    resolve: async (_root, { teamId }, ctx) => {
      const owner = await teamOwner(ctx, teamId, 'read');
      return owner ? getPreferences(ctx.em, owner) : EMPTY;
    },
  }),
}));

builder.mutationFields((t) => ({
  updateViewerPreferences: t.field({
    deprecationReason: restShaped('viewerPreferencesUpdate'),
    type: MessageType,
    args: { input: t.arg({ type: PreferencesInputType, required: true, description: 'The whole preferences.' }) },
    description: 'Replaces the signed-in caller\'s preferences in the org the request acts in, as `PUT /api/user/preferences`. Any signed-in caller; a legacy API key is 401 `Not a valid identity`.',
    extensions: { access: PREFERENCES_ACCESS.viewer },
    resolve: (_root, args, ctx) => replacePreferences(ctx.em, viewerOwner(ctx), input(args.input)).then(updated),
  }),
  patchViewerPreferences: t.field({
    deprecationReason: restShaped('viewerPreferencesUpdate'),
    type: MessageType,
    args: { input: t.arg({ type: PreferencesInputType, required: true, description: 'What to change.' }) },
    description: 'Changes some of the signed-in caller\'s preferences in the org the request acts in, as `PATCH /api/user/preferences`. Any signed-in caller; a legacy API key is 401 `Not a valid identity`.',
    extensions: { access: PREFERENCES_ACCESS.viewer },
    resolve: (_root, args, ctx) => patchPreferences(ctx.em, viewerOwner(ctx), input(args.input)).then(updated),
  }),
  updateCurrentOrganizationPreferences: t.field({
    deprecationReason: restShaped('organizationPreferencesUpdate'),
    type: MessageType,
    args: { input: t.arg({ type: PreferencesInputType, required: true, description: 'The whole preferences.' }) },
    description: 'Replaces the preferences of the org the request acts in, as `PUT /api/org/preferences`. Org Admins (orgs.preferences:write).',
    extensions: { access: PREFERENCES_ACCESS.orgWrite },
    resolve: (_root, args, ctx) => replacePreferences(ctx.em, { orgId: ctx.orgId }, input(args.input)).then(updated),
  }),
  patchCurrentOrganizationPreferences: t.field({
    deprecationReason: restShaped('organizationPreferencesUpdate'),
    type: MessageType,
    args: { input: t.arg({ type: PreferencesInputType, required: true, description: 'What to change.' }) },
    description: 'Changes some of the preferences of the org the request acts in, as `PATCH /api/org/preferences`. Org Admins (orgs.preferences:write).',
    extensions: { access: PREFERENCES_ACCESS.orgWrite },
    resolve: (_root, args, ctx) => patchPreferences(ctx.em, { orgId: ctx.orgId }, input(args.input)).then(updated),
  }),
  updateTeamPreferences: t.field({
    deprecationReason: restShaped('teamPreferencesUpdate'),
    type: MessageType,
    args: { teamId: t.arg.int({ required: true, description: teamIdArg }), input: t.arg({ type: PreferencesInputType, required: true, description: 'The whole preferences.' }) },
    description: 'Replaces a team\'s preferences, as `PUT /api/teams/:teamId/preferences`. Org members of any role (`None` included) pass the gate (teams:write); then org Admins '
      + '(a team the org does not have is answered as the original does, and nothing is kept) and the team\'s Admins.',
    extensions: { access: PREFERENCES_ACCESS.teamWrite },
    resolve: async (_root, { teamId, input: body }, ctx) => {
      const owner = await teamOwner(ctx, teamId, 'admin');
      if (owner) await replacePreferences(ctx.em, owner, input(body));
      return updated();
    },
  }),
}));

// The graph: preferences on the viewer, the org and the team, and one mutation each.

/** One statement per level for every owner asked. */
const preferencesByOwner = perRequestLoader(
  (owners: readonly PreferencesOwner[], ctx) => preferencesOf(ctx.em, owners),
  (owner) => `${owner.orgId}:${owner.userId ?? 0}:${owner.teamId ?? 0}`,
);

/** An org's preferences are its Admins' to read and write (orgs.preferences:*), in that org. */
async function isOrgAdmin(ctx: RequestContext, orgId: number): Promise<boolean> {
  return roleAtLeast(await roleIn(ctx, orgId), 'Admin');
}

builder.interfaceField(ActorInterface, 'preferences', (t) => t.field({
  type: PreferencesType,
  nullable: true,
  description: 'Its preferences in the org the request acts in (`GET /api/user/preferences`); null for any actor but the caller.',
  resolve: (actor, _args, ctx) => (isCaller(ctx, actor) ? preferencesByOwner(ctx).load({ orgId: ctx.orgId, userId: actor.id }) : null),
}));

builder.objectField(OrganizationNode, 'preferences', (t) => t.field({
  type: PreferencesType,
  nullable: true,
  description: 'Its preferences (`GET /api/org/preferences`). Its Admins (orgs.preferences:read); null for anyone else.',
  resolve: async (org, _args, ctx) => ((await isOrgAdmin(ctx, org.id)) ? preferencesByOwner(ctx).load({ orgId: org.id }) : null),
}));

builder.objectField(TeamType, 'preferences', (t) => t.field({
  type: PreferencesType,
  description: 'Its preferences (`GET /api/teams/:teamId/preferences`): whoever sees the team (teams:read).',
  resolve: (team, _args, ctx) => preferencesByOwner(ctx).load({ orgId: team.orgId, teamId: team.id }),
}));

const PreferencesPayload = builder.objectRef<Payload<{ preferences: PreferencesView | null }>>('PreferencesPayload').implement({
  description: 'The preferences as stored after the change, or why they did not change.',
  fields: (t) => ({
    preferences: t.field({ type: PreferencesType, nullable: true, description: 'As stored now; null when `userErrors` says why not.', resolve: (p) => p.preferences }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const changeInput = 'What to change; what is left out stays as it is (`PATCH`).';
const readBack = (ctx: RequestContext, owner: PreferencesOwner) => async () => ({ preferences: await getPreferences(ctx.em, owner) });

builder.mutationFields((t) => ({
  viewerPreferencesUpdate: t.field({
    type: PreferencesPayload,
    args: { input: t.arg({ type: PreferencesInputType, required: true, description: changeInput }) },
    description: 'Changes the signed-in caller\'s preferences in the org the request acts in, as `PATCH /api/user/preferences`. Any signed-in caller; a legacy API key is refused (401).',
    extensions: { access: PREFERENCES_ACCESS.viewer },
    resolve: (_root, args, ctx) => {
      const owner = viewerOwner(ctx);
      return mutate(ctx, () => patchPreferences(ctx.em, owner, input(args.input)), readBack(ctx, owner), { preferences: null });
    },
  }),
  organizationPreferencesUpdate: t.field({
    type: PreferencesPayload,
    args: {
      id: t.arg.id({ required: true, description: 'The org\'s global id (`Organization.id`).' }),
      input: t.arg({ type: PreferencesInputType, required: true, description: changeInput }),
    },
    description: 'Changes an org\'s preferences, as `PATCH /api/org/preferences` for the org the request acts in. Any signed-in caller passes the gate; then the org\'s Admins (orgs.preferences:write).',
    extensions: { access: signedIn },
    resolve: async (_root, args, ctx) => {
      const orgId = rowId(args.id, 'Organization');
      if (!(await isOrgAdmin(ctx, orgId))) throw accessDenied('orgs.preferences:write');
      const owner = { orgId };
      return mutate(ctx, () => patchPreferences(ctx.em, owner, input(args.input)), readBack(ctx, owner), { preferences: null });
    },
  }),
  teamPreferencesUpdate: t.field({
    type: PreferencesPayload,
    args: {
      teamId: t.arg.id({ required: true, description: 'The team\'s global id (`Team.id`), in the org the request acts in.' }),
      input: t.arg({ type: PreferencesInputType, required: true, description: changeInput }),
    },
    description: 'Changes a team\'s preferences (`PUT /api/teams/:teamId/preferences` replaces them). Org members of any role (`None` included) pass the gate (teams:write); '
      + 'then org Admins and the team\'s Admins.',
    extensions: { access: PREFERENCES_ACCESS.teamWrite },
    resolve: async (_root, args, ctx) => {
      const teamId = rowId(args.teamId, 'Team');
      return mutate(ctx, async () => {
        const owner = await teamOwner(ctx, teamId, 'admin');
        // The graph names teams that exist: one that does not is not found.
        if (!owner) throw notFound(MESSAGES.team.notFound);
        await patchPreferences(ctx.em, owner, input(args.input));
        return owner;
      }, async (owner) => ({ preferences: await getPreferences(ctx.em, owner) }), { preferences: null });
    },
  }),
}));
