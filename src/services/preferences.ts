import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Preferences, type PreferencesJson } from '../db/entities/index.ts';
import { badRequest, DomainError, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

/**
 * Preferences, as the original's preference service keeps and answers them: those of an org, of a
 * user in an org, and of a team. `PUT` replaces them whole (what it does not name goes back to
 * "not set"), `PATCH` changes what it names. Dashboards are not kept by this server (only the
 * statistics count them), so a home dashboard can be set only to one the table holds: any other
 * answers what the original answers for a dashboard that does not exist.
 */

/** Whose preferences: an org's (no user, no team), a user's in an org, or a team's. */
export interface PreferencesOwner {
  orgId: number;
  userId?: number | null;
  teamId?: number | null;
}

/** Preferences as answered: what is not set is null, and left out of REST answers (Go's `omitempty`). */
export interface PreferencesView {
  homeDashboardUID: string | null;
  timezone: string | null;
  weekStart: string | null;
  theme: string | null;
  language: string | null;
  queryHistory: { homeTab: string } | null;
  navbar: { bookmarkUrls: string[] } | null;
}

/** A write as the original's bodies carry it (`UpdatePrefsCmd`, `PatchPrefsCmd`): unknown keys are ignored. */
export interface PreferencesInput {
  theme?: string | null;
  /** Deprecated in the original for `homeDashboardUID`; a JSON number. */
  homeDashboardId?: number | null;
  homeDashboardUID?: string | null;
  timezone?: string | null;
  weekStart?: string | null;
  language?: string | null;
  queryHistory?: unknown;
  cookies?: unknown;
  navbar?: unknown;
}

/** The original's theme ids (`themes_generated.go`); '' is the default. */
const THEMES = new Set([
  'light', 'dark', 'system', 'aubergine', 'debug', 'desertbloom', 'gildedgrove', 'gloom', 'mars', 'matrix', 'sapphiredusk', 'synthwave', 'tron', 'victorian', 'zen',
]);
const COOKIE_TYPES = new Set(['analytics', 'performance', 'functional']);

const EMPTY: PreferencesView = { homeDashboardUID: null, timezone: null, weekStart: null, theme: null, language: null, queryHistory: null, navbar: null };

type Row = InstanceType<typeof Preferences.class>;

const set = (value: string | undefined | null): string | null => (value ? value : null);

function toView(row: Pick<Row, 'homeDashboardUid' | 'timezone' | 'weekStart' | 'theme' | 'jsonData'> | null): PreferencesView {
  if (!row) return EMPTY;
  const json = row.jsonData ?? {};
  const bookmarks = json.navbar?.bookmarkUrls;
  const homeTab = json.queryHistory?.homeTab;
  return {
    homeDashboardUID: set(row.homeDashboardUid),
    timezone: set(row.timezone),
    weekStart: set(row.weekStart),
    theme: set(row.theme),
    language: set(json.language),
    queryHistory: homeTab ? { homeTab } : null,
    navbar: Array.isArray(bookmarks) ? { bookmarkUrls: bookmarks } : null,
  };
}

const where = (owner: PreferencesOwner) => ({ orgId: owner.orgId, userId: owner.userId ?? null, teamId: owner.teamId ?? null });

/** An owner's preferences; all unset when it has none (`{}` on the wire), as in the original. */
export async function getPreferences(em: EntityManager, owner: PreferencesOwner): Promise<PreferencesView> {
  return toView(await em.findOne(Preferences, where(owner), { disableIdentityMap: true }));
}

/** The preferences of several owners in one statement, in the order asked (for the graph). */
export async function preferencesOf(em: EntityManager, owners: readonly PreferencesOwner[]): Promise<PreferencesView[]> {
  if (owners.length === 0) return [];
  const keys = owners.map((o) => [o.orgId, o.userId ?? 0, o.teamId ?? 0] as const);
  const rows = await em.execute<Array<{ org_id: number; user_id: number | null; team_id: number | null; home_dashboard_uid: string; timezone: string; week_start: string; theme: string; json_data: PreferencesJson }>>(
    `select p.org_id, p.user_id, p.team_id, p.home_dashboard_uid, p.timezone, p.week_start, p.theme, p.json_data
       from preferences p
       join unnest(string_to_array(?, ',')::int[], string_to_array(?, ',')::int[], string_to_array(?, ',')::int[]) as k(org_id, user_id, team_id)
         on p.org_id = k.org_id and coalesce(p.user_id, 0) = k.user_id and coalesce(p.team_id, 0) = k.team_id`,
    [keys.map((k) => k[0]).join(','), keys.map((k) => k[1]).join(','), keys.map((k) => k[2]).join(',')],
  );
  const byKey = new Map(rows.map((r) => [`${r.org_id}:${r.user_id ?? 0}:${r.team_id ?? 0}`, r]));
  return keys.map((k) => {
    const row = byKey.get(k.join(':'));
    return toView(row ? { homeDashboardUid: row.home_dashboard_uid, timezone: row.timezone, weekStart: row.week_start, theme: row.theme, jsonData: row.json_data } : null);
  });
}

function checkTheme(theme: string | null | undefined): void {
  if (theme && !THEMES.has(theme)) throw badRequest(MESSAGES.preferences.invalidTheme);
}

/** The original's errutil 400 for a cookie preference it does not know. */
function unknownCookieType(): DomainError {
  const message = MESSAGES.preferences.unknownCookieType;
  return new DomainError('BAD_REQUEST', message, { message, messageId: 'preferences.unknownCookieType', statusCode: 400, traceID: '' });
}

/** `cookies` as the set the original keeps (`{"analytics": {}}`); a list of known types, else 400. */
function cookieSet(cookies: unknown): Record<string, Record<string, never>> {
  if (!Array.isArray(cookies)) throw badRequest();
  const out: Record<string, Record<string, never>> = {};
  for (const cookie of cookies) {
    if (typeof cookie !== 'string') throw badRequest();
    if (!COOKIE_TYPES.has(cookie)) throw unknownCookieType();
    out[cookie] = {};
  }
  return out;
}

/** A JSON object's value by key, any case (Go's decoding matches field names so). */
function field(value: unknown, name: string): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const key = Object.keys(value).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : (value as Record<string, unknown>)[key];
}

