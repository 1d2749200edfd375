import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parsePeriod } from './duration.ts';
import { splitConfigArgument } from './argv.ts';
import { envKey } from './env-key.ts';
import { DEFAULT_SECTION, parseIni, type IniSections, type RawSettings } from './ini.ts';
import { redactedValue } from './redact.ts';
import { BASIC_ROLES, type BasicRole } from '../roles.ts';
import { TrustedProxies } from '../net/client-address.ts';
import { projectPath } from '../project-root.ts';

export { envKey };

/**
 * The one place that reads configuration (and `process.env`). Layers, lowest first, as Grafana
 * loads them: conf/defaults.ini < `--config` file < GF_<SECTION>_<KEY> env < `overrides`, then
 * `${VAR}` / `$__env{}` / `$__file{}` expansion and `%(key)s` interpolation. The result is frozen.
 */

export const DEFAULTS_FILE = projectPath('conf', 'defaults.ini');

export interface LoadSettingsOptions {
  /** Command-line arguments scanned for `--config FILE` / `--config=FILE`; defaults to `process.argv.slice(2)`. */
  argv?: readonly string[];
  /** Source of GF_* overrides, `${VAR}` and `$__env{}`; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Base of the `--config` and `$__file{}` paths; defaults to `process.cwd()`. */
  cwd?: string;
  /** Base of the relative `[paths]` folders; defaults to `cwd`. */
  homePath?: string;
  /** Last layer (tests): creates sections and keys, and may set empty values. */
  overrides?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}


export type DatabaseType = 'embedded' | 'postgres';
export type SslMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';
export type LogMode = 'console' | 'file' | 'syslog';
export type TrustedDocumentsMode = 'off' | 'allow' | 'only';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'critical';
export type TracePropagation = 'w3c' | 'jaeger';
export type TraceSamplerType = 'const' | 'probabilistic' | 'rateLimiting' | 'remote';

