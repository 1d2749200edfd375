import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { basic, call, gql, startTestServer, type TestServer } from '../support/server.ts';
import { AUTH_CHANGE_CHANNEL } from '../../src/auth/principal-cache.ts';

// Spec 2.2/2.3 and 4.1: the settings document (every value a string, secrets masked) and the usage
// counters, each computed from real rows.

const CANARIES = {
  envSecretKey: 'CANARY-ENV-SECRET-KEY-7f3a',
  envGithubSecret: 'CANARY-ENV-GITHUB-SECRET-91c2',
  envSmtpPassword: 'CANARY-ENV-SMTP-PASSWORD-5d10',
  envRabbitPassword: 'CANARY-ENV-RABBIT-PW-22be',
  envReferenced: 'CANARY-ENV-REFERENCED-ADMIN-PW-0a0a',
  envBraced: 'CANARY-ENV-BRACED-GOOGLE-SECRET-4c4c',
  overrideOauthSecret: 'CANARY-OVERRIDE-OAUTH-SECRET-c4d4',
  overrideProviderConfig: 'CANARY-OVERRIDE-PROVIDER-CONFIG-8e8e',
  overrideApiUrlPassword: 'CANARY-OVERRIDE-URL-PW-3b3b',
  overrideCustomSecret: 'CANARY-OVERRIDE-CUSTOM-SECRET-6f6f',
};

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      GF_SECURITY_SECRET_KEY: CANARIES.envSecretKey,
      GF_AUTH_GITHUB_CLIENT_SECRET: CANARIES.envGithubSecret,
      GF_SMTP_PASSWORD: CANARIES.envSmtpPassword,
      GF_EVENT_PUBLISHER_RABBITMQ_URL: `amqp://publisher:${CANARIES.envRabbitPassword}@mq.example:5672/vhost`,
      // Read through a $__env{} reference in an override, as a file-based config would.
      DASHGATE_TEST_ADMIN_PW: CANARIES.envReferenced,
      // `${VAR}` as the original expands it: in defaults.ini (instance_name), in GF_ variables, in overrides.
      HOSTNAME: 'dashgate-node-7',
      DASHGATE_TEST_TENANT: 'acme',
      GF_ANALYTICS_GOOGLE_ANALYTICS_UA_ID: 'UA-${DASHGATE_TEST_TENANT}-$__env{DASHGATE_TEST_TENANT}${DASHGATE_TEST_UNSET}',
      DASHGATE_TEST_GOOGLE_SECRET: CANARIES.envBraced,
    },
    overrides: {
      security: { admin_password: '$__env{DASHGATE_TEST_ADMIN_PW}' },
      'auth.generic_oauth': {
        enabled: 'true',
        client_secret: CANARIES.overrideOauthSecret,
        api_url: `https://oauth-user:${CANARIES.overrideApiUrlPassword}@idp.example/userinfo`,
      },
      'auth.custom_idp': { client_id: 'custom-id', client_secret: CANARIES.overrideCustomSecret },
      'auth.google': { client_secret: '${DASHGATE_TEST_GOOGLE_SECRET}' },
      session: { provider: 'postgres', provider_config: `user=sessions password=${CANARIES.overrideProviderConfig} host=db` },
      smtp: { user: '' },
    },
  });
});
afterAll(() => server.close());

