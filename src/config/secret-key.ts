import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseIni } from './ini.ts';
import { DEFAULTS_FILE, type Settings } from './settings.ts';

/**
 * The `[security] secret_key` shipped in conf/defaults.ini (also the original server's default):
 * public, so whoever reads the project can decrypt a stolen database sealed with it.
 */
export function publishedSecretKey(): string {
  return parseIni(readFileSync(DEFAULTS_FILE, 'utf8'), DEFAULTS_FILE).get('security')?.get('secret_key') ?? '';
}

/** The published default however it is spelt: any case, with spaces around or inside it. */
export function isPublishedSecretKey(key: string): boolean {
  const squeeze = (text: string) => text.replace(/\s+/g, '').toLowerCase();
  return squeeze(key) === squeeze(publishedSecretKey());
}

/** Shortest key accepted in production: a key derivation cannot add strength a short key lacks. */
export const MIN_SECRET_KEY_LENGTH = 32;

export const SECRET_KEY_MESSAGES = {
  published: '[security] secret_key is the public default from conf/defaults.ini, so anyone can decrypt the data source secrets stored with it',
  short: (length: number) => `[security] secret_key has ${length} characters, fewer than ${MIN_SECRET_KEY_LENGTH}, so the data source secrets stored with it could be guessed`,
  fix: 'set your own long random key (generate one with `openssl rand -hex 32`; secret_key in your custom ini, or GF_SECURITY_SECRET_KEY) and move stored secrets to it with `npx dashgate secrets rotate-key --from-default-key`',
  fixShort: 'set a long random key instead (generate one with `openssl rand -hex 32`; secret_key in your custom ini, or GF_SECURITY_SECRET_KEY) and move stored secrets to it with `npx dashgate secrets rotate-key --old-key-file <file with the old key>`',
} as const;

/** What is wrong with a key, with its fix, or null for a strong one. Spaces around it do not count. */
export function secretKeyWeakness(key: string): { problem: string; fix: string } | null {
  if (isPublishedSecretKey(key)) return { problem: SECRET_KEY_MESSAGES.published, fix: SECRET_KEY_MESSAGES.fix };
  const length = key.trim().length;
  if (length < MIN_SECRET_KEY_LENGTH) return { problem: SECRET_KEY_MESSAGES.short(length), fix: SECRET_KEY_MESSAGES.fixShort };
  return null;
}

/**
 * Start-up check of the key: in production the published default or a short key stops the start
 * (returned as the error to throw); in development it is allowed, with a warning to log at every start.
 */
export function checkSecretKey(settings: Pick<Settings, 'appMode' | 'security'>): { error: string } | { warning: string } | null {
  const weakness = secretKeyWeakness(settings.security.secretKey);
  if (!weakness) return null;
  if (settings.appMode === 'production') return { error: `${weakness.problem}; refusing to start in app_mode = production: ${weakness.fix}` };
  return { warning: `${weakness.problem}; allowed only because app_mode = development: ${weakness.fix}` };
}

/** Where an embedded installation keeps the key it generated for itself. */
export function instanceKeyFile(settings: Pick<Settings, 'paths'>): string {
  return join(settings.paths.data, 'secret_key');
}

/**
 * The settings with this installation's own key when it runs the embedded database and no key was
 * configured: `npm start` on a fresh machine must work, and must not seal secrets with the public
 * default. A fresh data folder gets a random key, written once to `<[paths] data>/secret_key`
 * (0600; kept apart from the database, so a copy of the cluster alone does not open them) and read
 * from there at every later start, by the server and the CLI alike. A cluster created before with
 * the public key keeps it, and so meets `checkSecretKey` (rotate-key moves it to a key of its own).
 * External databases never get a generated key: instances sharing one must share one configured.
 */
export function withInstanceSecretKey(settings: Settings): Settings {
  if (settings.database.type !== 'embedded' || !isPublishedSecretKey(settings.security.secretKey)) return settings;
  const file = instanceKeyFile(settings);
  let key = readKeyFile(file);
  if (key === null) {
    if (existsSync(join(settings.database.path, 'PG_VERSION'))) return settings;
    mkdirSync(dirname(file), { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process starting on the same folder wrote it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    key = readKeyFile(file);
  }
  if (!key) throw new Error(`${file} is empty: restore the key this installation generated, or set [security] secret_key`);
  return Object.freeze({ ...settings, security: Object.freeze({ ...settings.security, secretKey: key }) });
}

function readKeyFile(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
}