export interface Settings {
  /** The effective ini, DEFAULT first, sections and keys in file order; the settings document is built from it. */
  readonly raw: RawSettings;
  /** Absolute path of the `--config` file, or null when there was none. */
  readonly configFile: string | null;
  readonly appMode: 'production' | 'development';
  readonly paths: {
    readonly data: string;
    readonly logs: string;
    readonly provisioning: string;
  };
  readonly server: {
    readonly protocol: 'http' | 'https';
    /** Empty means all interfaces. */
    readonly httpAddr: string;
    /** 0 picks a free port. */
    readonly httpPort: number;
    readonly domain: string;
    /** Always ends with `/`. */
    readonly rootUrl: string;
    readonly routerLogging: boolean;
    readonly dataProxyLogging: boolean;
    readonly certFile: string;
    readonly certKey: string;
    readonly requestBodyLimitBytes: number;
    /** Largest request head accepted: the target plus every header name and value, in bytes. */
    readonly maxHeaderBytes: number;
    readonly readHeaderTimeoutSeconds: number;
    /** How long an idle keep-alive connection is kept open; 0: until the client closes it. */
    readonly keepAliveTimeoutSeconds: number;
    /** Addresses and CIDR ranges whose X-Forwarded-For names the client; empty trusts none. */
    readonly trustedProxies: readonly string[];
    readonly shutdownTimeoutSeconds: number;
    /** On SIGTERM/SIGINT, seconds of failing `/api/health` while still serving, before the shutdown proper. */
    readonly shutdownDrainSeconds: number;
    /** The original server's API version clients are told (`buildInfo.version`). */
    readonly compatibleVersion: string;
  };
  readonly database: {
    readonly type: DatabaseType;
    readonly host: string;
    readonly port: number;
    readonly name: string;
    readonly user: string;
    readonly password: string;
    /** A postgres:// URL that takes precedence over host, port, name, user and password; empty when unset. */
    readonly url: string;
    readonly sslMode: SslMode;
    /** Absolute folder of the embedded cluster. */
    readonly path: string;
    /** 0 picks a free port. */
    readonly embeddedPort: number;
    readonly maxOpenConn: number;
  };
  readonly security: {
    readonly adminUser: string;
    readonly adminPassword: string;
    readonly adminEmail: string;
    readonly secretKey: string;
    readonly disableBruteForceLoginProtection: boolean;
    readonly bruteForceLoginProtectionMaxAttempts: number;
    /** False: failed logins count per login and client address; true: per login only. */
    readonly disableIpAddressLoginProtection: boolean;
    /** host[:port] entries; empty allows every target. */
    readonly dataSourceProxyWhitelist: readonly string[];
    readonly dataSourceProxyDenyPrivate: boolean;
    /** Avatars are a generic image instead of Gravatar hashes of e-mails. */
    readonly disableGravatar: boolean;
  };
  readonly users: {
    readonly allowSignUp: boolean;
    readonly allowOrgCreate: boolean;
    readonly autoAssignOrg: boolean;
    readonly autoAssignOrgId: number;
    readonly autoAssignOrgRole: BasicRole;
  };
  readonly auth: { readonly loginCookieName: string };
  readonly authBasic: { readonly enabled: boolean };
  readonly authProxy: { readonly enabled: boolean; readonly headerName: string };
  readonly authAnonymous: { readonly enabled: boolean };
  readonly authLdap: { readonly enabled: boolean };
  readonly dataproxy: {
    readonly logging: boolean;
    readonly timeoutSeconds: number;
    readonly dialTimeoutSeconds: number;
    /** Seconds a TLS handshake with a data source may take once connected. */
    readonly tlsHandshakeTimeoutSeconds: number;
    /** Seconds to wait for `100 Continue` before sending a body anyway, for a call that asks for it. */
    readonly expectContinueTimeoutSeconds: number;
    readonly keepAliveSeconds: number;
    readonly sendUserHeader: boolean;
    /** Empty sends `dashgate/<version>`. */
    readonly userAgent: string;
    /** Bytes; 0 means no limit. */
    readonly responseLimit: number;
    readonly maxIdleConnections: number;
    /** 0 means no limit. */
    readonly maxConnsPerHost: number;
    readonly idleConnTimeoutSeconds: number;
    /** This deployment's name in the Via header of proxied requests; a request already carrying it is a loop. */
    readonly viaPseudonym: string;
    /** Buffered data source calls (queries, resources, health checks, live queries) in flight at once on this instance; the rest wait. */
    readonly concurrentCalls: number;
    /** The same, per request; at most `concurrentCalls`. */
    readonly concurrentCallsPerRequest: number;
  };
  /** `POST /api/ds/query` and the graph's queries. */
  readonly query: {
    /** Data sources one request queries at once. */
    readonly concurrentQueryLimit: number;
    /** Queries (refIds) one request may hold. */
    readonly maxQueriesPerRequest: number;
    /** Most data points (rows times fields) one refId may answer. */
    readonly maxPointsPerResponse: number;
    /** Most series (frames) one refId may answer. */
    readonly maxSeriesPerResponse: number;
    /** Most data points all refIds of one request may answer together. */
    readonly maxPointsPerRequest: number;
    /** Most series all refIds of one request may answer together. */
    readonly maxSeriesPerRequest: number;
    /** Most data points the query fields of one GraphQL request may answer together. */
    readonly maxPointsPerGraphRequest: number;
    /** Bytes of answers built and sent at once on this instance, over every request. */
    readonly maxAnswerBytesInFlight: number;
  };
  readonly log: { readonly mode: readonly LogMode[]; readonly level: LogLevel };
  readonly alerting: { readonly enabled: boolean };
  readonly graphql: {
    readonly introspection: boolean;
    readonly graphiql: boolean;
    readonly maxDepth: number;
    readonly maxAliases: number;
    readonly maxCost: number;
    readonly maskErrors: boolean;
    readonly csrfPrevention: boolean;
    readonly maxSubscriptions: number;
    readonly maxSubscriptionsPerPrincipal: number;
    readonly subscriptionQueueSize: number;
    readonly trustedDocuments: TrustedDocumentsMode;
    /** Absolute folder of the trusted-document manifests. */
    readonly trustedDocumentsPath: string;
  };
  readonly metrics: { readonly enabled: boolean };
  /** OpenTelemetry traces (`[tracing.opentelemetry]` and its `otlp` and `jaeger` sections). */
  readonly tracing: {
    /** Where spans are sent (an OTLP/HTTP traces URL); null when tracing is off, the default. */
    readonly endpoint: string | null;
    /** Formats read from requests and written to calls to data sources, in order; never empty. */
    readonly propagation: readonly TracePropagation[];
    readonly samplerType: TraceSamplerType;
    readonly samplerParam: number;
    readonly serviceName: string;
    /** Extra resource attributes. */
    readonly customAttributes: ReadonlyArray<readonly [key: string, value: string]>;
    /** No spans for `/api/health` and `/metrics`. */
    readonly filterOperationalEndpoints: boolean;
  };
  /** Live queries (the `liveQuery` subscription). */
  readonly live: {
    /** Shortest refresh a live query may ask for, in milliseconds. */
    readonly minRefreshMs: number;
    /** Data source calls per second one caller's live queries may ask for on this instance; 0: no limit. */
    readonly maxUpstreamCallsPerSecond: number;
    /** Largest encoded answer shared with the other instances through PostgreSQL, in bytes; 0: live queries are not shared. */
    readonly maxSharedAnswerBytes: number;
  };
}

