import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { envKey, loadSettings, type LoadSettingsOptions, type Settings } from '../../src/config/settings.ts';

/** The effective raw value of `[section] key`, as the admin settings document shows it. */
function get(settings: Pick<Settings, 'raw'>, section: string, key: string): string | undefined {
  return settings.raw.find(([name]) => name === section)?.[1].find(([name]) => name === key)?.[1];
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dashgate-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Isolated from the real process: no argv, no env, a throwaway cwd. */
function load(options: LoadSettingsOptions = {}): Settings {
  return loadSettings({ argv: [], env: {}, cwd: dir, ...options });
}

describe('envKey', () => {
  it('upper-cases, maps "." and "-" in sections and "." in keys to "_"', () => {
    expect(envKey('auth.generic_oauth', 'client_secret')).toBe('GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET');
    expect(envKey('my-section.sub', 'a.b-c')).toBe('GF_MY_SECTION_SUB_A_B-C');
    expect(envKey('DEFAULT', 'app_mode')).toBe('GF_DEFAULT_APP_MODE');
    expect(envKey('dataproxy', 'dialTimeout')).toBe('GF_DATAPROXY_DIALTIMEOUT');
  });
});

describe('loadSettings defaults', () => {
  it('reads conf/defaults.ini into typed fields', () => {
    const s = load();
    expect(s.configFile).toBeNull();
    expect(s.appMode).toBe('production');
    expect(s.server).toMatchObject({ protocol: 'http', httpAddr: '', httpPort: 3000, domain: 'localhost', rootUrl: 'http://localhost:3000/' });
    expect(s.server).toMatchObject({ requestBodyLimitBytes: 1048576, maxHeaderBytes: 65536, readHeaderTimeoutSeconds: 10, keepAliveTimeoutSeconds: 5, shutdownTimeoutSeconds: 30, shutdownDrainSeconds: 0, trustedProxies: [] });
    expect(s.database).toEqual({
      type: 'embedded', host: '127.0.0.1', port: 5432, name: 'dashgate', user: 'dashgate', password: '', url: '',
      sslMode: 'disable', path: join(dir, 'data', 'postgres'), embeddedPort: 0, maxOpenConn: 10,
    });
    expect(s.paths).toEqual({ data: join(dir, 'data'), logs: join(dir, 'data', 'log'), provisioning: join(dir, 'provisioning') });
    expect(s.security).toEqual({
      adminUser: 'admin', adminPassword: 'admin', adminEmail: 'admin@localhost', secretKey: 'SW2YcwTIb9zpOOhoPsMm',
      disableBruteForceLoginProtection: false, bruteForceLoginProtectionMaxAttempts: 5, disableIpAddressLoginProtection: false,
      dataSourceProxyWhitelist: [], dataSourceProxyDenyPrivate: false, disableGravatar: false,
    });
    expect(s.users).toEqual({ allowSignUp: false, allowOrgCreate: false, autoAssignOrg: true, autoAssignOrgId: 1, autoAssignOrgRole: 'Viewer' });
    expect(s.auth.loginCookieName).toBe('grafana_session');
    expect(s.authBasic.enabled).toBe(true);
    expect(s.authProxy).toEqual({ enabled: false, headerName: 'X-WEBAUTH-USER' });
    expect(s.dataproxy).toEqual({
      logging: false, timeoutSeconds: 30, dialTimeoutSeconds: 10, tlsHandshakeTimeoutSeconds: 10, expectContinueTimeoutSeconds: 1, keepAliveSeconds: 30, sendUserHeader: false,
      userAgent: '', responseLimit: 0, maxIdleConnections: 100, maxConnsPerHost: 0, idleConnTimeoutSeconds: 90, viaPseudonym: 'dashgate',
      concurrentCalls: 256, concurrentCallsPerRequest: 16,
    });
    expect(s.log).toEqual({ mode: ['console'], level: 'info' });
    expect(s.alerting.enabled).toBe(true);
    expect(s.graphql).toEqual({
      introspection: true, graphiql: true, maxDepth: 12, maxAliases: 30, maxCost: 5000, maskErrors: true, csrfPrevention: true,
      maxSubscriptions: 5000, maxSubscriptionsPerPrincipal: 50, subscriptionQueueSize: 1000,
      trustedDocuments: 'off', trustedDocumentsPath: join(dir, 'trusted-documents'),
    });
    expect(s.metrics.enabled).toBe(true);
    expect(s.live).toEqual({ minRefreshMs: 1000, maxUpstreamCallsPerSecond: 50, maxSharedAnswerBytes: 16 * 1024 * 1024 });
  });

  it('bounds [live] max_shared_answer_bytes below what one PostgreSQL value holds; 0 turns sharing off', () => {
    expect(load({ overrides: { live: { max_shared_answer_bytes: '0' } } }).live.maxSharedAnswerBytes).toBe(0);
    expect(() => load({ overrides: { live: { max_shared_answer_bytes: String(2 ** 30) } } })).toThrow('invalid setting [live] max_shared_answer_bytes = "1073741824": expected an integer from 0 to 536870912');
    expect(() => load({ overrides: { live: { max_shared_answer_bytes: '16MiB' } } })).toThrow('expected an integer from 0 to 536870912');
  });

  it('never lets one request have more calls in flight than the whole instance', () => {
    expect(load({ overrides: { dataproxy: { concurrent_calls: '8', concurrent_calls_per_request: '32' } } }).dataproxy).toMatchObject({ concurrentCalls: 8, concurrentCallsPerRequest: 8 });
    expect(load({ overrides: { dataproxy: { concurrent_calls: '8', concurrent_calls_per_request: '3' } } }).dataproxy).toMatchObject({ concurrentCalls: 8, concurrentCallsPerRequest: 3 });
  });

  it('exposes the effective ini as raw, DEFAULT first', () => {
    const s = load();
    expect(s.raw[0][0]).toBe('DEFAULT');
    expect(s.raw[0][1][0]).toEqual(['app_mode', 'production']);
    expect(s.raw.map(([section]) => section).slice(0, 4)).toEqual(['DEFAULT', 'paths', 'server', 'database']);
    expect(s.raw.find(([section]) => section === 'server')?.[1]).toContainEqual(['root_url', 'http://localhost:3000/']);
  });

  it('resolves [paths] against homePath (itself relative to cwd) and [database] path against [paths] data', () => {
    const s = load({ homePath: 'home', overrides: { paths: { data: '/srv/dg' }, database: { path: 'pg' } } });
    expect(s.paths.logs).toBe(join(dir, 'home', 'data', 'log'));
    expect(s.paths.data).toBe('/srv/dg');
    expect(s.database.path).toBe('/srv/dg/pg');
  });

  it('is deeply frozen', () => {
    const s = load();
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.server)).toBe(true);
    expect(Object.isFrozen(s.raw)).toBe(true);
    expect(Object.isFrozen(s.raw[1])).toBe(true);
    expect(Object.isFrozen(s.raw[1][1])).toBe(true);
    expect(Object.isFrozen(s.raw[1][1][0])).toBe(true);
    expect(Object.isFrozen(s.security.dataSourceProxyWhitelist)).toBe(true);
    expect(() => {
      (s.server as { httpPort: number }).httpPort = 1;
    }).toThrow(TypeError);
  });

  it('returns independent objects on each call', () => {
    const a = load({ overrides: { server: { http_port: '1' } } });
    const b = load();
    expect(a.server.httpPort).toBe(1);
    expect(b.server.httpPort).toBe(3000);
  });
});

