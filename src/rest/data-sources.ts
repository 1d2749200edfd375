import type { RequestContext } from '../context.ts';
import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { DEFAULT_MAX_CHARS } from '../graphql/input-limits.ts';
import { decodeNodeId, keyNumbers, type NodeTypeName } from '../graphql/node-ids.ts';
import type { DataSourceAction } from '../services/data-source-access.ts';
import type { DataSourceRef } from '../services/data-sources.ts';
import { typeLogoUrl } from '../services/data-source-types.ts';
import type { DataSourceHealth } from '../query/health.ts';
import { globalId, type LegacyInput } from './variables.ts';
import { serviceRefusal, type Missing } from './executor.ts';
import { MESSAGE_SCHEMA, messageOf } from './messages.ts';
import { computed, constant, from, goMap, object, type Wire } from './wire.ts';

/**
 * What only the wire has of data sources: the original's answers around the graph's `DataSource`
 * (its legacy constant fields, its logo URL, its envelopes), the legacy fields of its bodies, and
 * what its rows answer where the graph answers null.
 */

/** REST's words for the numeric ids its data sources carry. */
const ID = from('id', undefined, 'Assigned by the server.');
const ORG_ID = from('orgId', undefined, 'The owning org.');

const LOGO = computed<string>('type', typeLogoUrl, { type: 'string', description: 'Logo of the kind, relative to the UI.' });

/** A legacy field the original still sends, always empty. */
const emptyLegacy = (secret: string) => constant('', {
  type: 'string',
  description: `Always empty: ${secret === 'password' ? 'the legacy plaintext password is accepted on input and kept as the `password` secret' : 'kept as the `basicAuthPassword` secret'}. Deprecated: Write \`secureJsonData.${secret}\`; read \`secureJsonFields\`.`,
  deprecated: true,
});

/** A data source as the original's reads answer it (`GET /api/datasources/:id`), over the `DataSourceFull` fragment. */
export const DATA_SOURCE = object({
  id: ID, uid: 'uid', orgId: ORG_ID, name: 'name', type: 'type', typeLogoUrl: LOGO, access: 'access', url: 'url',
  password: emptyLegacy('password'),
  user: 'user', database: 'database', basicAuth: 'basicAuth', basicAuthUser: 'basicAuthUser',
  basicAuthPassword: emptyLegacy('basicAuthPassword'),
  withCredentials: 'withCredentials', isDefault: 'isDefault', jsonData: 'jsonData', secureJsonFields: 'secureJsonFields', version: 'version', readOnly: 'readOnly',
}, { component: 'DataSourceFull', description: 'A named connection to an external metric or log store, owned by one org.' });

/** A data source as the original lists it (`GET /api/datasources`), over the `DataSourceListItem` fragment. */
export const DATA_SOURCE_LIST_ITEM = object({
  id: ID, uid: 'uid', orgId: ORG_ID, name: 'name', type: 'type', typeName: 'typeName', typeLogoUrl: LOGO, access: 'access', url: 'url',
  user: 'user', database: 'database', basicAuth: 'basicAuth', isDefault: 'isDefault', jsonData: 'jsonData', readOnly: 'readOnly',
}, { component: 'DataSourceListItem', description: 'A named connection to an external metric or log store, owned by one org.' });

/** The answer to a creation or an update (a Go map: keys sorted), over the mutation's payload. */
export const dataSourceChange = (message: string): Wire => goMap({
  datasource: from('dataSource', DATA_SOURCE, 'The data source as stored now.'),
  id: from('dataSource.id', undefined, 'Its id.'),
  message: constant(message, { type: 'string', description: '`Datasource added` or `Datasource updated`.' }),
  name: from('dataSource.name', undefined, 'Its name.'),
});

/** The answer to `GET /api/datasources/id/:name`. */
export const DATA_SOURCE_ID = object({ id: from('id', undefined, 'The numeric id REST paths take.') });

/** The numeric id in a deleted data source's global id. */
const deletedId = (globalId: string) => Number(keyNumbers(decodeNodeId(globalId).id)[0]);

/** The answer to a deletion: by id the message alone, by uid or name with the id. */
export const DATA_SOURCE_DELETED = messageOf(constant(MESSAGES.dataSource.deleted, { type: 'string', description: 'Always `Data source deleted`.' }));
export const DATA_SOURCE_DELETED_WITH_ID = object({
  id: computed<string>('deletedDataSourceId', deletedId, { type: 'integer', format: 'int32', description: 'The id of the data source deleted.' }),
  message: constant(MESSAGES.dataSource.deleted, { type: 'string', description: 'Always `Data source deleted`.' }),
});

const LEGACY_SECRETS = ['password', 'basicAuthPassword'] as const;

/**
 * The legacy plaintext `password` and `basicAuthPassword` of the original's bodies (up to its
 * v8): each, when not empty, is written as the secret of the same name (over one `secureJsonData`
 * names too), as the original keeps them; the graph takes secrets in `secureJsonData` only.
 */