export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd ?? process.cwd());
  const homePath = resolve(cwd, options.homePath ?? '.');

  const defaults = readIni(DEFAULTS_FILE);
  const ini = copyIni(defaults);

  const configArg = splitConfigArgument(options.argv ?? process.argv.slice(2)).configFile;
  const configFile = configArg === null ? null : resolve(cwd, configArg);
  if (configFile !== null) {
    // As in Grafana, an empty value in the custom file means "keep the default", not "blank it".
    for (const [section, entries] of readIni(configFile)) {
      for (const [key, value] of entries) if (value !== '') setValue(ini, section, key, value);
    }
  }

  // Env can only override keys that exist, so a typo'd variable never invents a setting.
  for (const [section, entries] of ini) {
    for (const key of entries.keys()) {
      const value = env[envKey(section, key)];
      if (value) entries.set(key, value);
    }
  }

  for (const [section, entries] of Object.entries(options.overrides ?? {})) {
    for (const [key, value] of Object.entries(entries)) setValue(ini, section, key, value);
  }

  expandReferences(ini, env, cwd);
  interpolate(ini);

  const raw: RawSettings = [...ini].map(([section, entries]) => [section, [...entries]] as const);
  return deepFreeze({ raw, configFile, ...typedSettings(ini, defaults, homePath) });
}

