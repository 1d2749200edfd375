import { builder } from '../builder.ts';
import { signedIn } from '../../auth/access.ts';
import { frontendSettings, type BuildInfo, type FrontendSettings, type LicenseInfo } from '../../services/frontend-settings.ts';

const BuildInfoType = builder.objectRef<BuildInfo>('BuildInfo').implement({
  description: 'What is running, as the original server reports it to its front end.',
  fields: (t) => ({
    hideVersion: t.exposeBoolean('hideVersion'),
    version: t.exposeString('version', { description: 'The original server\'s API version spoken here (`[server] compatible_version`); clients gate features on it.' }),
    versionString: t.exposeString('versionString', { description: 'dashgate\'s own version and commit.' }),
    commit: t.exposeString('commit'),
    commitShort: t.exposeString('commitShort'),
    buildstamp: t.exposeInt('buildstamp'),
    edition: t.exposeString('edition'),
    latestVersion: t.exposeString('latestVersion'),
    hasUpdate: t.exposeBoolean('hasUpdate'),
    env: t.exposeString('env', { description: '`[app_mode]`: production or development.' }),
  }),
});

const LicenseInfoType = builder.objectRef<LicenseInfo>('LicenseInfo').implement({
  description: 'Licence state; always the open-source edition.',
  fields: (t) => ({
    expiry: t.exposeInt('expiry'),
    stateInfo: t.exposeString('stateInfo'),
    licenseUrl: t.exposeString('licenseUrl'),
    edition: t.exposeString('edition'),
    enabledFeatures: t.field({ type: 'JSONObject', resolve: (l) => l.enabledFeatures }),
  }),
});

const FrontendSettingsType = builder.objectRef<FrontendSettings>('FrontendSettings').implement({
  description: 'The settings a front end (or a client library) starts from.',
  fields: (t) => ({
    defaultDatasource: t.exposeString('defaultDatasource', { description: 'Name of the org\'s default data source, or "-- Grafana --".' }),
    datasources: t.field({
      type: 'JSONObject',
      description: 'The caller\'s org\'s data sources keyed by name (proxied ones by their proxy URL), plus the built-in ones. Never a secret.',
      resolve: (s) => s.datasources,
    }),
    minRefreshInterval: t.exposeString('minRefreshInterval'),
    appUrl: t.exposeString('appUrl', { description: '`[server] root_url`.' }),
    appSubUrl: t.exposeString('appSubUrl', { description: 'The path of `root_url`, without its trailing slash.' }),
    allowOrgCreate: t.exposeBoolean('allowOrgCreate'),
    authProxyEnabled: t.exposeBoolean('authProxyEnabled'),
    ldapEnabled: t.exposeBoolean('ldapEnabled'),
    autoAssignOrg: t.exposeBoolean('autoAssignOrg'),
    verifyEmailEnabled: t.exposeBoolean('verifyEmailEnabled'),
    rbacEnabled: t.exposeBoolean('rbacEnabled'),
    disableLoginForm: t.exposeBoolean('disableLoginForm'),
    disableUserSignUp: t.exposeBoolean('disableUserSignUp'),
    buildInfo: t.field({ type: BuildInfoType, resolve: (s) => s.buildInfo }),
    licenseInfo: t.field({ type: LicenseInfoType, resolve: (s) => s.licenseInfo }),
    featureToggles: t.field({ type: 'JSONObject', resolve: (s) => s.featureToggles }),
    anonymousEnabled: t.exposeBoolean('anonymousEnabled'),
  }),
});

builder.queryFields((t) => ({
  frontendSettings: t.field({
    extensions: { access: signedIn },
    type: FrontendSettingsType,
    description: 'The front-end settings of `GET /api/frontend/settings`. Any signed-in caller.',
    resolve: (_root, _args, ctx) => frontendSettings(ctx.em, ctx.services.settings, ctx.services.dataSources, ctx.caller),
  }),
}));
