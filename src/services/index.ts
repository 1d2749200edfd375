import type { MikroORM } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import { Authenticator } from '../auth/authenticator.ts';
import { SecretBox } from './crypto.ts';
import { DataSourceService } from './data-sources.ts';

/** Everything request handlers need, built once per process. Services take `em` per call. */
export interface Services {
  settings: Settings;
  orm: MikroORM;
  secrets: SecretBox;
  authenticator: Authenticator;
  dataSources: DataSourceService;
}

export function createServices(settings: Settings, orm: MikroORM, options: { cacheCredentials?: boolean } = {}): Services {
  const secrets = new SecretBox(settings.security.secretKey);
  return {
    settings,
    orm,
    secrets,
    authenticator: new Authenticator({
      basicAuthEnabled: settings.authBasic.enabled,
      bruteForceProtection: !settings.security.disableBruteForceLoginProtection,
      maxLoginAttempts: settings.security.bruteForceLoginProtectionMaxAttempts,
      cacheCredentials: options.cacheCredentials,
    }),
    dataSources: new DataSourceService({
      secrets,
      authProxyHeader: settings.authProxy.enabled ? settings.authProxy.headerName : null,
    }),
  };
}