export const LEGACY_SECRET_FIELDS: LegacyInput = {
  fields: {
    password: { type: 'string', nullable: true, description: 'Legacy plaintext password, kept as the `password` secret. Deprecated: Use `secureJsonData.password`.', deprecated: true },
    basicAuthPassword: { type: 'string', nullable: true, description: 'Legacy plaintext Basic password, kept as the `basicAuthPassword` secret. Deprecated: Use `secureJsonData.basicAuthPassword`.', deprecated: true },
  },
  into(input) {
    for (const key of LEGACY_SECRETS) {
      if (!(key in input)) continue;
      const value = input[key];
      delete input[key];
      if (value === null || value === undefined) continue;
      // What GraphQL's `String` would refuse is refused alike.
      if (typeof value !== 'string') throw badRequest();
      // The bound the graph's String inputs have, named as the field REST took.
      if (value.length > DEFAULT_MAX_CHARS) throw badRequest(MESSAGES.http.tooLong(key, DEFAULT_MAX_CHARS));
      if (value === '') continue;
      const secrets = input.secureJsonData;
      if (secrets === null || secrets === undefined) input.secureJsonData = { [key]: value };
      else if (typeof secrets === 'object' && !Array.isArray(secrets)) input.secureJsonData = { ...secrets, [key]: value };
      // Any other `secureJsonData` is refused as it is (400), whatever the legacy field says.
    }
  },
};

/**
 * Why a data source of the org the request acts in cannot be `action`ed by the caller (404, or
 * 403 naming the action), as the service's one lookup words it; for rows whose value the graph
 * answered null.
 */
export const dataSourceRefusal = (action: DataSourceAction, ref: (variables: Record<string, unknown>) => DataSourceRef): Missing =>
  serviceRefusal((ctx, variables) => ctx.services.dataSources.getFor(ctx.em, ctx.caller, ref(variables), action), MESSAGES.dataSource.notFound);

/** The original's `util.IsValidShortUID`. */
const SHORT_UID = /^[a-zA-Z0-9\-_]{0,40}$/;

/**
 * A health check of a data source of the org the request acts in, where the graph found none: the
 * check itself if it can run now, or its refusal (an invalid uid, not found, not the caller's to query).
 */
export function healthCheck(ref: (variables: Record<string, unknown>) => { id: number } | { uid: string }) {
  return (ctx: RequestContext, variables: Record<string, unknown>): Promise<DataSourceHealth> => {
    const target = ref(variables);
    if ('uid' in target && !SHORT_UID.test(target.uid)) return Promise.reject(badRequest(MESSAGES.proxy.uidInvalid));
    return ctx.services.dataSourceHealth.check(ctx.dataSourceCaller(), target);
  };
}

/** A grant on a data source as the original lists it, over the `DataSourcePermissionFields` fragment: no grant is inherited here. */
export const DATA_SOURCE_PERMISSION = object({
  id: 'id', roleName: 'roleName', isManaged: 'isManaged',
  isInherited: constant(false, { type: 'boolean', description: 'Always false: grants are made on the data source itself.' }),
  isServiceAccount: 'isServiceAccount', userId: 'userId', userLogin: 'userLogin', userAvatarUrl: 'userAvatarUrl', teamId: 'teamId', teamAvatarUrl: 'teamAvatarUrl',
  team: 'team', builtInRole: 'builtInRole', actions: 'actions', permission: 'permission',
}, { component: 'DataSourcePermissionFields', description: 'One grant on a data source: to a user, a team or a built-in role, at Query, Edit or Admin.' });

/** The answer to a grant to one user, team or role: whether it was set or removed (an empty permission). */
export const PERMISSION_SET = messageOf(computed<unknown>('', (_payload, variables) => (variables.permission ? MESSAGES.permission.updated : MESSAGES.permission.removed), MESSAGE_SCHEMA));

/** The answer to several grants at once. */
export const permissionsSet = (message: string) => messageOf(constant(message, MESSAGE_SCHEMA));

/**
 * The grants of `POST /api/access-control/datasources/:uid` with the numeric ids REST takes made
 * the global ids the graph takes; an id that is no integer is refused as GraphQL's `Int` refuses it.
 */
export function permissionIds(values: Record<string, unknown>): Record<string, unknown> {
  const grants = values.permissions;
  if (!Array.isArray(grants)) return values;
  return {
    ...values,
    permissions: grants.map((grant) => (grant === null || typeof grant !== 'object' || Array.isArray(grant) ? grant : {
      ...grant,
      ...idOf(grant as Record<string, unknown>, 'userId', 'User'),
      ...idOf(grant as Record<string, unknown>, 'teamId', 'Team'),
    })),
  };
}

/** The REST body's grant, as the OpenAPI document describes it: numeric ids, as the original takes them. */
export const PERMISSION_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    builtInRole: { type: 'string', nullable: true, description: '`Viewer`, `Editor` or `Admin`.' },
    permission: { type: 'string', nullable: true, description: '`Query`, `Edit` or `Admin`; empty removes the grant.' },
    teamId: { type: 'integer', format: 'int32', nullable: true, description: 'A team of the org.' },
    userId: { type: 'integer', format: 'int32', nullable: true, description: 'A user (or service account) of the org.' },
  },
  description: 'One grant: exactly one of `userId`, `teamId`, `builtInRole`, and a `permission` (empty removes it).',
};

/** `key` of a grant (matched case-insensitively, as Go reads JSON) as the global id of `type`, when it is set. */
function idOf(grant: Record<string, unknown>, key: string, type: NodeTypeName): Record<string, unknown> {
  const found = Object.keys(grant).find((k) => k.toLowerCase() === key.toLowerCase());
  if (found === undefined) return {};
  const value = grant[found];
  if (value === null || value === undefined) return { [found]: value };
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 2 ** 31 - 1) throw badRequest();
  return { [found]: globalId(type, value) };
}
