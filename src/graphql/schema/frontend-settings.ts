import { builder } from '../builder.ts';
import { signedIn } from '../../auth/access.ts';
import { frontendSettings, type BuildInfo, type FrontendSettings, type LicenseInfo } from '../../services/frontend-settings.ts';

const BuildInfoType = builder.objectRef<BuildInfo>('BuildInfo').implement({
  description: 'What is running, as the original server reports it to its front end.',
  fields: (t) => ({
    hideVersion: t.exposeBoolean('hideVersion', { description: 'Always false: the version is shown.' }),
    version: t.exposeString('version', { description: 'The original server\'s API version spoken here (`[server] compatible_version`); clients gate features on it.' }),
    versionString: t.exposeString('versionString', { description: 'dashgate\'s own version and commit.' }),
    commit: t.exposeString('commit', { description: 'The commit this build was made from.' }),
    commitShort: t.exposeString('commitShort', { description: 'Its first 10 characters.' }),
    buildstamp: t.exposeInt('buildstamp', { description: 'Always 0: builds carry no time stamp.' }),
    edition: t.exposeString('edition', { description: 'Always `Open Source`.' }),
    latestVersion: t.exposeString('latestVersion', { description: 'Always empty: this server does not look for updates.' }),
    hasUpdate: t.exposeBoolean('hasUpdate', { description: 'Always false, as `latestVersion`.' }),
    env: t.exposeString('env', { description: '`[app_mode]`: production or development.' }),
  }),
});

const LicenseInfoType = builder.objectRef<LicenseInfo>('LicenseInfo').implement({
  description: 'Licence state; always the open-source edition.',
  fields: (t) => ({
    expiry: t.exposeInt('expiry', { description: 'Always 0: no licence expires.' }),
    stateInfo: t.exposeString('stateInfo', { description: 'Always empty.' }),
    licenseUrl: t.exposeString('licenseUrl', { description: 'Always empty.' }),
    edition: t.exposeString('edition', { description: 'Always `Open Source`.' }),
    enabledFeatures: t.field({ type: 'JSONObject', description: 'Always `{}`: no licensed features.', resolve: (l) => l.enabledFeatures }),
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
    minRefreshInterval: t.exposeString('minRefreshInterval', { description: 'The shortest dashboard refresh a front end offers: `5s`.' }),
    appUrl: t.exposeString('appUrl', { description: '`[server] root_url`.' }),
    appSubUrl: t.exposeString('appSubUrl', { description: 'The path of `root_url`, without its trailing slash.' }),
    allowOrgCreate: t.exposeBoolean('allowOrgCreate', { description: 'Whether the caller may create orgs: `[users] allow_org_create`, or a server admin.' }),
    authProxyEnabled: t.exposeBoolean('authProxyEnabled', { description: '`[auth.proxy] enabled`, as configured.' }),
    ldapEnabled: t.exposeBoolean('ldapEnabled', { description: '`[auth.ldap] enabled`, as configured.' }),
    autoAssignOrg: t.exposeBoolean('autoAssignOrg', { description: '`[users] auto_assign_org`: new users join `auto_assign_org_id`.' }),
    verifyEmailEnabled: t.exposeBoolean('verifyEmailEnabled', { description: 'Always false: e-mails are not verified.' }),
    rbacEnabled: t.exposeBoolean('rbacEnabled', { description: 'Always true: access is decided by actions such as `datasources:write`.' }),
    disableLoginForm: t.exposeBoolean('disableLoginForm', { description: 'Always false.' }),
    disableUserSignUp: t.exposeBoolean('disableUserSignUp', { description: 'The opposite of `[users] allow_sign_up`.' }),
    buildInfo: t.field({ type: BuildInfoType, description: 'What is running.', resolve: (s) => s.buildInfo }),
    licenseInfo: t.field({ type: LicenseInfoType, description: 'The licence: the open-source edition.', resolve: (s) => s.licenseInfo }),
    featureToggles: t.field({ type: 'JSONObject', description: 'Always `{}`: no feature toggles.', resolve: (s) => s.featureToggles }),
    anonymousEnabled: t.exposeBoolean('anonymousEnabled', { description: '`[auth.anonymous] enabled`, as configured.' }),
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