describe('layering: defaults < custom file < env < overrides', () => {
  it('reads --config FILE and --config=FILE (relative to cwd); only non-empty values override; new keys and sections are created', () => {
    writeConfig('custom.ini', [
      'app_mode = development',
      '[server]',
      'http_port = 4000',
      'domain =', // empty: keeps the default
      'brand_new = yes',
      '[custom.section]',
      'k = v',
      'blank =',
    ].join('\n'));
    for (const argv of [['--config', 'custom.ini'], ['--config=custom.ini'], ['-config', join(dir, 'custom.ini')]]) {
      const s = load({ argv: ['--other', ...argv] });
      expect(s.configFile).toBe(join(dir, 'custom.ini'));
      expect(s.appMode).toBe('development');
      expect(s.server.httpPort).toBe(4000);
      expect(s.server.domain).toBe('localhost');
      expect(s.server.rootUrl).toBe('http://localhost:4000/');
      expect(get(s, 'server', 'brand_new')).toBe('yes');
      expect(get(s, 'custom.section', 'k')).toBe('v');
      expect(get(s, 'custom.section', 'blank')).toBeUndefined();
      // new sections go after the defaults' sections
      expect(s.raw.at(-1)![0]).toBe('custom.section');
    }
  });

  it('fails clearly on a missing --config file or a missing file name', () => {
    expect(() => load({ argv: ['--config', 'nope.ini'] })).toThrow(/cannot read config file .*nope\.ini/);
    expect(() => load({ argv: ['--config'] })).toThrow('--config needs a file name');
    expect(() => load({ argv: ['--config='] })).toThrow('--config= needs a file name');
  });

  it('reports parse errors of the custom file with its name and line', () => {
    const file = writeConfig('broken.ini', '[server]\nhttp_port = 1\noops\n');
    expect(() => load({ argv: ['--config', file] })).toThrow(`${file}:3:`);
  });

  it('applies GF_<SECTION>_<KEY> env over the custom file, only for existing keys and non-empty values', () => {
    writeConfig('env.ini', '[server]\nhttp_port = 4000\n[extra]\nadded = from-file\n');
    const s = load({
      argv: ['--config', 'env.ini'],
      env: {
        GF_SERVER_HTTP_PORT: '5000',
        GF_SERVER_DOMAIN: '', // empty: ignored
        GF_SERVER_NOT_A_KEY: 'x', // unknown key: ignored
        GF_NOSECTION_KEY: 'x',
        GF_EXTRA_ADDED: 'from-env', // keys created by the custom file can be overridden
        GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET: 's3cret',
        GF_DEFAULT_APP_MODE: 'development',
        GF_DATAPROXY_DIALTIMEOUT: '3',
        GF_DATAPROXY_MAX_CONNS_PER_HOST: '8',
      },
    });
    expect(s.server.httpPort).toBe(5000);
    expect(s.dataproxy.maxConnsPerHost).toBe(8);
    expect(s.server.domain).toBe('localhost');
    expect(get(s, 'server', 'not_a_key')).toBeUndefined();
    expect(get(s, 'server', 'NOT_A_KEY')).toBeUndefined();
    expect(s.raw.some(([section]) => section.toLowerCase() === 'nosection')).toBe(false);
    expect(get(s, 'extra', 'added')).toBe('from-env');
    expect(get(s, 'auth.generic_oauth', 'client_secret')).toBe('s3cret');
    expect(s.appMode).toBe('development');
    expect(s.dataproxy.dialTimeoutSeconds).toBe(3);
  });

  it('applies overrides last; they may blank values and create keys', () => {
    writeConfig('ov.ini', '[server]\nhttp_port = 4000\n');
    const s = load({
      argv: ['--config', 'ov.ini'],
      env: { GF_SERVER_HTTP_PORT: '5000' },
      overrides: { server: { http_port: '6000' }, security: { admin_password: '' }, newsec: { a: '' } },
    });
    expect(s.server.httpPort).toBe(6000);
    expect(s.security.adminPassword).toBe('');
    expect(get(s, 'newsec', 'a')).toBe('');
  });
});

