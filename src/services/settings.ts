import { settingsBag } from '../config/redact.ts';
import type { Settings } from '../config/settings.ts';

export type SettingsDocument = Record<string, Record<string, string>>;

/**
 * The settings document of the admin API: every section of the effective configuration (DEFAULT
 * included) with every value a string and every secret masked. Built from the loaded settings,
 * so it shows what this instance actually runs with.
 */
export function adminSettings(settings: Pick<Settings, 'raw'>): SettingsDocument {
  return settingsBag(settings);
}