function readIni(file: string): IniSections {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read config file ${file}: ${(error as Error).message}`);
  }
  return parseIni(text, file);
}

function copyIni(ini: IniSections): IniSections {
  return new Map([...ini].map(([section, entries]) => [section, new Map(entries)]));
}

function setValue(ini: IniSections, section: string, key: string, value: string): void {
  let entries = ini.get(section);
  if (!entries) ini.set(section, (entries = new Map()));
  entries.set(key, value);
}

/**
 * The original's one reference pattern: `${VAR}` and `$__env{VAR}` (a variable), `$__file{path}`,
 * any other `$__name{...}`. The braces hold at least one character; `$$`, a plain `$VAR` and `${}`
 * mean nothing and stay as written.
 */
const REFERENCE = /\$(|__\w+)\{([^}]+)\}/g;

/**
 * Expands references in every value, variables first and then files, as the original does (so a
 * variable's value may itself be a `$__file{}` reference, but is not searched for variables again).
 * An unset variable is empty, except HOSTNAME, which falls back to the machine's host name. Other
 * `$__name{}` kinds are refused rather than used verbatim.
 */
function expandReferences(ini: IniSections, env: Readonly<Record<string, string | undefined>>, cwd: string): void {
  const variable = (name: string): string => env[name] || (name === 'HOSTNAME' ? hostname() : '');
  for (const [section, entries] of ini) {
    for (const [key, value] of entries) {
      if (!value.includes('{')) continue;
      const withVariables = value.replace(REFERENCE, (whole, kind: string, argument: string) => (kind === '' || kind === '__env' ? variable(argument) : whole));
      entries.set(key, withVariables.replace(REFERENCE, (whole, kind: string, argument: string) => {
        if (kind === '' || kind === '__env') return whole; // text a variable's value brought in
        if (kind === '__file') {
          try {
            return readFileSync(resolve(cwd, argument), 'utf8').trim();
          } catch (error) {
            throw new Error(`[${section}] ${key}: cannot read $__file{${argument}}: ${(error as Error).message}`);
          }
        }
        throw new Error(`[${section}] ${key}: unsupported reference $${kind}{...} (only \${VAR}, $__env and $__file)`);
      }));
    }
  }
}

const INTERPOLATION = /%\(([^)]+)\)s/g;
/** go-ini's bound on nested `%(key)s` references, which also ends reference cycles. */
const MAX_INTERPOLATION_DEPTH = 99;

/** `%(key)s` takes the value of `key` from the same section, else from DEFAULT; unknown keys stay as written. */
function interpolate(ini: IniSections): void {
  const defaults = ini.get(DEFAULT_SECTION)!;
  for (const entries of ini.values()) {
    const lookup = (whole: string, name: string): string => entries.get(name) ?? defaults.get(name) ?? whole;
    for (const [key, value] of entries) {
      let current = value;
      for (let depth = 0; depth < MAX_INTERPOLATION_DEPTH && current.includes('%('); depth++) {
        const next = current.replace(INTERPOLATION, lookup);
        if (next === current) break;
        current = next;
      }
      entries.set(key, current);
    }
  }
}

type Typed = Omit<Settings, 'raw' | 'configFile'>;

const LOG_MODES: readonly LogMode[] = ['console', 'file', 'syslog'];
/** RFC 9110 `token`: header names, and pseudonyms in Via. */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Typed view of the effective ini. A blank number, boolean or choice falls back to its value in
 * conf/defaults.ini (so the defaults live in one place); an unparseable one is an error.
 */
function typedSettings(ini: IniSections, defaults: IniSections, homePath: string): Typed {
  const text = (section: string, key: string): string => ini.get(section)?.get(key) ?? '';
  const invalid = (section: string, key: string, expected: string): Error => {
    // Redacted, so that a mistyped secret never reaches a log line.
    const shown = redactedValue(envKey(section, key), text(section, key));
    return new Error(`invalid setting [${section}] ${key} = ${JSON.stringify(shown)}: expected ${expected}`);
  };
  const required = (section: string, key: string): string => {
    const value = text(section, key) || (defaults.get(section)?.get(key) ?? '');
    if (value === '') throw invalid(section, key, 'a non-empty value');
    return value;
  };
  const bool = (section: string, key: string): boolean => {
    const value = required(section, key).toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(value)) return true;
    if (['false', '0', 'no', 'off'].includes(value)) return false;
    throw invalid(section, key, 'true or false');
  };
  const int = (section: string, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const value = required(section, key);
    const number = /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
    if (!(number >= min && number <= max)) throw invalid(section, key, `an integer from ${min} to ${max}`);
    return number;
  };
  const period = (section: string, key: string): number => {
    const value = parsePeriod(required(section, key));
    if (value === null) throw invalid(section, key, 'a duration such as 500ms, 1s or 1m');
    return value;
  };
  const oneOf = <T extends string>(section: string, key: string, allowed: readonly T[]): T => {
    const value = required(section, key);
    if (!(allowed as readonly string[]).includes(value)) throw invalid(section, key, `one of ${allowed.join(', ')}`);
    return value as T;
  };

  const paths = {
    data: resolve(homePath, required('paths', 'data')),
    logs: resolve(homePath, required('paths', 'logs')),
    provisioning: resolve(homePath, required('paths', 'provisioning')),
  };

  const protocol = oneOf('server', 'protocol', ['http', 'https'] as const);
  if (protocol === 'https') {
    for (const key of ['cert_file', 'cert_key']) if (!text('server', key)) throw invalid('server', key, 'a file when protocol is https');
  }
  // Parsed before root_url, which usually embeds it: a bad port is reported as itself.
  const httpPort = int('server', 'http_port', 0, 65535);
  const rootUrl = required('server', 'root_url');
  if (!URL.canParse(rootUrl)) throw invalid('server', 'root_url', 'an absolute URL');

  const databaseType = oneOf('database', 'type', ['embedded', 'postgres'] as const);
  const databaseUrl = text('database', 'url');
  if (databaseUrl && !/^postgres(ql)?:$/.test(URL.parse(databaseUrl)?.protocol ?? '')) {
    throw invalid('database', 'url', 'a postgres:// or postgresql:// URL');
  }
  const hostPort = splitHostPort(required('database', 'host'));
  if (!hostPort) throw invalid('database', 'host', 'host or host:port');

  const logModes = required('log', 'mode').split(/[\s,]+/).filter(Boolean);
  if (!logModes.every((mode) => (LOG_MODES as readonly string[]).includes(mode))) throw invalid('log', 'mode', `some of ${LOG_MODES.join(', ')}`);

  const authProxyEnabled = bool('auth.proxy', 'enabled');

  const concurrentCalls = int('dataproxy', 'concurrent_calls', 1);
  const viaPseudonym = required('dataproxy', 'via_pseudonym');
  if (!HTTP_TOKEN.test(viaPseudonym)) throw invalid('dataproxy', 'via_pseudonym', "a token (letters, digits and !#$%&'*+-.^_`|~)");

  const trustedProxies = text('server', 'trusted_proxies').split(/[\s,]+/).filter(Boolean);
  try {
    new TrustedProxies(trustedProxies);
  } catch (error) {
    throw invalid('server', 'trusted_proxies', `IP addresses or CIDR ranges (${(error as Error).message})`);
  }

  return {
    appMode: oneOf(DEFAULT_SECTION, 'app_mode', ['production', 'development'] as const),
    paths,
    server: {
      protocol,
      httpAddr: text('server', 'http_addr'),
      httpPort,
      domain: required('server', 'domain'),
      rootUrl: rootUrl.endsWith('/') ? rootUrl : `${rootUrl}/`,
      routerLogging: bool('server', 'router_logging'),
      dataProxyLogging: bool('server', 'data_proxy_logging'),
      certFile: text('server', 'cert_file'),
      certKey: text('server', 'cert_key'),
      requestBodyLimitBytes: int('server', 'request_body_limit_bytes', 1),
      maxHeaderBytes: int('server', 'max_header_bytes', 1),
      readHeaderTimeoutSeconds: int('server', 'read_header_timeout_seconds', 0),
      keepAliveTimeoutSeconds: int('server', 'keep_alive_timeout_seconds', 0),
      trustedProxies,
      shutdownTimeoutSeconds: int('server', 'shutdown_timeout_seconds', 0),
      shutdownDrainSeconds: int('server', 'shutdown_drain_seconds', 0),
      compatibleVersion: required('server', 'compatible_version'),
    },
    database: {
      type: databaseType,
      host: hostPort.host,
      port: hostPort.port,
      name: required('database', 'name'),
      user: text('database', 'user'),
      password: text('database', 'password'),
      url: databaseUrl,
      sslMode: oneOf('database', 'ssl_mode', ['disable', 'require', 'verify-ca', 'verify-full'] as const),
      path: resolve(paths.data, required('database', 'path')),
      embeddedPort: int('database', 'embedded_port', 0, 65535),
      maxOpenConn: int('database', 'max_open_conn', 1),
    },
    security: {
      adminUser: required('security', 'admin_user'),
      adminPassword: text('security', 'admin_password'),
      adminEmail: text('security', 'admin_email'),
      secretKey: required('security', 'secret_key'),
      disableBruteForceLoginProtection: bool('security', 'disable_brute_force_login_protection'),
      bruteForceLoginProtectionMaxAttempts: int('security', 'brute_force_login_protection_max_attempts', 1),
      disableIpAddressLoginProtection: bool('security', 'disable_ip_address_login_protection'),
      dataSourceProxyWhitelist: text('security', 'data_source_proxy_whitelist').split(/[\s,]+/).filter(Boolean),
      dataSourceProxyDenyPrivate: bool('security', 'data_source_proxy_deny_private'),
      disableGravatar: bool('security', 'disable_gravatar'),
    },
    users: {
      allowSignUp: bool('users', 'allow_sign_up'),
      allowOrgCreate: bool('users', 'allow_org_create'),
      autoAssignOrg: bool('users', 'auto_assign_org'),
      autoAssignOrgId: int('users', 'auto_assign_org_id', 1),
      autoAssignOrgRole: oneOf('users', 'auto_assign_org_role', BASIC_ROLES),
    },
    auth: { loginCookieName: required('auth', 'login_cookie_name') },
    authBasic: { enabled: bool('auth.basic', 'enabled') },
    authAnonymous: { enabled: bool('auth.anonymous', 'enabled') },
    authLdap: { enabled: bool('auth.ldap', 'enabled') },
    authProxy: {
      enabled: authProxyEnabled,
      headerName: authProxyEnabled ? required('auth.proxy', 'header_name') : text('auth.proxy', 'header_name'),
    },
    dataproxy: {
      logging: bool('dataproxy', 'logging'),
      timeoutSeconds: int('dataproxy', 'timeout', 1),
      dialTimeoutSeconds: int('dataproxy', 'dialTimeout', 1),
      tlsHandshakeTimeoutSeconds: int('dataproxy', 'tls_handshake_timeout_seconds', 1),
      expectContinueTimeoutSeconds: int('dataproxy', 'expect_continue_timeout_seconds', 0),
      keepAliveSeconds: int('dataproxy', 'keep_alive_seconds', 0),
      sendUserHeader: bool('dataproxy', 'send_user_header'),
      userAgent: text('dataproxy', 'user_agent'),
      responseLimit: int('dataproxy', 'response_limit', 0),
      maxIdleConnections: int('dataproxy', 'max_idle_connections', 0),
      maxConnsPerHost: int('dataproxy', 'max_conns_per_host', 0),
      idleConnTimeoutSeconds: int('dataproxy', 'idle_conn_timeout_seconds', 0),
      viaPseudonym,
      concurrentCalls,
      concurrentCallsPerRequest: Math.min(int('dataproxy', 'concurrent_calls_per_request', 1), concurrentCalls),
    },
    query: {
      concurrentQueryLimit: int('query', 'concurrent_query_limit', 1, 64),
      maxQueriesPerRequest: int('query', 'max_queries_per_request', 1),
      maxPointsPerResponse: int('query', 'max_points_per_response', 1),
      maxSeriesPerResponse: int('query', 'max_series_per_response', 1),
      maxPointsPerRequest: int('query', 'max_points_per_request', 1),
      maxSeriesPerRequest: int('query', 'max_series_per_request', 1),
      maxPointsPerGraphRequest: int('query', 'max_points_per_graph_request', 1),
      maxAnswerBytesInFlight: int('query', 'max_answer_bytes_in_flight', 1),
    },
    log: { mode: logModes as LogMode[], level: oneOf('log', 'level', ['trace', 'debug', 'info', 'warn', 'error', 'critical'] as const) },
    alerting: { enabled: bool('alerting', 'enabled') },
    graphql: {
      introspection: bool('graphql', 'introspection'),
      graphiql: bool('graphql', 'graphiql'),
      maxDepth: int('graphql', 'max_depth', 1),
      maxAliases: int('graphql', 'max_aliases', 1),
      maxCost: int('graphql', 'max_cost', 1),
      maskErrors: bool('graphql', 'mask_errors'),
      csrfPrevention: bool('graphql', 'csrf_prevention'),
      maxSubscriptions: int('graphql', 'max_subscriptions', 0),
      maxSubscriptionsPerPrincipal: int('graphql', 'max_subscriptions_per_principal', 0),
      subscriptionQueueSize: int('graphql', 'subscription_queue_size', 1),
      trustedDocuments: oneOf('graphql', 'trusted_documents', ['off', 'allow', 'only'] as const),
      trustedDocumentsPath: resolve(homePath, required('graphql', 'trusted_documents_path')),
    },
    metrics: { enabled: bool('metrics', 'enabled') },
    tracing: tracingSettings(text, bool, invalid),
    live: {
      minRefreshMs: period('live', 'min_refresh'),
      maxUpstreamCallsPerSecond: int('live', 'max_upstream_calls_per_second', 0),
      // Below PostgreSQL's 1 GB bound on one value.
      maxSharedAnswerBytes: int('live', 'max_shared_answer_bytes', 0, 512 * 1024 * 1024),
    },
  };
}

