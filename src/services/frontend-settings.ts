import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import type { Settings } from '../config/settings.ts';
import { COMMIT, VERSION } from '../version.ts';
import { typeLogoUrl, typeName } from './data-source-types.ts';
import type { DataSourceRecord, DataSourceService } from './data-sources.ts';

/**
 * `GET /api/frontend/settings`: the part of the original's `FrontendSettingsDTO` that clients
 * read, in its field order. `buildInfo.version` is the original server version whose HTTP API this
 * server speaks (`[server] compatible_version`): clients gate features on it (grafana-client uses
 * the native data source health check from 9 on). dashgate's own version is in `versionString`.
 */
export interface FrontendSettings {
  defaultDatasource: string;
  /** The caller's org's data sources keyed by name, plus the built-in ones; never a secret. */
  datasources: Record<string, FrontendDataSource>;
  minRefreshInterval: string;
  appUrl: string;
  appSubUrl: string;
  allowOrgCreate: boolean;
  authProxyEnabled: boolean;
  ldapEnabled: boolean;
  autoAssignOrg: boolean;
  verifyEmailEnabled: boolean;
  rbacEnabled: boolean;
  disableLoginForm: boolean;
  disableUserSignUp: boolean;
  buildInfo: BuildInfo;
  licenseInfo: LicenseInfo;
  featureToggles: Record<string, boolean>;
  anonymousEnabled: boolean;
}

export interface BuildInfo {
  hideVersion: boolean;
  version: string;
  versionString: string;
  commit: string;
  commitShort: string;
  buildstamp: number;
  edition: string;
  latestVersion: string;
  hasUpdate: boolean;
  env: string;
}

export interface LicenseInfo {
  expiry: number;
  stateInfo: string;
  licenseUrl: string;
  edition: string;
  enabledFeatures: Record<string, boolean>;
}

/** The original's `plugins.DataSourceDTO`, omitting what it omits when empty. */
export interface FrontendDataSource {
  id?: number;
  uid?: string;
  type: string;
  name: string;
  meta: { id: string; type: 'datasource'; name: string; builtIn?: boolean; info?: { logos: { small: string; large: string } } };
  url?: string;
  isDefault: boolean;
  access?: string;
  preload: boolean;
  jsonData: Record<string, unknown>;
  readOnly: boolean;
  withCredentials?: boolean;
  database?: string;
}

/** The original's built-in data sources, which have no row; only "-- Grafana --" has an id and uid. */
const BUILT_IN: ReadonlyArray<{ id: string; name: string; ref?: { id: number; uid: string } }> = [
  { id: 'grafana', name: '-- Grafana --', ref: { id: -1, uid: 'grafana' } },
  { id: 'mixed', name: '-- Mixed --' },
  { id: 'dashboard', name: '-- Dashboard --' },
];
const SQL_TYPES = new Set(['mssql', 'mysql', 'postgres', 'grafana-postgresql-datasource']);

export async function frontendSettings(em: EntityManager, settings: Settings, dataSources: DataSourceService, principal: Principal): Promise<FrontendSettings> {
  // Those the caller may query (the permission rule: a `None` member's come from its grants); a
  // caller who is no member of this org sees only the built-ins.
  const rows = principal.orgRole !== null ? await dataSources.list(em, principal) : [];
  const entries: Array<[string, FrontendDataSource]> = rows.map((row) => [row.name, frontendDataSource(row)]);
  for (const builtIn of BUILT_IN) {
    entries.push([builtIn.name, {
      ...(builtIn.ref ?? {}),
      // The original reports a built-in's plugin type here, which is "datasource" for all of them.
      type: 'datasource',
      name: builtIn.name,
      meta: { id: builtIn.id, type: 'datasource', name: builtIn.name, builtIn: true },
      isDefault: false,
      preload: false,
      jsonData: {},
      readOnly: false,
    }]);
  }
  // A Go map: keys sorted bytewise.
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rootUrl = settings.server.rootUrl;
  const commitShort = COMMIT.slice(0, 10);

  return {
    defaultDatasource: rows.find((row) => row.isDefault)?.name ?? '-- Grafana --',
    datasources: Object.fromEntries(entries),
    // The original's default `[dashboards] min_refresh_interval`; there are no dashboards to refresh here.
    minRefreshInterval: '5s',
    appUrl: rootUrl,
    // The path of root_url without its trailing slash, as the original derives it.
    appSubUrl: new URL(rootUrl).pathname.replace(/\/+$/, ''),
    allowOrgCreate: settings.users.allowOrgCreate || principal.isServerAdmin,
    authProxyEnabled: settings.authProxy.enabled,
    ldapEnabled: settings.authLdap.enabled,
    autoAssignOrg: settings.users.autoAssignOrg,
    verifyEmailEnabled: false,
    rbacEnabled: true,
    disableLoginForm: false,
    disableUserSignUp: !settings.users.allowSignUp,
    buildInfo: {
      hideVersion: false,
      version: settings.server.compatibleVersion,
      versionString: `dashgate v${VERSION} (${commitShort})`,
      commit: COMMIT,
      commitShort,
      buildstamp: 0,
      edition: 'Open Source',
      latestVersion: '',
      hasUpdate: false,
      env: settings.appMode,
    },
    licenseInfo: { expiry: 0, stateInfo: '', licenseUrl: '', edition: 'Open Source', enabledFeatures: {} },
    featureToggles: {},
    anonymousEnabled: settings.authAnonymous.enabled,
  };
}

/**
 * One stored data source as the original lists it for the front end: proxied ones by their proxy
 * URL, the store's own URL kept for Prometheus (`jsonData.directUrl`). Unlike the original, direct
 * (browser) access data sources never carry their Basic credentials or InfluxDB password here.
 */
function frontendDataSource(row: DataSourceRecord): FrontendDataSource {
  const jsonData: Record<string, unknown> = { ...(row.jsonData ?? {}) };
  if (SQL_TYPES.has(row.type) && (jsonData.database === undefined || jsonData.database === null || jsonData.database === '')) jsonData.database = row.database;
  if (row.type === 'prometheus') jsonData.directUrl = row.url;
  const logo = typeLogoUrl(row.type);
  const url = row.access === 'proxy' ? `/api/datasources/proxy/uid/${row.uid}` : row.url;
  return {
    id: row.id,
    uid: row.uid,
    type: row.type,
    name: row.name,
    meta: { id: row.type, type: 'datasource', name: typeName(row.type), info: { logos: { small: logo, large: logo } } },
    ...(url ? { url } : {}),
    isDefault: row.isDefault,
    ...(row.access ? { access: row.access } : {}),
    preload: false,
    jsonData,
    readOnly: row.readOnly,
    ...(row.access === 'direct' && row.withCredentials ? { withCredentials: true } : {}),
    ...((row.type === 'influxdb' || row.type === 'elasticsearch') && row.database ? { database: row.database } : {}),
  };
}
