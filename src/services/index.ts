import type { MikroORM } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import { Authenticator } from '../auth/authenticator.ts';
import type { ChangeListener } from '../db/change-listener.ts';
import { SecretBox } from '../db/secrets.ts';
import { DataSourceService } from './data-sources.ts';
import { DataSourceAccessCache } from './data-source-permissions.ts';
import type { ChangeFeeds } from '../live/feeds/index.ts';
import { UNAVAILABLE_HEALTH, UNAVAILABLE_PROVISIONING, type DataSourceHealthChecker, type ProvisioningReloader } from './data-source-health.ts';

/** Everything request handlers need, built once per process. Services take `em` per call. */
export interface Services {
  settings: Settings;
  orm: MikroORM;
  /** Hears every instance's committed changes; the change barrier of every cache. */
  changes: ChangeListener;
  secrets: SecretBox;
  authenticator: Authenticator;
  dataSources: DataSourceService;
  /** Callers' levels per data source, for hot paths (the proxy, subscriptions); exact through `changes`. */
  dataSourceAccess: DataSourceAccessCache;
  /** The change feeds subscriptions read (fed by `changes`); set by the app that serves them. */
  live?: ChangeFeeds;
  /** Data source health checks through the proxy's connections; the app wires the real one. */
  dataSourceHealth: DataSourceHealthChecker;
  /** `POST /api/admin/provisioning/datasources/reload`; the app wires the real one. */
  provisioning: ProvisioningReloader;
}

export function createServices(settings: Settings, orm: MikroORM, changes: ChangeListener, options: { cacheCredentials?: boolean } = {}): Services {
  const secrets = new SecretBox(settings.security.secretKey);
  const authenticator = new Authenticator({
    basicAuthEnabled: settings.authBasic.enabled,
    bruteForceProtection: !settings.security.disableBruteForceLoginProtection,
    maxLoginAttempts: settings.security.bruteForceLoginProtectionMaxAttempts,
    loginProtectionByAddress: !settings.security.disableIpAddressLoginProtection,
    trustedProxies: settings.server.trustedProxies,
    cacheCredentials: options.cacheCredentials,
  });
  authenticator.followChanges(changes);
  return {
    settings,
    orm,
    changes,
    secrets,
    authenticator,
    dataSources: createDataSourceService(settings, secrets),
    dataSourceAccess: new DataSourceAccessCache(changes),
    dataSourceHealth: UNAVAILABLE_HEALTH,
    provisioning: UNAVAILABLE_PROVISIONING,
  };
}

/** The data source service alone, for start-up provisioning (before any request is served). */
export function createDataSourceService(settings: Settings, secrets = new SecretBox(settings.security.secretKey)): DataSourceService {
  return new DataSourceService({ secrets, authProxyHeader: settings.authProxy.enabled ? settings.authProxy.headerName : null });
}
