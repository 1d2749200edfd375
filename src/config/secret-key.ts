import { readFileSync } from 'node:fs';
import { parseIni } from './ini.ts';
import { DEFAULTS_FILE, type Settings } from './settings.ts';

/**
 * The `[security] secret_key` shipped in conf/defaults.ini (also the original server's default):
 * public, so whoever reads the project can decrypt a stolen database sealed with it.
 */
export function publishedSecretKey(): string {
  return parseIni(readFileSync(DEFAULTS_FILE, 'utf8'), DEFAULTS_FILE).get('security')?.get('secret_key') ?? '';
}

export function isPublishedSecretKey(key: string): boolean {
  return key === publishedSecretKey();
}

export const SECRET_KEY_MESSAGES = {
  published: '[security] secret_key is the public default from conf/defaults.ini, so anyone can decrypt the data source secrets stored with it',
  fix: 'set your own long random key (secret_key in your custom ini, or GF_SECURITY_SECRET_KEY) and move stored secrets to it with `npx dashgate secrets rotate-key --from-default-key`',
} as const;

/**
 * Start-up check of the key: in production the published default stops the start (returned as
 * the error to throw); in development it is allowed, with a warning to log at every start.
 */
export function checkSecretKey(settings: Pick<Settings, 'appMode' | 'security'>): { error: string } | { warning: string } | null {
  if (!isPublishedSecretKey(settings.security.secretKey)) return null;
  if (settings.appMode === 'production') return { error: `${SECRET_KEY_MESSAGES.published}; refusing to start in app_mode = production: ${SECRET_KEY_MESSAGES.fix}` };
  return { warning: `${SECRET_KEY_MESSAGES.published}; allowed only because app_mode = development: ${SECRET_KEY_MESSAGES.fix}` };
}
