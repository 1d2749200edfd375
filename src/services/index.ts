import type { MikroORM } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import { Authenticator } from '../auth/authenticator.ts';
import type { ChangeListener } from '../db/change-listener.ts';
import { SecretBox } from '../db/secrets.ts';
import { DataSourceService } from './data-sources.ts';
import { DataSourceAccessCache } from './data-source-permissions.ts';

/**
 * The domain services, built once per process; they take `em` per call. The app builds the rest
 * of the runtime over them (src/runtime.ts) before the first request.
 */
export interface Services {
  readonly settings: Settings;
  readonly orm: MikroORM;
  /** Hears every instance's committed changes; the change barrier of every cache. */
  readonly changes: ChangeListener;
  readonly secrets: SecretBox;
  readonly authenticator: Authenticator;
  readonly dataSources: DataSourceService;
  /** Callers' levels per data source, for hot paths (the upstream layer, subscriptions); exact through `changes`. */
  readonly dataSourceAccess: DataSourceAccessCache;
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
  };
}

/** The data source service alone, for start-up provisioning (before any request is served). */
export function createDataSourceService(settings: Settings, secrets = new SecretBox(settings.security.secretKey)): DataSourceService {
  return new DataSourceService({ secrets, authProxyHeader: settings.authProxy.enabled ? settings.authProxy.headerName : null });
}