describe('expansion', () => {
  it('expands $__env{VAR} (missing -> empty) and $__file{path} (trimmed, relative to cwd)', () => {
    writeConfig('db-password.txt', '  file-secret \n');
    const s = load({
      env: { DB_HOST: 'db.internal', GF_DATABASE_USER: '$__env{DB_USER_FROM_ENV}', DB_USER_FROM_ENV: 'svc' },
      overrides: {
        database: { type: 'postgres', host: '$__env{DB_HOST}:6543', password: '$__file{db-password.txt}', name: 'x$__env{MISSING}y' },
      },
    });
    expect(s.database).toMatchObject({ host: 'db.internal', port: 6543, password: 'file-secret', name: 'xy', user: 'svc' });
    expect(get(s, 'database', 'password')).toBe('file-secret');
  });

  it('fails on an unreadable $__file{} or an unsupported reference, naming the key', () => {
    expect(() => load({ overrides: { database: { password: '$__file{/no/such/file}' } } })).toThrow(/\[database\] password: cannot read \$__file\{\/no\/such\/file\}/);
    expect(() => load({ overrides: { database: { password: '$__vault{x}' } } })).toThrow(/\[database\] password: unsupported reference \$__vault/);
  });

  it('interpolates %(key)s from the same section, then DEFAULT, after env and expansion', () => {
    const s = load({
      env: { GF_SERVER_DOMAIN: 'example.com', PORT: '8080' },
      overrides: { server: { protocol: 'https', cert_file: 'c', cert_key: 'k', http_port: '$__env{PORT}' }, DEFAULT: { base: '/dg' }, x: { p: '%(base)s/a', q: '%(unknown)s', r: '%(r)s' } },
    });
    expect(s.server.rootUrl).toBe('https://example.com:8080/');
    expect(get(s, 'server', 'root_url')).toBe('https://example.com:8080/');
    expect(get(s, 'x', 'p')).toBe('/dg/a');
    expect(get(s, 'x', 'q')).toBe('%(unknown)s');
    expect(get(s, 'x', 'r')).toBe('%(r)s');
  });

  it('expands ${VAR} like $__env{VAR}, in the ini files and in GF_ variables; an unset variable is empty', () => {
    const file = writeConfig('braces.ini', [
      '[server]',
      'domain = ${DG_HOST}.$__env{DG_ZONE}',
      '[database]',
      'name = db_${DG_UNSET}$__env{DG_UNSET}x',
      '[paths]',
      'logs = ${DG_LOGS}',
    ].join('\n'));
    const s = load({
      argv: ['--config', file],
      env: {
        DG_HOST: 'dash', DG_ZONE: 'example.com', DG_LOGS: '/var/log/dg', DG_USER: 'svc', DG_PORT: '7000',
        GF_DATABASE_USER: '${DG_USER}-$__env{DG_USER}', GF_SERVER_HTTP_PORT: '${DG_PORT}', GF_DATABASE_PASSWORD: 'p${DG_UNSET}w',
      },
    });
    expect(s.server.domain).toBe('dash.example.com');
    expect(s.server.rootUrl).toBe('http://dash.example.com:7000/');
    expect(s.server.httpPort).toBe(7000);
    expect(s.database).toMatchObject({ name: 'db_x', user: 'svc-svc', password: 'pw' });
    expect(s.paths.logs).toBe('/var/log/dg');
    expect(get(s, 'database', 'user')).toBe('svc-svc');
  });

  it('treats $$, a plain $VAR and empty braces as text, as the original does', () => {
    const value = (text: string, env: Record<string, string> = { V: 'v' }) => get(load({ env, overrides: { x: { k: text } } }), 'x', 'k');
    expect(value('a$${V}b')).toBe('a$vb');
    expect(value('$$')).toBe('$$');
    expect(value('$V and $__env')).toBe('$V and $__env');
    expect(value('${} $__env{} ${V')).toBe('${} $__env{} ${V');
    expect(value('${V}${V}$__env{V}')).toBe('vvv');
    // A variable's value is not searched for variables again...
    expect(value('${A}', { A: '${B}', B: 'b' })).toBe('${B}');
    // ...but names a file it holds, as files are expanded after every variable.
    writeConfig('via-variable.txt', 'from-file\n');
    expect(value('${A}', { A: '$__file{via-variable.txt}' })).toBe('from-file');
  });

  it('expands ${HOSTNAME} in DEFAULT instance_name, falling back to the host name when the variable is unset', () => {
    expect(get(load({ env: { HOSTNAME: 'node-7' } }), 'DEFAULT', 'instance_name')).toBe('node-7');
    expect(get(load({ env: {} }), 'DEFAULT', 'instance_name')).toBe(hostname());
    expect(get(load({ env: { HOSTNAME: '' } }), 'DEFAULT', 'instance_name')).toBe(hostname());
    expect(get(load({ env: { GF_DEFAULT_INSTANCE_NAME: '${POD}.${NAMESPACE}', POD: 'dg-0', NAMESPACE: 'mon' } }), 'DEFAULT', 'instance_name')).toBe('dg-0.mon');
  });
});