/** `queryHistory.homeTab` ('' when absent); 400 when the shape is not the original's. */
function homeTabOf(queryHistory: unknown): string {
  if (typeof queryHistory !== 'object' || Array.isArray(queryHistory)) throw badRequest();
  const tab = field(queryHistory, 'homeTab');
  if (tab === undefined || tab === null) return '';
  if (typeof tab !== 'string') throw badRequest();
  return tab;
}

/** `navbar.bookmarkUrls`: a list of strings, or null when absent. */
function bookmarksOf(navbar: unknown): string[] | null {
  if (typeof navbar !== 'object' || Array.isArray(navbar)) throw badRequest();
  const urls = field(navbar, 'bookmarkUrls');
  if (urls === undefined || urls === null) return null;
  if (!Array.isArray(urls) || urls.some((u) => typeof u !== 'string')) throw badRequest();
  return urls as string[];
}

/**
 * The home dashboard a write names, as the original resolves it: a UID ('' clears it), else a
 * non-zero id; one the org does not have is 404 "Dashboard not found". Null when neither is given.
 */
async function homeDashboard(em: EntityManager, orgId: number, input: PreferencesInput): Promise<{ id: number; uid: string | null } | null> {
  const { homeDashboardUID: uid, homeDashboardId: id } = input;
  if (uid !== undefined && uid !== null) {
    if (uid === '') return { id: 0, uid: '' };
    const [found] = await em.execute<Array<{ id: number }>>('select id from dashboard where org_id = ? and uid = ?', [orgId, uid]);
    if (!found) throw notFound(MESSAGES.preferences.dashboardNotFound);
    return { id: found.id, uid };
  }
  if (id !== undefined && id !== null) {
    if (!Number.isInteger(id)) throw badRequest();
    if (id === 0) return { id: 0, uid: null };
    // Beyond the column's range no dashboard has it.
    const found = Number.isSafeInteger(id) && id > 0 && id <= 2_147_483_647
      ? (await em.execute<Array<{ uid: string }>>('select uid from dashboard where org_id = ? and id = ?', [orgId, id]))[0]
      : undefined;
    if (!found) throw notFound(MESSAGES.preferences.dashboardNotFound);
    return { id, uid: found.uid };
  }
  return null;
}

