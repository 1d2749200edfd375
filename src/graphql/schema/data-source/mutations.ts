import { orgMember, orgRole } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import { badRequest } from '../../../errors/domain.ts';
import { MESSAGES } from '../../../errors/messages.ts';
import type { DataSourceInput, DataSourceRef } from '../../../services/data-sources.ts';
import { checkTlsSecrets } from '../../../services/data-source-tls.ts';
import { builder, type SchemaTypes } from '../../builder.ts';
import { encodeNodeId } from '../../node-ids.ts';
import { deletePayload, mutate, rowId, UserErrorType, type Payload } from '../payloads.ts';
import { DataSourceType, loadDataSources, type DataSourceNode } from './node.ts';

/**
 * Changes to data sources: creation in the org the request acts in, and replacement and deletion
 * of one of its data sources by global id (or by the uid or name REST paths name it by), each with
 * its REST row's rule; the data source's own permissions (Edit) are applied by the service.
 */

const secretsDescription = 'Secrets (string values) to store encrypted; a key sent empty is removed, keys not sent are kept.';

/** The input fields' descriptions, shared by creation and update. */
const INPUT = {
  name: 'Unique in the org; used in by-name paths.',
  type: 'Kind of store, e.g. `prometheus`, `loki`, `graphite`, `elasticsearch`.',
  access: '`proxy` (calls go through the server) or `direct`.',
  url: 'Address of the store; `http://` is assumed when no scheme is given.',
  database: 'Database name, for kinds that take one.',
  user: 'User name sent to the store, for kinds that take one.',
  basicAuth: 'Whether to send Basic authentication to the store.',
  basicAuthUser: 'User name of Basic authentication.',
  withCredentials: 'Whether browsers send cookies with direct calls.',
  jsonData: 'Kind-specific options.',
} as const;

/** The fields creating and updating share: the kind, how to reach it, and its options and secrets. */
function connectionFields(t: PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'InputObject'>) {
  return {
    type: t.string({ required: true, description: INPUT.type }),
    access: t.string({ required: true, description: INPUT.access }),
    url: t.string({ required: false, description: INPUT.url }),
    database: t.string({ required: false, description: INPUT.database }),
    user: t.string({ required: false, description: INPUT.user }),
    basicAuth: t.boolean({ required: false, description: INPUT.basicAuth }),
    basicAuthUser: t.string({ required: false, description: INPUT.basicAuthUser }),
    withCredentials: t.boolean({ required: false, description: INPUT.withCredentials }),
    jsonData: t.field({ type: 'JSONObject', required: false, description: INPUT.jsonData }),
    secureJsonData: t.field({ type: 'JSONObject', required: false, description: secretsDescription }),
  };
}

export const CreateDataSourceInput = builder.inputType('CreateDataSourceInput', {
  description: 'A new data source. Without a name, the first free of `<type>`, `<type>-1`, ... is used.',
  fields: (t) => ({
    name: t.string({ required: false, description: INPUT.name }),
    ...connectionFields(t),
    isDefault: t.boolean({ required: false, description: 'The org\'s first data source is the default whatever this says.' }),
    uid: t.string({ required: false, description: 'Up to 40 of `[a-zA-Z0-9-_]`; generated when empty.' }),
  }),
});

export const UpdateDataSourceInput = builder.inputType('UpdateDataSourceInput', {
  description: 'The whole data source: omitted flags become false and `user`, `database` and `jsonData` are cleared (`jsonData` to `{}`); an empty `url`, `basicAuthUser` or `uid` keeps the stored value.',
  fields: (t) => ({
    name: t.string({ required: true, description: INPUT.name }),
    ...connectionFields(t),
    isDefault: t.boolean({ required: false, description: 'Whether it becomes the org\'s default (another default stops being one).' }),
    uid: t.string({ required: false, description: 'A new uid, up to 40 of `[a-zA-Z0-9-_]`; empty keeps it.' }),
    version: t.int({ required: false, description: 'The version read; a stale one is refused. 0 or absent skips the check.' }),
  }),
});

/** Something stored as sent that will not work where it is used (a TLS secret that is no PEM). */
interface DataSourceWarning { field: string; message: string }

const DataSourceWarningType = builder.objectRef<DataSourceWarning>('DataSourceWarning').implement({
  description: 'A value stored as sent, as the original stores it, that will fail where it is used: the calls that use it will answer an error naming the field.',
  fields: (t) => ({
    field: t.exposeString('field', { description: 'The input field, e.g. `secureJsonData.tlsCACert`.' }),
    message: t.exposeString('message', { description: 'What is wrong with it; never quotes the value.' }),
  }),
});

type DataSourceResult = Payload<{ dataSource: DataSourceNode | null; warnings: DataSourceWarning[] }>;