describe('typed parsing', () => {
  it('parses booleans case-insensitively (true/false, 1/0, yes/no, on/off)', () => {
    const s = load({ overrides: { metrics: { enabled: 'FALSE' }, alerting: { enabled: '0' }, 'auth.basic': { enabled: 'off' }, graphql: { graphiql: 'Yes' } } });
    expect([s.metrics.enabled, s.alerting.enabled, s.authBasic.enabled, s.graphql.graphiql]).toEqual([false, false, false, true]);
  });

  it('falls back to the conf/defaults.ini value for a blank number, boolean or choice', () => {
    const s = load({ overrides: { server: { http_port: '' }, metrics: { enabled: '' }, users: { auto_assign_org_role: '' } } });
    expect(s.server.httpPort).toBe(3000);
    expect(s.metrics.enabled).toBe(true);
    expect(s.users.autoAssignOrgRole).toBe('Viewer');
  });

  it('splits database host:port, [v6]:port, bare IPv6 and socket folders', () => {
    const host = (value: string) => {
      const { host: h, port } = load({ overrides: { database: { host: value } } }).database;
      return [h, port];
    };
    expect(host('db')).toEqual(['db', 5432]);
    expect(host('db:6000')).toEqual(['db', 6000]);
    expect(host('[::1]:6000')).toEqual(['::1', 6000]);
    expect(host('[::1]')).toEqual(['::1', 5432]);
    expect(host('::1')).toEqual(['::1', 5432]);
    expect(host('/var/run/postgresql')).toEqual(['/var/run/postgresql', 5432]);
    expect(host('/var/run/postgresql:6000')).toEqual(['/var/run/postgresql', 6000]);
    expect(host('/srv/a:b')).toEqual(['/srv/a:b', 5432]);
  });

  it('splits the proxy whitelist on spaces and commas', () => {
    const s = load({ overrides: { security: { data_source_proxy_whitelist: ' a:80, b:443  c:9090,,' } } });
    expect(s.security.dataSourceProxyWhitelist).toEqual(['a:80', 'b:443', 'c:9090']);
  });

  it('reads trusted proxies as addresses and CIDR ranges, split on spaces and commas', () => {
    const s = load({ overrides: { server: { trusted_proxies: ' 10.0.0.0/8, 127.0.0.1  ::1,fd00::/8,,' } } });
    expect(s.server.trustedProxies).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
    expect(load({ env: { GF_SECURITY_DISABLE_IP_ADDRESS_LOGIN_PROTECTION: 'true' } }).security.disableIpAddressLoginProtection).toBe(true);
  });

  it('accepts a postgres URL and every role and ssl mode', () => {
    const s = load({ overrides: { database: { type: 'postgres', url: 'postgresql://u:p@h:5/db', ssl_mode: 'verify-full' }, users: { auto_assign_org_role: 'Admin' } } });
    expect(s.database).toMatchObject({ type: 'postgres', url: 'postgresql://u:p@h:5/db', sslMode: 'verify-full' });
    expect(s.users.autoAssignOrgRole).toBe('Admin');
    expect(load({ overrides: { users: { auto_assign_org_role: 'Editor' } } }).users.autoAssignOrgRole).toBe('Editor');
    expect(load({ overrides: { users: { auto_assign_org_role: 'None' } } }).users.autoAssignOrgRole).toBe('None');
    expect(load({ overrides: { log: { mode: 'console file', level: 'debug' } } }).log).toEqual({ mode: ['console', 'file'], level: 'debug' });
  });

  it.each([
    ['server', 'http_port', 'abc', /\[server\] http_port = "abc": expected an integer from 0 to 65535/],
    ['server', 'http_port', '70000', /\[server\] http_port/],
    ['server', 'http_port', '3.5', /\[server\] http_port/],
    ['server', 'protocol', 'gopher', /\[server\] protocol = "gopher": expected one of http, https/],
    ['server', 'root_url', 'not a url', /\[server\] root_url/],
    ['server', 'request_body_limit_bytes', '0', /\[server\] request_body_limit_bytes/],
    ['server', 'max_header_bytes', '0', /\[server\] max_header_bytes = "0": expected an integer from 1/],
    ['server', 'max_header_bytes', '64k', /\[server\] max_header_bytes/],
    ['dataproxy', 'via_pseudonym', 'dash gate', /\[dataproxy\] via_pseudonym = "dash gate": expected a token/],
    ['dataproxy', 'via_pseudonym', 'dashgate:3000', /\[dataproxy\] via_pseudonym/],
    ['dataproxy', 'concurrent_calls', '0', /\[dataproxy\] concurrent_calls = "0": expected an integer from 1/],
    ['dataproxy', 'concurrent_calls_per_request', 'many', /\[dataproxy\] concurrent_calls_per_request/],
    ['database', 'type', 'mysql', /\[database\] type = "mysql": expected one of embedded, postgres/],
    ['database', 'host', 'db:port', /\[database\] host/],
    ['database', 'ssl_mode', 'sometimes', /\[database\] ssl_mode/],
    ['database', 'max_open_conn', '0', /\[database\] max_open_conn/],
    ['users', 'auto_assign_org_role', 'viewer', /\[users\] auto_assign_org_role = "viewer": expected one of None, Viewer, Editor, Admin/],
    ['users', 'auto_assign_org_role', 'Owner', /\[users\] auto_assign_org_role/],
    ['users', 'allow_sign_up', 'maybe', /\[users\] allow_sign_up = "maybe": expected true or false/],
    ['security', 'brute_force_login_protection_max_attempts', '0', /\[security\] brute_force_login_protection_max_attempts/],
    ['security', 'disable_ip_address_login_protection', 'sometimes', /\[security\] disable_ip_address_login_protection = "sometimes": expected true or false/],
    ['server', 'trusted_proxies', '10.0.0.0/8 proxy.internal', /\[server\] trusted_proxies = "10.0.0.0\/8 proxy.internal": expected IP addresses or CIDR ranges \("proxy.internal" is neither an IP address nor a CIDR range\)/],
    ['server', 'trusted_proxies', '10.0.0.0/33', /\[server\] trusted_proxies .*"10.0.0.0\/33" is neither/],
    ['server', 'trusted_proxies', '::1/129', /\[server\] trusted_proxies/],
    ['server', 'trusted_proxies', '1.2.3.4/', /\[server\] trusted_proxies/],
    ['log', 'level', 'loud', /\[log\] level/],
    ['log', 'mode', 'console pager', /\[log\] mode/],
    ['DEFAULT', 'app_mode', 'staging', /\[DEFAULT\] app_mode/],
    ['graphql', 'max_depth', '-1', /\[graphql\] max_depth/],
  ])('rejects [%s] %s = %j', (section, key, value, message) => {
    expect(() => load({ overrides: { [section]: { [key]: value } } })).toThrow(message);
  });

  it('requires cert files for https and a header name for an enabled auth proxy', () => {
    expect(() => load({ overrides: { server: { protocol: 'https' } } })).toThrow(/\[server\] cert_file/);
    expect(load({ overrides: { 'auth.proxy': { enabled: 'true', header_name: 'X-User' } } }).authProxy).toEqual({ enabled: true, headerName: 'X-User' });
  });

  it('never puts a secret into an error message', () => {
    expect(() => load({ overrides: { database: { url: 'mysql://bob:hunter2@db/x' } } })).toThrow('[database] url = "mysql://bob:xxxxx@db/x"');
    expect(() => load({ overrides: { database: { url: 'mysql://bob:hunter2@db/x' } } })).not.toThrow(/hunter2/);
  });
});