/** The owner's row, made if missing, locked for the rest of the transaction. */
async function lockedRow(tx: EntityManager, owner: PreferencesOwner): Promise<Row> {
  try {
    await tx.execute('insert into preferences (org_id, user_id, team_id) values (?, ?, ?) on conflict do nothing', [owner.orgId, owner.userId ?? null, owner.teamId ?? null]);
  } catch (error) {
    // No such org (a user who belongs to none acts in none) or team (deleted meanwhile): nothing to keep them for.
    if ((error as { code?: string }).code === '23503') throw notFound(owner.teamId ? MESSAGES.team.notFound : MESSAGES.org.notFound);
    throw error;
  }
  return tx.findOneOrFail(Preferences, where(owner), { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

const text = (value: string | null | undefined) => value ?? '';

/**
 * `PUT`: the preferences become what the body says; what it leaves out goes back to not set (the
 * home dashboard's UID excepted, which the original keeps unless the body names one).
 */
export async function replacePreferences(em: EntityManager, owner: PreferencesOwner, input: PreferencesInput): Promise<void> {
  checkTheme(input.theme);
  const home = await homeDashboard(em, owner.orgId, input);
  const json: PreferencesJson = { language: text(input.language) };
  if (input.navbar !== undefined && input.navbar !== null) json.navbar = { bookmarkUrls: bookmarksOf(input.navbar) };
  if (input.queryHistory !== undefined && input.queryHistory !== null) json.queryHistory = { homeTab: homeTabOf(input.queryHistory) };
  if (input.cookies !== undefined && input.cookies !== null) json.cookiePreferences = cookieSet(input.cookies);
  await em.transactional(async (tx) => {
    const row = await lockedRow(tx, owner);
    row.theme = text(input.theme);
    row.timezone = text(input.timezone);
    row.weekStart = text(input.weekStart);
    row.homeDashboardId = home?.id ?? 0;
    if (home?.uid != null) row.homeDashboardUid = home.uid;
    row.jsonData = json;
    row.version += 1;
  });
}

/** `PATCH`: only what the body names changes (an empty query history tab or bookmark list aside). */
export async function patchPreferences(em: EntityManager, owner: PreferencesOwner, input: PreferencesInput): Promise<void> {
  checkTheme(input.theme);
  const home = await homeDashboard(em, owner.orgId, input);
  const homeTab = input.queryHistory !== undefined && input.queryHistory !== null ? homeTabOf(input.queryHistory) : '';
  const bookmarks = input.navbar !== undefined && input.navbar !== null ? bookmarksOf(input.navbar) : null;
  const cookies = input.cookies !== undefined && input.cookies !== null ? cookieSet(input.cookies) : null;
  await em.transactional(async (tx) => {
    const row = await lockedRow(tx, owner);
    const json: PreferencesJson = { ...row.jsonData };
    if (input.language != null) json.language = input.language;
    if (bookmarks !== null) json.navbar = { bookmarkUrls: bookmarks };
    if (homeTab !== '') json.queryHistory = { homeTab };
    if (cookies !== null) json.cookiePreferences = cookies;
    row.jsonData = json;
    if (home) {
      row.homeDashboardId = home.id;
      if (home.uid !== null) row.homeDashboardUid = home.uid;
    }
    if (input.timezone != null) row.timezone = input.timezone;
    if (input.weekStart != null) row.weekStart = input.weekStart;
    if (input.theme != null) row.theme = input.theme;
    row.version += 1;
  });
}