const TRACE_PROPAGATIONS: readonly TracePropagation[] = ['w3c', 'jaeger'];
const TRACE_SAMPLERS: readonly TraceSamplerType[] = ['const', 'probabilistic', 'rateLimiting', 'remote'];

/**
 * The tracing sections, read as the original reads them: the jaeger section's address wins over the
 * otlp section's, each with its own `propagation`; `[tracing.opentelemetry]` sampler settings win
 * when set, else the legacy `[tracing.jaeger]` ones apply (const, 1: every trace kept). Both
 * addresses are sent OTLP over HTTP here (the original speaks gRPC to the otlp one).
 */
function tracingSettings(
  text: (section: string, key: string) => string,
  bool: (section: string, key: string) => boolean,
  invalid: (section: string, key: string, expected: string) => Error,
): Settings['tracing'] {
  const OTEL = 'tracing.opentelemetry';
  const JAEGER = 'tracing.opentelemetry.jaeger';
  const OTLP = 'tracing.opentelemetry.otlp';
  const LEGACY = 'tracing.jaeger';
  const number = (section: string, key: string): number | null => {
    const value = text(section, key).trim();
    if (value === '') return null;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw invalid(section, key, 'a number');
    return parsed;
  };

  let endpoint: string | null = null;
  let propagationAt: string = OTLP;
  const jaegerAddress = text(JAEGER, 'address').trim() || text(LEGACY, 'address').trim();
  if (jaegerAddress) {
    const section = text(JAEGER, 'address').trim() ? JAEGER : LEGACY;
    endpoint = otlpEndpoint(jaegerAddress, false, true);
    if (endpoint === null) throw invalid(section, 'address', 'host:port or an http(s) URL');
    propagationAt = JAEGER;
  } else if (text(OTLP, 'address').trim()) {
    endpoint = otlpEndpoint(text(OTLP, 'address').trim(), !bool(OTLP, 'insecure'), false);
    if (endpoint === null) throw invalid(OTLP, 'address', 'host:port or an http(s) URL');
  }

  const propagation: TracePropagation[] = [];
  for (const name of text(propagationAt, 'propagation').split(',').map((p) => p.trim()).filter(Boolean)) {
    if (!(TRACE_PROPAGATIONS as readonly string[]).includes(name)) throw invalid(propagationAt, 'propagation', `some of ${TRACE_PROPAGATIONS.join(', ')}, comma separated`);
    if (!propagation.includes(name as TracePropagation)) propagation.push(name as TracePropagation);
  }
  if (propagation.length === 0) propagation.push('w3c');

  const samplerSection = text(OTEL, 'sampler_type').trim() ? OTEL : LEGACY;
  const samplerType = text(samplerSection, 'sampler_type').trim() || 'const';
  if (!(TRACE_SAMPLERS as readonly string[]).includes(samplerType)) throw invalid(samplerSection, 'sampler_type', `one of ${TRACE_SAMPLERS.join(', ')}`);
  // As the original: a zero or empty [tracing.opentelemetry] sampler_param leaves the legacy one.
  const otelParam = number(OTEL, 'sampler_param');
  const samplerParam = otelParam !== null && otelParam !== 0 ? otelParam : (number(LEGACY, 'sampler_param') ?? 1);
  const paramSection = otelParam !== null && otelParam !== 0 ? OTEL : LEGACY;
  if (samplerType === 'const' && samplerParam > 0 && samplerParam < 1) {
    throw invalid(paramSection, 'sampler_param', '0 or 1 for the const sampler');
  }
  if (samplerType === 'rateLimiting' && samplerParam < 0) throw invalid(paramSection, 'sampler_param', 'traces per second, 0 or more');

  const attributesSection = text(OTEL, 'custom_attributes').trim() ? OTEL : LEGACY;
  const attributesKey = attributesSection === OTEL ? 'custom_attributes' : 'always_included_tag';
  const customAttributes: Array<readonly [string, string]> = [];
  for (const pair of text(attributesSection, attributesKey).split(',')) {
    if (pair === '') continue;
    const colon = pair.indexOf(':');
    if (colon < 0) throw invalid(attributesSection, attributesKey, 'key:value pairs, comma separated');
    customAttributes.push([pair.slice(0, colon), pair.slice(colon + 1)]);
  }

  return {
    endpoint,
    propagation,
    samplerType: samplerType as TraceSamplerType,
    samplerParam,
    serviceName: text(OTEL, 'service_name').trim() || 'dashgate',
    customAttributes,
    filterOperationalEndpoints: bool(OTEL, 'filter_operational_endpoints'),
  };
}