const DataSourcePayload = builder.objectRef<DataSourceResult>('DataSourcePayload').implement({
  description: 'The data source as stored after the change, or why it did not change.',
  fields: (t) => ({
    dataSource: t.field({ type: DataSourceType, nullable: true, description: 'As stored now, as the graph reads it; null when `userErrors` says why not.', resolve: (p) => p.dataSource }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
    warnings: t.field({
      type: [DataSourceWarningType],
      description: 'Secrets written that will not work where they are used (TLS material that is no usable PEM: a file path, a key where a certificate belongs), stored anyway as the original stores them; empty when none.',
      resolve: (p) => p.warnings,
    }),
  }),
});
const DataSourceDeletePayload = deletePayload('DataSourceDeletePayload', 'deletedDataSourceId', 'data source');

/** A file path rather than PEM text: one line, no PEM armour, shaped like a path. */
const looksLikePath = (value: string) => !value.includes('\n') && !value.includes('-----') && /^(?:[/~.]|[A-Za-z]:[\\/])\S*$/.test(value.trim());

/** The warnings a write's TLS secrets deserve: the first that is no usable PEM, named by field. */
export function tlsSecretWarnings(secureJsonData: unknown): DataSourceWarning[] {
  if (!secureJsonData || typeof secureJsonData !== 'object') return [];
  const secrets = Object.fromEntries(Object.entries(secureJsonData).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const problem = checkTlsSecrets(secrets);
  if (!problem) return [];
  const [field, reason] = problem;
  const hint = looksLikePath(secrets[field]!) ? ' (it looks like a file path: the PEM text itself is expected)' : '';
  return [{ field: `secureJsonData.${field}`, message: `secureJsonData.${field}: ${reason}${hint}` }];
}

/** The data source as the graph reads it after the change, with the data source permissions in its org. */
const dataSourceChange = async (ctx: RequestContext, input: { secureJsonData?: unknown }, change: () => Promise<{ id: number }>): Promise<DataSourceResult> => {
  const result = await mutate(ctx, change, async (ds) => ({ dataSource: (await loadDataSources(ctx, [String(ds.id)]))[0] ?? null }), { dataSource: null });
  return Object.assign(result, { warnings: result.userErrors.length === 0 ? tlsSecretWarnings(input.secureJsonData) : [] });
};

/** The data source a mutation names by exactly one of its keys, in the org the request acts in. */
function dataSourceRef(keys: { id?: string | number | null; uid?: string | null; name?: string | null }): DataSourceRef {
  const given = Object.entries(keys).filter(([, value]) => value != null);
  if (given.length !== 1) throw badRequest(MESSAGES.graph.oneKey('data source', Object.keys(keys)));
  if (keys.id != null) return { id: rowId(keys.id, 'DataSource') };
  return keys.uid != null ? { uid: keys.uid } : { name: keys.name! };
}

const KEYS = {
  id: 'The data source\'s global id (`DataSource.id`), in the org the request acts in.',
  uid: 'Or its uid.',
  name: 'Or its name.',
};

builder.mutationFields((t) => ({
  dataSourceCreate: t.field({
    type: DataSourcePayload,
    args: { input: t.arg({ type: CreateDataSourceInput, required: true, description: 'The data source, as `POST /api/datasources` takes it.' }) },
    description: 'Creates a data source in the org the request acts in, as `POST /api/datasources`. Org Admins (datasources:create).',
    extensions: { access: orgRole('Admin', 'datasources:create') },
    resolve: (_root, { input }, ctx) => dataSourceChange(ctx, input, () => ctx.services.dataSources.create(ctx.em, ctx.orgId, input)),
  }),
  dataSourceUpdate: t.field({
    type: DataSourcePayload,
    args: {
      id: t.arg.id({ required: false, description: KEYS.id }),
      uid: t.arg.string({ required: false, description: KEYS.uid }),
      input: t.arg({ type: UpdateDataSourceInput, required: true, description: 'The whole data source, as `PUT /api/datasources/:id` takes it.' }),
    },
    description: 'Replaces a data source, as `PUT /api/datasources/:id` (and `/uid/:uid`). Org members of any role (`None` included) pass the gate (datasources:write); the data source\'s permissions then require Edit (Admins and Editors by default).',
    extensions: { access: orgMember('datasources:write') },
    resolve: (_root, { id, uid, input }, ctx) => dataSourceChange(ctx, input, async () => {
      const ref = dataSourceRef({ id, uid }) as { id: number } | { uid: string };
      return ctx.services.dataSources.update(ctx.em, ctx.caller, ref, input as DataSourceInput);
    }),
  }),
  dataSourceDelete: t.field({
    type: DataSourceDeletePayload,
    args: {
      id: t.arg.id({ required: false, description: KEYS.id }),
      uid: t.arg.string({ required: false, description: KEYS.uid }),
      name: t.arg.string({ required: false, description: KEYS.name }),
    },
    description: 'Deletes a data source, as `DELETE /api/datasources/:id` (and `/uid/:uid`, `/name/:name`). Org members of any role (`None` included) pass the gate (datasources:delete); the data source\'s permissions then require Edit (Admins and Editors by default).',
    extensions: { access: orgMember('datasources:delete') },
    resolve: (_root, keys, ctx) => mutate(ctx, () => ctx.services.dataSources.delete(ctx.em, ctx.caller, dataSourceRef(keys)),
      // The id as the client sent it, for it to evict; the deleted one's when it named the data source otherwise.
      (deleted) => ({ deletedDataSourceId: keys.id != null ? String(keys.id) : encodeNodeId('DataSource', deleted) }), { deletedDataSourceId: null }),
  }),
}));