describe('GET /api/admin/settings', () => {
  let bag: Record<string, Record<string, string>>;
  let text: string;

  beforeAll(async () => {
    // The bootstrap admin got the password read from the environment.
    const res = await call(server, 'GET', '/api/admin/settings', { auth: basic('admin', CANARIES.envReferenced) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    bag = res.body;
    text = res.text;
  });

  it('has every section of the spec, DEFAULT included, and only string values', () => {
    for (const section of ['DEFAULT', 'analytics', 'auth.anonymous', 'auth.basic', 'auth.ldap', 'auth.proxy', 'dashboards.json', 'database',
      'emails', 'event_publisher', 'log', 'log.console', 'log.file', 'paths', 'security', 'server', 'session', 'smtp', 'users',
      'auth.github', 'auth.generic_oauth', 'auth.custom_idp']) {
      expect({ section, present: typeof bag[section] }).toEqual({ section, present: 'object' });
    }
    for (const [section, entries] of Object.entries(bag)) {
      for (const [key, value] of Object.entries(entries)) expect({ section, key, type: typeof value }).toEqual({ section, key, type: 'string' });
    }
    expect(bag.DEFAULT!.app_mode).toBe('production');
    expect(bag.DEFAULT!.instance_name).toBe('dashgate-node-7');
    expect(bag.analytics!.google_analytics_ua_id).toBe('UA-acme-acme');
    expect(bag.users).toMatchObject({ auto_assign_org: 'true', auto_assign_org_role: 'Viewer' });
    expect(bag.security!.brute_force_login_protection_max_attempts).toBe('5');
  });

  it('never shows a secret set through the environment or the configuration', () => {
    // The canaries did reach the running configuration...
    const raw = JSON.stringify(server.settings.raw);
    for (const canary of Object.values(CANARIES)) expect(raw).toContain(canary);
    expect(server.settings.security.secretKey).toBe(CANARIES.envSecretKey);
    // ...and none of them reaches the document.
    for (const canary of Object.values(CANARIES)) expect(text).not.toContain(canary);
    // Nor any fragment of one (e.g. a URL-decoded or partially masked form).
    expect(text).not.toMatch(/CANARY/);
  });

  it('masks secret keys with nine asterisks, wherever they were set', () => {
    expect(bag.security!.secret_key).toBe('*********');
    expect(bag.security!.admin_password).toBe('*********');
    expect(bag['auth.github']!.client_secret).toBe('*********');
    expect(bag['auth.generic_oauth']!.client_secret).toBe('*********');
    expect(bag['auth.custom_idp']!.client_secret).toBe('*********');
    expect(bag.smtp!.password).toBe('*********');
    expect(bag.session!.provider_config).toBe('*********');
    // The test harness's own database password.
    expect(bag.database!.password).toBe('*********');
    // Non-secret neighbours are shown as they are.
    expect(bag['auth.custom_idp']!.client_id).toBe('custom-id');
    expect(bag['auth.generic_oauth']!.enabled).toBe('true');
    expect(bag.session!.provider).toBe('postgres');
  });

  it('replaces URL userinfo passwords with xxxxx and keeps the user name', () => {
    expect(bag.event_publisher!.rabbitmq_url).toBe('amqp://publisher:xxxxx@mq.example:5672/vhost');
    expect(bag['auth.generic_oauth']!.api_url).toBe('https://oauth-user:xxxxx@idp.example/userinfo');
    // URLs without a password are untouched.
    expect(bag['auth.github']!.api_url).toBe('https://api.github.com/user');
  });

  it('leaves empty values empty, secret or not', () => {
    expect(bag['auth.gitlab']!.client_secret).toBe('');
    expect(bag.smtp!.user).toBe('');
    expect(bag.smtp!.cert_file).toBe('');
  });

  it('is the same document over GraphQL, and no secret reached the log', async () => {
    const res = await gql(server, '{ adminSettings }', {}, basic('admin', CANARIES.envReferenced));
    expect(res.body.data?.adminSettings).toEqual(bag);
    expect(server.logText()).not.toMatch(/CANARY/);
  });
});

describe('GET /api/admin/stats', () => {
  const admin = basic('admin', CANARIES.envReferenced);
  const stats = async () => {
    const res = await call(server, 'GET', '/api/admin/stats', { auth: admin });
    expect(res.status).toBe(200);
    return res;
  };

  it('answers the spec\'s integer counters in snake_case, then the current original server\'s in camelCase', async () => {
    const res = await stats();
    expect(Object.keys(res.body)).toEqual([
      'user_count', 'org_count', 'dashboard_count', 'db_snapshot_count', 'db_tag_count', 'data_source_count', 'playlist_count',
      'starred_db_count', 'service_admin_count',
      'orgs', 'dashboards', 'snapshots', 'tags', 'datasources', 'playlists', 'stars', 'alerts', 'users', 'admins', 'editors',
      'viewers', 'activeUsers', 'activeAdmins', 'activeEditors', 'activeViewers', 'activeSessions', 'dailyActiveUsers',
      'dailyActiveAdmins', 'dailyActiveEditors', 'dailyActiveViewers', 'dailyActiveSessions', 'monthlyActiveUsers', 'activeDevices',
    ]);
    for (const value of Object.values(res.body)) expect(Number.isInteger(value)).toBe(true);
    // A fresh server: the bootstrap admin (Admin of the main org, never seen yet).
    expect(res.body).toEqual({
      user_count: 1, org_count: 1, dashboard_count: 0, db_snapshot_count: 0, db_tag_count: 0, data_source_count: 0,
      playlist_count: 0, starred_db_count: 0, service_admin_count: 1,
      orgs: 1, dashboards: 0, snapshots: 0, tags: 0, datasources: 0, playlists: 0, stars: 0, alerts: 0, users: 1, admins: 1, editors: 0,
      viewers: 0, activeUsers: 0, activeAdmins: 0, activeEditors: 0, activeViewers: 0, activeSessions: 0, dailyActiveUsers: 0,
      dailyActiveAdmins: 0, dailyActiveEditors: 0, dailyActiveViewers: 0, dailyActiveSessions: 0, monthlyActiveUsers: 0, activeDevices: 0,
    });
  });

  it('computes all counters in one SQL statement', async () => {
    // Record what this instance sends to PostgreSQL (every query passes the connection's executeQuery).
    const connection = server.orm.em.getConnection() as unknown as { executeQuery: (query: string, ...rest: unknown[]) => Promise<unknown> };
    const original = connection.executeQuery;
    const sent: string[] = [];
    connection.executeQuery = function (this: unknown, query: string, ...rest: unknown[]) {
      sent.push(query);
      return original.call(this, query, ...rest);
    };
    try {
      // A caller the server was told to forget is looked up again: the hook sees this server's queries.
      await server.sql('select pg_notify($1, $2)', [AUTH_CHANGE_CHANNEL, 'all']);
      await call(server, 'GET', '/api/admin/settings', { auth: admin });
      expect(sent.length).toBeGreaterThan(0);
      sent.length = 0;
      // Now known, the caller costs no query: the stats are the only statement.
      await stats();
      expect(sent).toHaveLength(1);
      const statement = sent.find((q) => q.includes('dashboard_snapshot'))!;
      for (const table of ['"user"', 'org', 'dashboard', 'dashboard_snapshot', 'dashboard_tag', 'data_source', 'playlist', 'star']) {
        expect(statement).toContain(`from ${table}`);
      }
    } finally {
      connection.executeQuery = original;
    }
  });

  it('moves every counter with the rows behind it', async () => {
    const before = (await stats()).body;
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Stats Org') returning id`);
    const [u1] = await server.sql<{ id: number }>(`insert into "user" (login, email, org_id) values ('s1', 's1@x', 1) returning id`);
    const [u2] = await server.sql<{ id: number }>(`insert into "user" (login, email, org_id, is_admin) values ('s2', 's2@x', $1, true) returning id`, [org!.id]);
    // A service account is a user row but not a user in the counters.
    await server.sql(`insert into "user" (login, email, org_id, is_service_account) values ('sa-1-bot', 'sa-1-bot', 1, true)`);
    const [d1] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values (1, 'd1', 'one') returning id`);
    const [d2] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values ($1, 'd2', 'two') returning id`, [org!.id]);
    const [d3] = await server.sql<{ id: number }>(`insert into dashboard (org_id, uid, title) values (1, 'd3', 'three') returning id`);
    // Folders are not dashboards.
    await server.sql(`insert into dashboard (org_id, uid, title, is_folder) values (1, 'f1', 'folder', true)`);
    // Three tag rows, two distinct terms.
    await server.sql(`insert into dashboard_tag (dashboard_id, term) values ($1, 'prod'), ($2, 'prod'), ($2, 'db')`, [d1!.id, d2!.id]);
    await server.sql(`insert into dashboard_snapshot (org_id, name, key) values (1, 'snap', 'k1'), ($1, 'snap', 'k2')`, [org!.id]);
    await server.sql(`insert into playlist (org_id, name) values (1, 'p1'), (1, 'p2'), ($1, 'p3')`, [org!.id]);
    // Three stars on two dashboards.
    await server.sql(`insert into star (user_id, dashboard_id) values ($1, $3), ($2, $3), ($1, $4)`, [u1!.id, u2!.id, d1!.id, d3!.id]);
    await server.sql(
      `insert into data_source (org_id, uid, name, type, access) values (1, 'ds1', 'one', 'loki', 'proxy'), ($1, 'ds2', 'two', 'loki', 'proxy')`,
      [org!.id],
    );

    const after = (await stats()).body;
    // The camelCase names count the same rows as their snake_case twins; stars count every star.
    expect([after.orgs, after.dashboards, after.snapshots, after.tags, after.datasources, after.playlists, after.users]).toEqual([
      after.org_count, after.dashboard_count, after.db_snapshot_count, after.db_tag_count, after.data_source_count, after.playlist_count, after.user_count,
    ]);
    expect(after.stars).toBe(before.stars + 3);
    expect(after).toMatchObject({
      user_count: before.user_count + 2,
      org_count: before.org_count + 1,
      dashboard_count: before.dashboard_count + 3,
      db_snapshot_count: before.db_snapshot_count + 2,
      db_tag_count: before.db_tag_count + 2,
      data_source_count: before.data_source_count + 2,
      playlist_count: before.playlist_count + 3,
      starred_db_count: before.starred_db_count + 2,
      service_admin_count: before.service_admin_count + 1,
    });

    // And back down as rows go.
    await server.sql(`delete from dashboard where id = $1`, [d1!.id]);
    await server.sql(`delete from "user" where id = $1`, [u2!.id]);
    const down = (await stats()).body;
    expect(down).toMatchObject({
      user_count: after.user_count - 1,
      dashboard_count: after.dashboard_count - 1,
      db_tag_count: after.db_tag_count, // "prod" and "db" are still on d2
      starred_db_count: after.starred_db_count - 1,
      service_admin_count: after.service_admin_count - 1,
    });

    const graphql = await gql(server, '{ adminStats { userCount orgCount dashboardCount dbSnapshotCount dbTagCount dataSourceCount playlistCount starredDbCount serviceAdminCount } }', {}, admin);
    expect(Object.values(graphql.body.data!.adminStats)).toEqual(Object.values(down).slice(0, 9));
  });

  it('counts each user once under their highest role in any org, and who was seen when', async () => {
    const before = (await stats()).body;
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('Roles Org') returning id`);
    const user = async (login: string, seen: string | null, roles: Array<[number, string]>, serviceAccount = false) => {
      const [row] = await server.sql<{ id: number }>(
        `insert into "user" (login, email, org_id, is_service_account, last_seen_at) values ($1, $1, 1, $2, now() - cast($3 as interval)) returning id`,
        [login, serviceAccount, seen],
      );
      for (const [orgId, role] of roles) await server.sql(`insert into org_user (org_id, user_id, role) values ($1, $2, $3)`, [orgId, row!.id, role]);
    };
    await user('r-admin', '1 hour', [[1, 'Admin'], [org!.id, 'Viewer']]);
    await user('r-editor', '10 days', [[1, 'Editor']]);
    await user('r-viewer', '40 days', [[1, 'Viewer']]);
    await user('r-both', null, [[1, 'Viewer'], [org!.id, 'Editor']]);
    await user('r-none', '2 hours', []);
    await user('sa-1-r-bot', '1 minute', [[1, 'Admin']], true);
    await server.sql(`insert into alert (org_id, name) values (1, 'a1'), ($1, 'a2')`, [org!.id]);
    // Whether "1 hour" and "2 hours" ago fall in this month, as the database reckons months.
    const [month] = await server.sql<{ n: number }>(
      `select (case when now() - interval '1 hour' > date_trunc('month', now()) then 1 else 0 end
             + case when now() - interval '2 hours' > date_trunc('month', now()) then 1 else 0 end
             + case when now() - interval '10 days' > date_trunc('month', now()) then 1 else 0 end)::int as n`,
    );

    const after = (await stats()).body;
    const delta = (key: string) => after[key] - before[key];
    expect(Object.fromEntries(['users', 'admins', 'editors', 'viewers', 'activeUsers', 'activeAdmins', 'activeEditors', 'activeViewers',
      'dailyActiveUsers', 'dailyActiveAdmins', 'dailyActiveEditors', 'dailyActiveViewers', 'monthlyActiveUsers', 'alerts', 'activeSessions',
      'dailyActiveSessions', 'activeDevices'].map((key) => [key, delta(key)]))).toEqual({
      users: 5, admins: 1, editors: 2, viewers: 1,
      activeUsers: 3, activeAdmins: 1, activeEditors: 1, activeViewers: 0,
      dailyActiveUsers: 2, dailyActiveAdmins: 1, dailyActiveEditors: 0, dailyActiveViewers: 0,
      monthlyActiveUsers: month!.n, alerts: 2, activeSessions: 0, dailyActiveSessions: 0, activeDevices: 0,
    });

    const graphql = await gql(server, '{ adminStats { adminCount editorCount viewerCount activeUsers dailyActiveUsers alertCount } }', {}, admin);
    expect(graphql.body.data!.adminStats).toEqual({
      adminCount: after.admins, editorCount: after.editors, viewerCount: after.viewers, activeUsers: after.activeUsers,
      dailyActiveUsers: after.dailyActiveUsers, alertCount: after.alerts,
    });
  });
  it('counts a member with the None role as a viewer, as the original counts every role below Editor', async () => {
    const before = (await stats()).body;
    const [org] = await server.sql<{ id: number }>(`insert into org (name) values ('None Role Org') returning id`);
    const member = async (login: string, roles: Array<[number, string]>) => {
      const [row] = await server.sql<{ id: number }>(
        `insert into "user" (login, email, org_id, last_seen_at) values ($1, $1, 1, now() - interval '1 hour') returning id`, [login],
      );
      for (const [orgId, role] of roles) await server.sql(`insert into org_user (org_id, user_id, role) values ($1, $2, $3)`, [orgId, row!.id, role]);
    };
    await member('n-only', [[1, 'None']]);
    await member('n-and-editor', [[1, 'None'], [org!.id, 'Editor']]);
    await member('n-twice', [[1, 'None'], [org!.id, 'None']]);

    const after = (await stats()).body;
    const delta = (key: string) => after[key] - before[key];
    expect(Object.fromEntries(['users', 'admins', 'editors', 'viewers', 'activeViewers', 'dailyActiveViewers', 'activeEditors'].map((key) => [key, delta(key)])))
      .toEqual({ users: 3, admins: 0, editors: 1, viewers: 2, activeViewers: 2, dailyActiveViewers: 2, activeEditors: 1 });
    const graphql = await gql(server, '{ adminStats { viewerCount editorCount } }', {}, admin);
    expect(graphql.body.data!.adminStats).toEqual({ viewerCount: after.viewers, editorCount: after.editors });
  });
});
