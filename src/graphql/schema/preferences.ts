import { orgMember, orgRole, signedIn, type Access } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { CallerRefusal, notFound } from '../../errors/domain.ts';
import { MESSAGES } from '../../errors/messages.ts';
import {
  getPreferences, patchPreferences, preferencesOf, replacePreferences, type PreferencesInput, type PreferencesOwner, type PreferencesView,
} from '../../services/preferences.ts';
import { teamPreferencesAccess } from '../../services/teams.ts';
import { builder } from '../builder.ts';
import { perRequestLoader } from '../loaders.ts';
import { mutate, rowId, UserErrorType, type Payload } from './payloads.ts';
import { ActorInterface, isCaller } from './actor.ts';
import { OrganizationType } from './organization/node.ts';
import { actorOf, TeamType } from './team/node.ts';

/**
 * Preferences of the signed-in user (in the org the request acts in), of that org and of its
 * teams, as the original's `/api/user/preferences`, `/api/org/preferences` and
 * `/api/teams/:teamId/preferences` with their rules; in the graph, on the viewer, the org and the
 * team, with one mutation each that changes what it names (or, with `replace`, all of them). The
 * REST rows are documents over these fields; what only the wire has is in src/rest/preferences.ts.
 */

/** Who may read and change whose preferences; the REST rows' doors read these from the fields. */
export const PREFERENCES_ACCESS = {
  /** Users and service accounts: their own, in the org the request acts in. */
  viewer: signedIn,
  orgRead: orgRole('Admin', 'orgs.preferences:read'),
  orgWrite: orgRole('Admin', 'orgs.preferences:write'),
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
  if (ctx.caller.userId === null) throw notValidIdentity();
  return { orgId: ctx.orgId, userId: ctx.caller.userId };
}

/** Why a legacy API key has no preferences (401), in the graph's mutations and REST's rows alike. */
export const notValidIdentity = () => new CallerRefusal('UNAUTHENTICATED', MESSAGES.preferences.notValidIdentity);

/** A team's preferences owner after the team rule (`need`), or null for an org Admin's team that does not exist. */
async function teamOwner(ctx: RequestContext, teamId: number, need: 'read' | 'admin'): Promise<PreferencesOwner | null> {
  const exists = await teamPreferencesAccess(ctx.em, actorOf(ctx), teamId, need);
  return exists ? { orgId: ctx.orgId, teamId } : null;
}

const input = (i: Record<string, unknown>): PreferencesInput => i as PreferencesInput;

/** One statement per level for every owner asked. */
const preferencesByOwner = perRequestLoader(
  (owners: readonly PreferencesOwner[], ctx) => preferencesOf(ctx.em, owners),
  (owner) => `${owner.orgId}:${owner.userId ?? 0}:${owner.teamId ?? 0}`,
);

builder.interfaceField(ActorInterface, 'preferences', (t) => t.field({
  type: PreferencesType,
  nullable: true,
  description: 'Its preferences in the org the request acts in (`GET /api/user/preferences`); null for any actor but the caller.',
  resolve: (actor, _args, ctx) => (isCaller(ctx, actor) ? preferencesByOwner(ctx).load({ orgId: ctx.orgId, userId: actor.id }) : null),
}));

builder.objectField(OrganizationType, 'preferences', (t) => t.field({
  type: PreferencesType,
  nullable: true,
  description: 'Its preferences (`GET /api/org/preferences`). Its Admins (orgs.preferences:read); null for anyone else.',
  extensions: { access: PREFERENCES_ACCESS.orgRead },
  resolve: (org, _args, ctx) => preferencesByOwner(ctx).load({ orgId: org.id }),
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

const changeInput = 'What to change; what is left out stays as it is (`PATCH`), or, with `replace`, goes back to not set (`PUT`).';
const replaceArg = { required: false, defaultValue: false, description: 'Replace the whole preferences, as REST\'s `PUT` does: what `input` leaves out goes back to not set.' } as const;
const readBack = (ctx: RequestContext, owner: PreferencesOwner) => async () => ({ preferences: await getPreferences(ctx.em, owner) });
const write = (ctx: RequestContext, owner: PreferencesOwner, body: Record<string, unknown>, replace: boolean | null | undefined) =>
  (replace ? replacePreferences : patchPreferences)(ctx.em, owner, input(body));

builder.mutationFields((t) => ({
  viewerPreferencesUpdate: t.field({
    type: PreferencesPayload,
    args: {
      input: t.arg({ type: PreferencesInputType, required: true, description: changeInput }),
      replace: t.arg.boolean(replaceArg),
    },
    description: 'Changes the signed-in caller\'s preferences in the org the request acts in, as `PATCH /api/user/preferences` (`PUT` with `replace`). Any signed-in caller; a legacy API key is refused (401).',
    extensions: { access: PREFERENCES_ACCESS.viewer },
    resolve: (_root, args, ctx) => {
      const owner = viewerOwner(ctx);
      return mutate(ctx, () => write(ctx, owner, args.input, args.replace), readBack(ctx, owner), { preferences: null });
    },
  }),
  organizationPreferencesUpdate: t.field({
    type: PreferencesPayload,
    args: {
      id: t.arg.id({ required: true, description: 'The org\'s global id (`Organization.id`).' }),
      input: t.arg({ type: PreferencesInputType, required: true, description: changeInput }),
      replace: t.arg.boolean(replaceArg),
    },
    description: 'Changes an org\'s preferences, as `PATCH /api/org/preferences` (`PUT` with `replace`) for the org the request acts in. Org Admins of the org `id` names (orgs.preferences:write).',
    // The rule applies in the org `id` names (the one the request acts in, for the REST rows).
    extensions: { access: PREFERENCES_ACCESS.orgWrite, accessIn: 'id' },
    resolve: (_root, args, ctx) => {
      const owner = { orgId: rowId(args.id, 'Organization') };
      return mutate(ctx, () => write(ctx, owner, args.input, args.replace), readBack(ctx, owner), { preferences: null });
    },
  }),
  teamPreferencesUpdate: t.field({
    type: PreferencesPayload,
    args: {
      teamId: t.arg.id({ required: true, description: 'The team\'s global id (`Team.id`), in the org the request acts in.' }),
      input: t.arg({ type: PreferencesInputType, required: true, description: changeInput }),
      replace: t.arg.boolean(replaceArg),
    },
    description: 'Changes a team\'s preferences, as `PUT /api/teams/:teamId/preferences` does with `replace`. Org members of any role (`None` included) pass the gate (teams:write); '
      + 'then org Admins and the team\'s Admins.',
    extensions: { access: PREFERENCES_ACCESS.teamWrite },
    resolve: async (_root, args, ctx) => {
      const teamId = rowId(args.teamId, 'Team');
      return mutate(ctx, async () => {
        const owner = await teamOwner(ctx, teamId, 'admin');
        // The graph names teams that exist: one that does not is not found.
        if (!owner) throw notFound(MESSAGES.team.notFound);
        await write(ctx, owner, args.input, args.replace);
        return owner;
      }, async (owner) => ({ preferences: await getPreferences(ctx.em, owner) }), { preferences: null });
    },
  }),
}));
