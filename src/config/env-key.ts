/**
 * Grafana's environment override name for `[section] key` (`setting.EnvKey`):
 * `[auth.generic_oauth] client_secret` -> `GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET`.
 * Redaction matches its patterns against this form, so both loading and redaction need it.
 */
export function envKey(section: string, key: string): string {
  const s = section.replace(/[.-]/g, '_').toUpperCase();
  const k = key.replace(/\./g, '_').toUpperCase();
  return `GF_${s}_${k}`;
}

/** `[section] key / GF_SECTION_KEY`: how a message names a setting, in the file and in the environment. */
export function settingName(section: string, key: string): string {
  return `[${section}] ${key} / ${envKey(section, key)}`;
}
