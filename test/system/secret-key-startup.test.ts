import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { checkSecretKey, instanceKeyFile, MIN_SECRET_KEY_LENGTH, publishedSecretKey, secretKeyWeakness, withInstanceSecretKey } from '../../src/config/secret-key.ts';
import { loadSettings } from '../../src/config/settings.ts';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';

// The public default [security] secret_key: refused in production, a warning at every start in
// development. Servers run as `npm start` runs them, on the test cluster.

const root = new URL('../..', import.meta.url).pathname;
let dir = '';
let connection: PgConnection;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashgate-key-'));
  connection = await createTestDatabase();
});
afterAll(async () => {
  await dropTestDatabase(connection);
  await rm(dir, { recursive: true, force: true });
});

async function configFile(name: string, body: string, db: PgConnection = connection): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `${body}\n[paths]\ndata = ${dir}/data\n[database]\ntype = postgres\nhost = ${db.host}:${db.port}\nname = ${db.database}\nuser = ${db.user}\npassword = ${db.password}\n[server]\nhttp_addr = 127.0.0.1\nhttp_port = 0\n`);
  return file;
}

/** Runs `src/main.ts --config <file>` until it listens (then stops it with SIGTERM) or exits. */
function run(config: string, env: Record<string, string> = {}): Promise<{ listened: boolean; code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--experimental-async-context-frame', 'src/main.ts', '--config', config], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  let listened = false;
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (!listened && output.includes('dashgate listening')) {
      listened = true;
      child.kill('SIGTERM');
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => child.on('close', (code) => resolve({ listened, code, output })));
}

const warnings = (output: string) =>
  output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string; setting?: string }).filter((l) => l.setting === '[security] secret_key');

describe('the public default secret_key', () => {
  it('stops a production start before anything is opened, naming the setting and the fix', async () => {
    // An unreachable database: the refusal comes first, so the message is about the key.
    const config = await configFile('production-default.ini', '', { ...connection, port: 1 });
    const result = await run(config);
    expect(result.listened).toBe(false);
    expect(result.code).toBe(1);
    expect(result.output).toContain('dashgate: start-up failed: [security] secret_key is the public default from conf/defaults.ini');
    expect(result.output).toContain('refusing to start in app_mode = production');
    expect(result.output).toContain('GF_SECURITY_SECRET_KEY');
    expect(result.output).toContain('npx dashgate secrets rotate-key --from-default-key');
    expect(result.output).not.toContain('ECONNREFUSED');
  }, 60_000);

  it('is refused in production whichever layer sets it', async () => {
    const config = await configFile('production-env.ini', `[security]\nsecret_key = my-own-key-0123456789abcdefghijklmn`, { ...connection, port: 1 });
    const result = await run(config, { GF_SECURITY_SECRET_KEY: publishedSecretKey() });
    expect(result.code).toBe(1);
    expect(result.output).toContain('refusing to start in app_mode = production');
  }, 60_000);

  it('refuses a short key in production too, saying how to generate one', async () => {
    const config = await configFile('production-short.ini', `[security]\nsecret_key = x`, { ...connection, port: 1 });
    const result = await run(config);
    expect({ listened: result.listened, code: result.code }).toEqual({ listened: false, code: 1 });
    expect(result.output).toContain('dashgate: start-up failed: [security] secret_key has 1 characters, fewer than 32');
    expect(result.output).toContain('openssl rand -hex 32');
  }, 60_000);

  it('is allowed in development with a warning at every start', async () => {
    const config = await configFile('development.ini', 'app_mode = development');
    for (let start = 0; start < 2; start++) {
      const result = await run(config);
      expect({ listened: result.listened, code: result.code }).toEqual({ listened: true, code: 0 });
      const [warning, ...more] = warnings(result.output);
      expect(more).toEqual([]);
      expect(warning).toMatchObject({ level: 40 });
      expect(warning!.msg).toContain('allowed only because app_mode = development');
    }
  }, 120_000);

  it('gives no warning once a key of your own is set', async () => {
    const config = await configFile('production-own.ini', `[security]\nsecret_key = my-own-key-0123456789abcdefghijklmn`);
    const result = await run(config);
    expect({ listened: result.listened, code: result.code }).toEqual({ listened: true, code: 0 });
    expect(warnings(result.output)).toEqual([]);
    expect(result.output).not.toContain('public default');
  }, 60_000);
});

describe('checkSecretKey', () => {
  const settingsWith = (appMode: 'production' | 'development', secretKey?: string) =>
    loadSettings({ argv: [], env: {}, overrides: { DEFAULT: { app_mode: appMode }, ...(secretKey ? { security: { secret_key: secretKey } } : {}) } });
  const strong = 'mine-0123456789abcdef0123456789ab';

  it('decides by app mode and key', () => {
    expect(checkSecretKey(settingsWith('production'))).toEqual({ error: expect.stringContaining('refusing to start') });
    expect(checkSecretKey(settingsWith('development'))).toEqual({ warning: expect.stringContaining('app_mode = development') });
    expect(checkSecretKey(settingsWith('production', strong))).toBeNull();
    expect(checkSecretKey(settingsWith('development', strong))).toBeNull();
    expect(checkSecretKey(settingsWith('production', 'x'))).toEqual({ error: expect.stringContaining('refusing to start') });
    expect(checkSecretKey(settingsWith('development', 'x'))).toEqual({ warning: expect.stringContaining('allowed only because app_mode = development') });
  });
});

describe('secretKeyWeakness', () => {
  const published = publishedSecretKey();
  it.each<[string, string, RegExp | null]>([
    ['the published default', published, /public default/],
    ['the default padded with spaces', `  ${published}   `, /public default/],
    ['the default in another case', published.toUpperCase(), /public default/],
    ['the default with spaces inside', `${published.slice(0, 5)} ${published.slice(5)}`, /public default/],
    ['one character', 'x', /has 1 characters, fewer than 32/],
    ['31 characters padded to 40 with spaces', `${'k'.repeat(31)}         `, /has 31 characters, fewer than 32/],
    ['32 characters', 'k'.repeat(MIN_SECRET_KEY_LENGTH), null],
    ['a generated key', 'a3f1c9e04b7d2286f0e5c1b9d4a7e3f2a3f1c9e04b7d2286f0e5c1b9d4a7e3f2', null],
  ])('%s', (_name, key, problem) => {
    const weakness = secretKeyWeakness(key);
    if (problem === null) expect(weakness).toBeNull();
    else {
      expect(weakness?.problem).toMatch(problem);
      // The fix says how to make a good key.
      expect(weakness?.fix).toContain('openssl rand -hex 32');
    }
  });
});
