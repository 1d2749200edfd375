/**
 * Every message the server puts on the wire, in one table. Legacy clients match on these strings,
 * so most are the original server's exact wording; the ones marked "ours" have no original.
 */
export const MESSAGES = {
  http: {
    notFound: 'Not found',
    badRequest: 'bad request data',
    idInvalid: 'id is invalid',
    /** A path parameter that is not an integer, named as the original names the org and user ones. */
    paramInvalid: (name: string) => (name === 'orgId' || name === 'userId' || name === 'teamId' ? `${name} is invalid` : 'id is invalid'),
    tooLarge: 'request body too large',
    internal: 'Internal Server Error',
    permissionDenied: 'Permission denied',
    /** Ours: node:http refusals before any route runs. */
    clientError: 'bad request',
    requestTimeout: 'request timeout',
    headersTooLarge: 'request header fields too large',
    /** Ours: a string argument or body field past its bound, checked before anything runs. */
    tooLong: (field: string, max: number) => `${field} is too long (at most ${max} characters)`,
    /** Ours: a JSON argument or body field past its bound. */
    jsonTooLarge: (field: string, max: number) => `${field} is too large (at most ${max} bytes of JSON)`,
  },
  database: {
    /** Ours: PostgreSQL is down or restarting; the request may be retried. */
    unavailable: 'database unavailable',
  },
  auth: {
    unauthorized: 'Unauthorized',
    badPassword: 'Invalid username or password',
    invalidKey: 'Invalid API key',
    expiredKey: 'Expired API key',
    revokedKey: 'Revoked API key',
    wrongOrg: 'API key does not belong to the requested organization',
    /** An `X-Grafana-Org-Id` that Go's strconv.ParseInt refuses, in its words. */
    orgHeaderInvalid: (value: string, reason: string) => `strconv.ParseInt: parsing ${JSON.stringify(value)}: ${reason}`,
    /** The access-control 403, naming the missing action. */
    accessDenied: (action: string) => `You'll need additional permissions to perform this action. Permissions needed: ${action}`,
  },
  dataSource: {
    notFound: 'Data source not found',
    nameTaken: 'data source with the same name already exists',
    uidTaken: 'data source with the same uid already exists',
    versionConflict: 'Datasource has already been updated by someone else. Please reload and try again',
    invalidUrl: 'Validation error, invalid URL',
    readOnlyUpdate: 'Cannot update read-only data source',
    readOnlyDelete: 'Cannot delete read-only data source',
    invalidName: 'Invalid datasource name.',
    invalidUrlLength: 'Invalid datasource url.',
    invalidUid: 'Invalid datasource UID.',
    /** A uid change seals the kept secrets again for the new uid, which needs them readable. */
    secretsUnreadable: 'stored secrets cannot be decrypted with the configured secret_key, so they cannot follow the new uid: send them again or restore the key',
    /** Ours: the original accepts any text and fails every call later; the PEM itself is never quoted. */
    added: 'Datasource added',
    updated: 'Datasource updated',
    deleted: 'Data source deleted',
  },
  user: {
    created: 'User created',
    passwordUpdated: 'User password updated',
    permissionsUpdated: 'User permissions updated',
    deleted: 'User deleted',
    needLogin: 'Validation error, need specify either username or email',
    passwordTooShort: 'Password is missing or too short',
    newPasswordTooShort: 'New password too short',
    notFound: 'user not found',
    orgNotFound: 'organization not found',
    orgNameTaken: 'Organization name taken',
    lastAdmin: 'cannot remove last grafana admin',
    /** Ours: text PostgreSQL cannot store as given. */
    nul: (field: string) => `${field} must not contain NUL characters`,
    tooLong: (field: string, max: number) => MESSAGES.http.tooLong(field, max),
    exists: (email: string, login: string) => `User with email '${email}' or username '${login}' already exists`,
    onlyUsers: 'Endpoint only available for users',
    updated: 'User updated',
    loginConflict: 'Update would result in user login conflict',
    emptyLoginAndEmail: 'Need to specify either username or email',
    invalidOldPassword: 'Invalid old password',
    /** The password policy's wording (PUT /api/user/password), not the admin route's. */
    newPasswordPolicyTooShort: 'New password is too short',
    passwordChanged: 'User password changed',
    notValidOrg: 'Not a valid organization',
    orgChanged: 'Active organization changed',
    disabled: 'User disabled',
    enabled: 'User enabled',
  },
  org: {
    notFound: 'Organization not found',
    nameTaken: 'Organization name taken',
    created: 'Organization created',
    updated: 'Organization updated',
    deleted: 'Organization deleted',
    deleteNotFound: 'Failed to delete organization. ID not found',
    deleteCurrent: 'Can not delete org for current user',
  },
  orgUser: {
    invalidRole: 'Invalid role specified',
    roleTooHigh: "Cannot assign a role higher than user's role",
    userNotFound: 'User not found',
    alreadyMember: 'User is already member of this organization',
    added: 'User added to organization',
    updated: 'Organization user updated',
    removed: 'User removed from organization',
    userDeleted: 'User deleted',
    lastAdminDemoted: 'Cannot change role so that there is no organization admin left',
    lastAdminRemoved: 'Cannot remove last organization admin',
  },
  preferences: {
    updated: 'Preferences updated',
    invalidTheme: 'Invalid theme',
    dashboardNotFound: 'Dashboard not found',
    /** `GET`, `PUT` and `PATCH /api/user/preferences` with a legacy API key, which is no user. */
    notValidIdentity: 'Not a valid identity',
    unknownCookieType: "Got an unknown cookie preference type. Expected a set containing one or more of 'functional', 'performance', or 'analytics'}",
  },
  team: {
    notFound: 'Team not found',
    nameTaken: 'Team name taken',
    created: 'Team created',
    updated: 'Team updated',
    deleted: 'Team deleted',
    deleteNotFound: 'Failed to delete Team. ID not found',
    alreadyMember: 'User is already added to this team',
    memberAdded: 'Member added to Team',
    memberUpdated: 'Team member updated',
    memberRemoved: 'Team Member removed',
    membershipsUpdated: 'Team memberships have been updated',
    memberNotFound: 'Team member not found',
    /** The update route's wording has a full stop; the removal's has none. */
    memberNotFoundDot: 'Team member not found.',
  },
  /** The original's resource permission API (`/api/access-control/datasources/...`). */
  permission: {
    updated: 'Permission updated',
    removed: 'Permission removed',
    allUpdated: 'Permissions updated',
    userFailed: 'failed to set user permission',
    teamFailed: 'failed to set team permission',
    roleFailed: 'failed to set role permission',
    setFailed: 'failed to set permissions',
  },
  apiKey: {
    deleted: 'API key deleted',
    revoked: 'API key revoked',
    negativeTtl: 'negative value for SecondsToLive',
    invalidRole: 'Invalid role specified',
    nameTaken: 'API key, organization ID and name must be unique',
    deleteFailed: 'Failed to delete API key',
    notFound: 'API key not found',
  },
  serviceAccount: {
    deleted: 'Service account deleted',
    tokenDeleted: 'Service account token deleted',
    badRequest: 'Bad request data',
    createFailed: 'Failed to create service account',
    notFound: 'Failed to retrieve service account',
    tokenNameTaken: 'service account token with given name already exists in the organization',
    tokenDeleteFailed: 'Failed to delete service account token',
    roleTooHigh: "Cannot assign a role higher than user's role",
    updated: 'Service account updated',
  },
  alert: {
    legacyDisabled: 'legacy alerting is disabled, so this call has no effect.',
    negativePanelId: 'panelId must not be negative',
    dashboardNotFound: 'Dashboard not found',
  },
  proxy: {
    idInvalid: 'id is invalid',
    uidInvalid: 'UID is invalid',
    notFound: 'Unable to find datasource',
    /** Ours: the original forwards traversal attempts as they are. */
    badPath: 'invalid proxy path',
    secretsUnreadable: 'Unable to load datasource meta data',
    upstreamUnauthorized: 'Authentication to data source failed',
    invalidUrl: (url: string) => `Invalid data source URL: "${url}"`,
    whitelist: 'Data proxy hostname and ip are not included in whitelist',
    /** Ours: the original has no private-address policy. */
    addressDenied: 'Data proxy target address is not allowed',
    esDelete: 'deletes not allowed on proxied Elasticsearch datasource',
    esPut: 'puts not allowed on proxied Elasticsearch datasource',
    esPost: 'posts not allowed on proxied Elasticsearch datasource except on /_msearch',
    promDelete: 'non allow-listed DELETEs not allowed on proxied Prometheus datasource',
    promPut: 'non allow-listed PUTs not allowed on proxied Prometheus datasource',
    promPost: 'non allow-listed POSTs not allowed on proxied Prometheus datasource',
    routeDenied: 'plugin proxy route access denied',
    /** Ours: the request already carries this deployment's Via entry. */
    loopDetected: 'data source proxy loop detected',
  },
  /** `POST /api/ds/query` and data source resources (`pkg/services/query/errors.go`, `pkg/api/plugin_resource.go`). */
  query: {
    noQueries: 'No queries found',
    invalidDatasourceId: 'Query does not contain a valid data source identifier',
    duplicateRefId: 'Multiple queries using the same RefId is not allowed ',
    missingDataSourceInfo: (refId: string) => `Query ${refId} is missing datasource information`,
    resourceFailed: 'Failed to call resource',
    /** A data source the caller may not query (its permissions), as the original's data source cache and resource handler word it. */
    accessDenied: 'Access denied to data source',
    resourceAccessDenied: 'Access denied to datasource',
    /** Ours: kinds this server does not query, answered per refId. */
    kindNotSupported: (type: string) => `data source type "${type}" is not supported by this server's query API`,
    /** Ours: the refId's answer is past `[query] max_points_per_response`. */
    tooManyPoints: (limit: number) => `the response has more than ${limit} data points ([query] max_points_per_response)`,
    /** Ours: the refId's answer is past `[query] max_series_per_response`. */
    tooManySeries: (limit: number) => `the response has more than ${limit} series ([query] max_series_per_response)`,
    /** Ours: the refIds answered before this one (by refId) leave it no room under the request's budget. */
    requestTooManyPoints: (limit: number) => `the request's responses have more than ${limit} data points ([query] max_points_per_request)`,
    requestTooManySeries: (limit: number) => `the request's responses have more than ${limit} series ([query] max_series_per_request)`,
    graphTooManyPoints: (limit: number) => `the GraphQL request's responses have more than ${limit} data points ([query] max_points_per_graph_request)`,
    /** Ours: more queries in one request than `[query] max_queries_per_request`. */
    tooManyQueries: (limit: number) => `Too many queries in one request: at most ${limit} ([query] max_queries_per_request)`,
    /** Ours: the instance holds `[query] max_answer_bytes_in_flight` of answers; the request (503) or refId may try again. */
    answersBusy: 'Too many query answers are being built on this server; try again shortly ([query] max_answer_bytes_in_flight)',
    /** Ours: the request was cancelled (client gone) before the refId was answered. */
    cancelled: 'context canceled',
    /** A kind failed in a way it did not report itself. */
    failed: 'Query data error',
  },
  /** Ours: GraphQL subscriptions have no original. UNAVAILABLE ones mean "subscribe again and reload". */
  live: {
    notListening: 'Subscriptions are unavailable while this server cannot follow changes; try again shortly',
    feedLost: 'Change feed interrupted; subscribe again and reload',
    shuttingDown: 'Server shutting down; subscribe again',
    readFailed: 'Could not read a change; subscribe again and reload',
    clientGone: 'Client went away',
    overflow: (size: number) => `Subscriber too slow: more than ${size} changes waiting; subscribe again and reload`,
    tooMany: (limit: number) => `Too many open subscriptions on this server (limit ${limit})`,
    tooManyForPrincipal: (limit: number) => `Too many open subscriptions for these credentials (limit ${limit})`,
    /** Live queries (`liveQuery`): the arguments the subscription refuses. */
    badRefresh: (text: string) => `Invalid refresh "${text}": a duration such as 5s, 1m or 1m30s`,
    refreshTooShort: (text: string, minimum: string) => `Refresh "${text}" is shorter than the server's minimum of ${minimum}`,
    badRange: (text: string) => `Invalid time "${text}": epoch milliseconds, a duration such as 5m, or now-based date math such as now-1h`,
    /** Ours: a live query that would take its caller past `[live] max_upstream_calls_per_second`. */
    overBudget: (limit: number, asked: string, held: string) =>
      `Too many data source calls per second for these credentials' live queries (limit ${limit}): this one would add ${asked} to the ${held} already watched; refresh less often or query less`,
    /** Ours: the final event of a live query whose data source is gone. */
    dataSourceGone: 'Data source not found (deleted, or its uid changed); this live query has ended',
    /** A refId's error when a whole run failed (its answer could not be read at all). */
    runFailed: 'Query data error',
    /** A refId's error when its run outlived the query timeout (Go's wording for a passed deadline, as the original reports it). */
    runTimeout: 'context deadline exceeded',
  },
  /** Ours: the graph's global ids and connection cursors (GraphQL only). */
  graph: {
    invalidId: (id: string) => `Invalid global id: ${id}`,
    invalidCursor: (cursor: string) => `Invalid cursor for this list: ${cursor}`,
    pageSize: (arg: string, max: number) => `${arg} must be between 0 and ${max}`,
    tooManyIds: (max: number) => `At most ${max} ids`,
    /** A mutation given none, or more than one, of the keys it takes an object by. */
    oneKey: (what: string, keys: readonly string[]) => `Name the ${what} by exactly one of ${keys.join(', ')}`,
  },
  /** The messages clients of persisted queries match on (Apollo's); GraphQL only. */
  trustedDocuments: {
    notFound: 'PersistedQueryNotFound',
    notInList: 'PersistedQueryNotInList',
    idRequired: 'PersistedQueryIdRequired',
    noQuery: 'Must provide query string.',
  },
  /** Data source health checks: each kind's wording is its plugin's in the original. */
  health: {
    /** The original's answer for a plugin without a check. */
    notImplemented: 'Health check not implemented',
    /** The original's request validator (whitelist), before the plugin runs. */
    accessDenied: 'Access denied',
    /** Ours: the original answers 500 "Unable to get plugin context". */
    secretsUnreadable: 'Unable to load datasource meta data: its secrets cannot be decrypted (was [security] secret_key changed?)',
    /** Ours: an unforeseen failure inside a check, answered as a failed check rather than a 500. */
    /** The original's words when a plugin's check fails outright; the cause is logged, never shown. */
    unexpected: 'Plugin health check failed',
    working: 'Data source is working',
    prometheusOk: 'Successfully queried the Prometheus API.',
    prometheusFailed: (cause: string) => `${cause} - There was an error returned querying the Prometheus API.`,
    lokiOk: 'Successfully queried the Loki API.',
    lokiFailed: (cause: string) => `There was an error returned querying the Loki API.: ${cause}`,
    graphiteOk: 'Successfully connected to Graphite',
    graphiteFailed: 'Graphite health check failed. See details below',
    influxWorking: (found: string) => `datasource is working. ${found}`,
    influxFailed: (cause: string, what: string) => `${cause} ${what}`,
    elasticsearchOk: 'Elasticsearch data source is healthy.',
    /** The original says only that it could not connect; ours adds the cause. */
    elasticsearchUnreachable: (cause: string) => `Health check failed: Failed to connect to Elasticsearch: ${cause}`,
    elasticsearchTimedOut: 'Health check failed: Elasticsearch data source is not healthy. Request timed out',
    elasticsearchStatus: (status: string) => `Health check failed: Elasticsearch data source is not healthy. Status: ${status}`,
    elasticsearchUnparsable: (shown: string) => `Health check failed: Failed to parse response from Elasticsearch. Response received: ${shown}`,
    elasticsearchRed: 'Health check failed: Elasticsearch data source is not healthy',
    zipkinStatus: (status: number) => `invalid response from zipkin with status code ${status}`,
  },
  /** The TestData kind's answers (`pkg/tsdb/grafana-testdata-datasource`). */
  testData: {
    randomWalkError: 'this is an error and it can include URLs http://grafana.com/',
    panic: 'Test Data Panic!',
    csvHeader: 'failed to read header line: EOF',
    csvLine: (cause: string) => `failed to read line: ${cause}`,
    csvWaveValue: (raw: string) => `failed to parse value '${raw}' into nullable float: strconv.ParseFloat: parsing "${raw}": invalid syntax`,
    waveformGap: 'did not get value at point in waveform - should not be here',
    /** Ours: the original divides by the step and panics on zero. */
    csvWaveStep: 'csv wave timeStep must be a positive whole number of seconds',
  },
  provisioning: {
    reloaded: 'Datasources config reloaded',
  },
} as const;