/** OTLP/HTTP's traces path, added to an address that names none. */
const OTLP_TRACES_PATH = '/v1/traces';

/**
 * The URL spans are posted to, from a `host:port` (http, or https when `secure`) or an http(s)
 * URL (given no path, `/v1/traces`); null when it is neither. `legacyJaeger`: a Jaeger collector's
 * old Thrift URL (`/api/traces`) goes to the same host's OTLP/HTTP port and path instead, as the
 * original corrects it.
 */
export function otlpEndpoint(address: string, secure: boolean, legacyJaeger: boolean): string | null {
  if (/^https?:\/\//i.test(address)) {
    const url = URL.parse(address);
    if (!url || !url.hostname) return null;
    if (legacyJaeger && url.pathname === '/api/traces') {
      url.port = '4318';
      url.pathname = OTLP_TRACES_PATH;
    } else if (url.pathname === '/' || url.pathname === '') {
      url.pathname = OTLP_TRACES_PATH;
    }
    return url.href;
  }
  const url = URL.parse(`${secure ? 'https' : 'http'}://${address}`);
  if (!url || !url.hostname || !url.port || url.pathname !== '/' || url.search || url.username) return null;
  url.pathname = OTLP_TRACES_PATH;
  return url.href;
}

const DEFAULT_PG_PORT = 5432;

/**
 * `host`, `host:port`, `[v6]`, `[v6]:port`, a bare IPv6 address, or a unix-socket folder (`/...`,
 * `/...:port` for a server on another port than 5432: the socket's name carries the port).
 * Returns null when the port part is not a valid port.
 */
function splitHostPort(value: string): { host: string; port: number } | null {
  let host = value;
  let port = '';
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    host = value.slice(1, end);
    const rest = value.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) return null;
    port = rest.slice(1);
  } else if (value.startsWith('/')) {
    const folderAndPort = /^(\/.*):(\d+)$/.exec(value);
    if (folderAndPort) [, host = '', port = ''] = folderAndPort;
  } else if (value.split(':').length === 2) {
    [host, port] = value.split(':');
  }
  if (port === '') return host ? { host, port: DEFAULT_PG_PORT } : null;
  const number = /^\d+$/.test(port) ? Number(port) : NaN;
  return host && number >= 1 && number <= 65535 ? { host, port: number } : null;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
