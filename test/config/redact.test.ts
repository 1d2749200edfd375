import { REDACTED_PASSWORD, redactedValue, settingsBag } from '../../src/config/redact.ts';
import { loadSettings } from '../../src/config/settings.ts';

const MASK = '*********';

describe('redactedValue', () => {
  it('uses a 9-asterisk mask', () => {
    expect(REDACTED_PASSWORD).toBe(MASK);
  });

  it.each([
    'GF_DATABASE_PASSWORD',
    'GF_SMTP_PASSWORD',
    'GF_SECURITY_ADMIN_PASSWORD',
    'GF_AUTH_GITHUB_CLIENT_SECRET',
    'GF_SESSION_PROVIDER_CONFIG',
    'GF_X_PRIVATE_KEY_PATH',
    'GF_SECURITY_SECRET_KEY',
    'GF_X_CERTIFICATE',
    'GF_AZURE_ACCOUNT_KEY',
    'GF_SECURITY_ENCRYPTION_KEY_ID',
    'GF_X_VAULT_TOKEN_FILE',
    'GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET',
    'GF_ENTERPRISE_LICENSE_TEXT',
    'GF_X_API_DB_PASS',
    'GF_AUTH_ID_FORWARDING_TOKEN',
    'GF_X_AUTHENTICATION_TOKEN',
    'GF_X_AUTH_TOKEN',
    'GF_RENDERING_RENDERER_TOKEN',
    'GF_X_API_TOKEN',
    'GF_X_WEBHOOK_TOKEN',
    'GF_X_INSTALL_TOKEN',
    'gf_database_password', // matched after upper-casing
  ])('masks %s', (key) => {
    expect(redactedValue(key, 'value')).toBe(MASK);
    expect(redactedValue(key, 'http://u:p@h')).toBe(MASK);
  });

  it.each([
    'GF_X_TOKEN_TTL', // anchored token patterns only match at the end
    'GF_X_AUTH_TOKEN_NAME',
    'GF_X_API_TOKENS',
    'GF_X_ID_FORWARDING',
    'GF_X_PASS', // PASSWORD, not PASS
    'GF_X_KEY',
  ])('does not mask %s', (key) => {
    expect(redactedValue(key, 'value')).toBe('value');
  });

  it('never matches ^TOKEN$ because keys start with GF_', () => {
    expect(redactedValue('GF__TOKEN', 'value')).toBe('value');
  });

  it('keeps an empty value empty, even for secrets', () => {
    expect(redactedValue('GF_DATABASE_PASSWORD', '')).toBe('');
    expect(redactedValue('GF_DATABASE_URL', '')).toBe('');
  });

  it.each(['GF_ANALYTICS_RUDDERSTACK_DATA_PLANE_URL', 'GF_ANALYTICS_APPLICATION_INSIGHTS_CONNECTION_STRING', 'GF_LOG_SENTRY_DSN'])(
    'passes %s through without URL redaction',
    (key) => {
      expect(redactedValue(key, 'https://user:pw@sentry.example/1')).toBe('https://user:pw@sentry.example/1');
    },
  );

  it('still masks a passthrough key that also matches a secret pattern', () => {
    expect(redactedValue('GF_SENTRY_SECRET', 'x')).toBe(MASK);
  });

  it.each([
    ['mysql://u:p@h/db', 'mysql://u:xxxxx@h/db'],
    ['postgres://dashgate:s3cr3t@db.example:5432/dashgate?sslmode=require', 'postgres://dashgate:xxxxx@db.example:5432/dashgate?sslmode=require'],
    ['http://user@host/path', 'http://user@host/path'], // no password: unchanged
    ['http://user:@host', 'http://user:xxxxx@host'], // an empty password is still a password
    ['http://u:p@ss@host', 'http://u:xxxxx@host'], // the last "@" ends the userinfo
    ['u:p@h:5432', 'u:xxxxx@h:5432'], // no scheme: parsed with a temporary http://
    ['HTTP://U:P@H', 'http://U:xxxxx@H'], // Go lower-cases the scheme only
    ['amqp://guest:guest@localhost/', 'amqp://guest:xxxxx@localhost/'],
    ['http://a:1@x, http://b:2@y', 'http://a:xxxxx@x,http://b:xxxxx@y'],
    ['http://a:1@x   http://b:2@y', 'http://a:xxxxx@x http://b:xxxxx@y'],
    ['http://a:1@x,plain,,other', 'http://a:xxxxx@x,plain,other'],
  ])('redacts URL passwords: %s', (value, expected) => {
    expect(redactedValue('GF_DATABASE_URL', value)).toBe(expected);
  });

  it.each([
    'http://localhost:3000/',
    'emails/*.html',
    '/var/lib/dashgate/dashboards',
    'admin@localhost',
    'Main Org.',
    '127.0.0.1:5432',
    'X-WEBAUTH-USER',
    'https://github.com/login/oauth/authorize',
    'http://h/p?q=1&r=a:b#frag',
    '10485760',
  ])('leaves ordinary values alone: %s', (value) => {
    expect(redactedValue('GF_SECTION_KEY', value)).toBe(value);
  });

  it.each([
    'user:email,read:org', // "email" is not a port
    'a:b',
    'http://u:p@h:port/', // invalid port: the whole value stays as written, password included
    'x%zz',
    '%(protocol)s://%(domain)s/',
    'http://u:p@h  bad:port', // one chunk fails, so nothing is redacted
  ])('returns an unparseable value unchanged: %s', (value) => {
    expect(redactedValue('GF_SECTION_KEY', value)).toBe(value);
  });

  it('normalises separators like Grafana (commas win, spaces collapse)', () => {
    expect(redactedValue('GF_X_Y', 'a, b')).toBe('a,b');
    expect(redactedValue('GF_X_Y', 'a   b')).toBe('a b');
  });

  it('treats a value starting with "[" as a JSON list, as Grafana does', () => {
    expect(redactedValue('GF_X_URLS', '["http://u:p@x", "y"]')).toBe('http://u:xxxxx@x,y');
    expect(redactedValue('GF_X_HOST', '[::1]:5432')).toBe('');
  });
});