describe('tracing', () => {
  const tracing = (overrides: LoadSettingsOptions['overrides'], env: Record<string, string> = {}) => load({ overrides, env }).tracing;

  it('is off by default: no endpoint; W3C propagation, every new trace sampled (const, 1), service "dashgate"', () => {
    expect(load().tracing).toEqual({
      endpoint: null, propagation: ['w3c'], samplerType: 'const', samplerParam: 1, serviceName: 'dashgate', customAttributes: [], filterOperationalEndpoints: false,
    });
  });

  it('sends OTLP/HTTP to the otlp address: host:port over http (https when insecure is false), a URL as given, /v1/traces when it has no path', () => {
    expect(tracing({ 'tracing.opentelemetry.otlp': { address: 'collector:4318' } }).endpoint).toBe('http://collector:4318/v1/traces');
    expect(tracing({ 'tracing.opentelemetry.otlp': { address: 'collector:4318', insecure: 'false' } }).endpoint).toBe('https://collector:4318/v1/traces');
    expect(tracing({ 'tracing.opentelemetry.otlp': { address: 'https://otel.example.com' } }).endpoint).toBe('https://otel.example.com/v1/traces');
    expect(tracing({ 'tracing.opentelemetry.otlp': { address: 'http://otel:4318/custom/traces' } }).endpoint).toBe('http://otel:4318/custom/traces');
    expect(tracing({}, { GF_TRACING_OPENTELEMETRY_OTLP_ADDRESS: '[::1]:4318' }).endpoint).toBe('http://[::1]:4318/v1/traces');
    for (const address of ['collector', 'collector:4318/x', 'ftp://x:1', 'a b:1']) {
      expect(() => tracing({ 'tracing.opentelemetry.otlp': { address } })).toThrow(/\[tracing\.opentelemetry\.otlp\] address/);
    }
  });

  it('prefers the jaeger section (then the legacy [tracing.jaeger] address), correcting a legacy collector URL, with its own propagation', () => {
    const both = tracing({
      'tracing.opentelemetry.otlp': { address: 'otlp:4318', propagation: 'w3c' },
      'tracing.opentelemetry.jaeger': { address: 'http://jaeger:14268/api/traces', propagation: 'jaeger,w3c' },
    });
    expect(both.endpoint).toBe('http://jaeger:4318/v1/traces');
    expect(both.propagation).toEqual(['jaeger', 'w3c']);
    expect(tracing({ 'tracing.jaeger': { address: 'agent:4318' } }).endpoint).toBe('http://agent:4318/v1/traces');
  });

  it('reads propagation as a comma-separated list and refuses unknown formats', () => {
    expect(tracing({ 'tracing.opentelemetry.otlp': { address: 'c:4318', propagation: ' w3c , jaeger,w3c' } }).propagation).toEqual(['w3c', 'jaeger']);
    expect(() => tracing({ 'tracing.opentelemetry.otlp': { address: 'c:4318', propagation: 'b3' } })).toThrow(/\[tracing\.opentelemetry\.otlp\] propagation = "b3": expected some of w3c, jaeger/);
  });

  it('takes the sampler from [tracing.opentelemetry] when set, else from [tracing.jaeger], as the original', () => {
    expect(tracing({ 'tracing.opentelemetry': { sampler_type: 'probabilistic', sampler_param: '0.25' } })).toMatchObject({ samplerType: 'probabilistic', samplerParam: 0.25 });
    expect(tracing({ 'tracing.jaeger': { sampler_type: 'rateLimiting', sampler_param: '10' } })).toMatchObject({ samplerType: 'rateLimiting', samplerParam: 10 });
    // A zero [tracing.opentelemetry] sampler_param leaves the legacy one (the original reads 0 as unset).
    expect(tracing({ 'tracing.opentelemetry': { sampler_type: 'const', sampler_param: '0' } })).toMatchObject({ samplerType: 'const', samplerParam: 1 });
    expect(tracing({ 'tracing.jaeger': { sampler_param: '0' } })).toMatchObject({ samplerType: 'const', samplerParam: 0 });
    expect(tracing({ 'tracing.opentelemetry': { sampler_type: 'remote', sampler_param: '0.5' } })).toMatchObject({ samplerType: 'remote', samplerParam: 0.5 });
    expect(() => tracing({ 'tracing.opentelemetry': { sampler_type: 'sometimes' } })).toThrow(/sampler_type = "sometimes": expected one of const, probabilistic, rateLimiting, remote/);
    expect(() => tracing({ 'tracing.opentelemetry': { sampler_param: 'half' } })).toThrow(/\[tracing\.opentelemetry\] sampler_param = "half": expected a number/);
    expect(() => tracing({ 'tracing.opentelemetry': { sampler_param: '0.5' } })).toThrow(/sampler_param = "0.5": expected 0 or 1 for the const sampler/);
  });

  it('reads custom attributes as key:value pairs (values may hold colons), falling back to always_included_tag', () => {
    expect(tracing({ 'tracing.opentelemetry': { custom_attributes: 'env:prod,url:http://x:1' } }).customAttributes).toEqual([['env', 'prod'], ['url', 'http://x:1']]);
    expect(tracing({ 'tracing.jaeger': { always_included_tag: 'team:obs' } }).customAttributes).toEqual([['team', 'obs']]);
    expect(() => tracing({ 'tracing.opentelemetry': { custom_attributes: 'env' } })).toThrow(/custom_attributes = "env": expected key:value pairs/);
  });
});
