import { defineEntity, p } from '@mikro-orm/postgresql';

/** What a preference row keeps besides its columns, as the original's `json_data`. */
export interface PreferencesJson {
  language?: string;
  queryHistory?: { homeTab?: string };
  cookiePreferences?: Record<string, Record<string, never>>;
  navbar?: { bookmarkUrls?: string[] | null };
}

/**
 * The original's preferences: one row per owner, which is an org (neither user nor team), a user
 * in an org, or a team. Empty strings and 0 mean "not set", as there.
 */
export const Preferences = defineEntity({
  name: 'Preferences',
  tableName: 'preferences',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    userId: p.integer().nullable(),
    teamId: p.integer().nullable(),
    version: p.integer().default(0),
    homeDashboardId: p.bigint('number').default(0),
    homeDashboardUid: p.text().default(''),
    timezone: p.text().default(''),
    weekStart: p.text().default(''),
    theme: p.text().default(''),
    jsonData: p.json<PreferencesJson>(),
    created: p.datetime().onCreate(() => new Date()),
    updated: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