describe('settingsBag', () => {
  const settings = loadSettings({
    argv: [],
    env: {},
    overrides: {
      database: { password: 'pw', url: 'postgres://dashgate:hunter2@db:5432/dashgate' },
      'auth.github': { client_secret: 'gh-secret' },
      smtp: { password: '' },
    },
  });
  const bag = settingsBag(settings);

  it('has every section of the effective ini, in order, DEFAULT first, all values strings', () => {
    expect(Object.keys(bag)).toEqual(settings.raw.map(([section]) => section));
    expect(Object.keys(bag)[0]).toBe('DEFAULT');
    expect(bag.DEFAULT.app_mode).toBe('production');
    for (const section of Object.values(bag)) for (const value of Object.values(section)) expect(typeof value).toBe('string');
    expect(bag.server.http_port).toBe('3000');
    expect(bag.security.login_remember_days).toBe('7');
  });

  it('masks secrets and URL passwords, keeps empty values empty', () => {
    expect(bag.database.password).toBe(MASK);
    expect(bag.database.url).toBe('postgres://dashgate:xxxxx@db:5432/dashgate');
    expect(bag.security.secret_key).toBe(MASK);
    expect(bag.security.admin_password).toBe(MASK);
    expect(bag['auth.github'].client_secret).toBe(MASK);
    expect(bag.session.provider_config).toBe(MASK);
    expect(bag.smtp.password).toBe('');
    expect(bag.security.admin_user).toBe('admin');
  });

  it('does not leak a secret anywhere in the serialised document', () => {
    const json = JSON.stringify(bag);
    for (const secret of ['hunter2', 'gh-secret', 'SW2YcwTIb9zpOOhoPsMm', '"pw"']) expect(json).not.toContain(secret);
  });

  // Spec 2.2: the sections and settings a client may rely on.
  const SPEC: Record<string, string[]> = {
    DEFAULT: ['app_mode'],
    analytics: ['google_analytics_ua_id', 'reporting_enabled'],
    'auth.anonymous': ['enabled', 'org_name', 'org_role'],
    'auth.basic': ['enabled'],
    'auth.ldap': ['config_file', 'enabled'],
    'auth.proxy': ['auto_sign_up', 'enabled', 'header_name', 'header_property'],
    'dashboards.json': ['enabled', 'path'],
    database: ['host', 'name', 'password', 'path', 'ssl_mode', 'type', 'user'],
    emails: ['templates_pattern', 'welcome_email_on_sign_up'],
    event_publisher: ['enabled', 'exchange', 'rabbitmq_url'],
    log: ['buffer_len', 'level', 'mode'],
    'log.console': ['level'],
    'log.file': ['daily_rotate', 'file_name', 'level', 'log_rotate', 'max_days', 'max_lines', 'max_lines_shift', 'max_size_shift'],
    paths: ['data', 'logs'],
    security: ['admin_password', 'admin_user', 'cookie_remember_name', 'cookie_username', 'disable_gravatar', 'login_remember_days', 'secret_key'],
    server: ['cert_file', 'cert_key', 'domain', 'enable_gzip', 'enforce_domain', 'http_addr', 'http_port', 'protocol', 'root_url', 'router_logging', 'data_proxy_logging', 'static_root_path'],
    session: ['cookie_name', 'cookie_secure', 'gc_interval_time', 'provider', 'provider_config', 'session_life_time'],
    smtp: ['cert_file', 'enabled', 'from_address', 'from_name', 'host', 'key_file', 'password', 'skip_verify', 'user'],
    users: ['allow_org_create', 'allow_sign_up', 'auto_assign_org', 'auto_assign_org_role'],
  };
  const PROVIDER_KEYS = ['allow_sign_up', 'allowed_domains', 'api_url', 'auth_url', 'client_id', 'client_secret', 'enabled', 'scopes', 'token_url'];
  const SOME_PROVIDER_KEYS = ['allowed_organizations', 'team_ids'];
  const NON_PROVIDER_AUTH = new Set(['auth', 'auth.anonymous', 'auth.basic', 'auth.ldap', 'auth.proxy']);

  it.each(Object.entries(SPEC))('has spec section %s with its settings', (section, keys) => {
    expect(bag[section]).toBeDefined();
    expect(Object.keys(bag[section])).toEqual(expect.arrayContaining(keys));
  });

  it('has identity-provider sections auth.<provider> with every listed setting', () => {
    const providers = Object.keys(bag).filter((section) => section.startsWith('auth.') && !NON_PROVIDER_AUTH.has(section));
    expect(providers).toEqual(expect.arrayContaining(['auth.github', 'auth.gitlab', 'auth.google', 'auth.generic_oauth', 'auth.azuread', 'auth.okta']));
    for (const provider of providers) expect(Object.keys(bag[provider])).toEqual(expect.arrayContaining(PROVIDER_KEYS));
    for (const key of SOME_PROVIDER_KEYS) expect(providers.some((provider) => key in bag[provider])).toBe(true);
    for (const provider of providers) expect(bag[provider].enabled).toBe('false');
  });
});
