import { builder, type FieldsOf } from '../builder.ts';
import { orgMember, orgRole } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { MESSAGES } from '../../errors/messages.ts';
import type { DataSourceInput, DataSourceRecord, DataSourceRef, DataSourceRow } from '../../services/data-sources.ts';
import { typeLogoUrl, typeName } from '../../services/data-source-types.ts';

/** What both shapes of a data source (REST's and the graph's node) hold but the id. */
export type DataSourceFieldsSource = Omit<DataSourceRecord, 'id'>;

/** The fields a data source shows, but its id: shared by the REST shape and the graph's node. */
export const dataSourceFields = (t: FieldsOf<DataSourceFieldsSource>) => ({
  uid: t.exposeString('uid', { description: 'Stable identifier, unique in the org.' }),
  orgId: t.exposeInt('orgId', { description: 'The owning org.' }),
  name: t.exposeString('name', { description: 'Unique in the org; used in by-name paths.' }),
  type: t.exposeString('type', { description: 'Kind of store, e.g. `graphite`, `elasticsearch`, `cloudwatch`, `prometheus`.' }),
  typeName: t.string({ description: 'Display name of the kind.', resolve: (ds) => typeName(ds.type) }),
  typeLogoUrl: t.string({ description: 'Logo of the kind, relative to the UI.', resolve: (ds) => typeLogoUrl(ds.type) }),
  access: t.exposeString('access', { description: '`proxy` (calls go through the server) or `direct`.' }),
  url: t.exposeString('url', { description: 'Address of the store.' }),
  password: t.string({
    description: 'Always empty: the legacy plaintext password is accepted on input and kept as the `password` secret.',
    deprecationReason: 'Write `secureJsonData.password`; read `secureJsonFields`.',
    resolve: () => '',
  }),
  user: t.exposeString('user', { description: 'User name sent to the store, for kinds that take one.' }),
  database: t.exposeString('database', { description: 'Database name, for kinds that take one.' }),
  basicAuth: t.exposeBoolean('basicAuth', { description: 'Whether Basic authentication is sent to the store.' }),
  basicAuthUser: t.exposeString('basicAuthUser', { description: 'User name of Basic authentication.' }),
  basicAuthPassword: t.string({
    description: 'Always empty: kept as the `basicAuthPassword` secret.',
    deprecationReason: 'Write `secureJsonData.basicAuthPassword`; read `secureJsonFields`.',
    resolve: () => '',
  }),
  withCredentials: t.exposeBoolean('withCredentials', { description: 'Whether browsers send cookies with direct calls.' }),
  isDefault: t.exposeBoolean('isDefault', { description: 'At most one data source per org is the default.' }),
  jsonData: t.field({ type: 'JSONObject', nullable: true, description: 'Kind-specific options; `{}` when none.', resolve: (ds) => ds.jsonData ?? {} }),
  secureJsonFields: t.field({
    type: 'JSONObject',
    description: 'Names of stored secrets, each mapped to true. Secret values are write-only.',
    resolve: (ds, _args, ctx) => ctx.services.dataSources.secureJsonFields(ds),
  }),
  version: t.exposeInt('version', { description: 'Incremented on every update; send it back to detect concurrent edits.' }),
  readOnly: t.exposeBoolean('readOnly', { description: 'Provisioned from files; cannot be changed through the API.' }),
});

export const DataSourceType = builder.objectRef<DataSourceRecord>('DataSource').implement({
  description: 'A named connection to an external metric or log store, owned by one org. The REST shape; the graph\'s is `DataSourceNode`.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'Assigned by the server.' }),
    ...dataSourceFields(t),
  }),
});

const DataSourceIdentity = builder.objectRef<{ id: number }>('DataSourceIdentity').implement({
  description: 'Just the id of a data source.',
  fields: (t) => ({ id: t.exposeInt('id', { description: 'The numeric id REST paths take.' }) }),
});

const DataSourceChange = builder.objectRef<{ row: DataSourceRow; message: string }>('DataSourceChange').implement({
  description: 'Result of creating or updating a data source.',
  fields: (t) => ({
    datasource: t.field({ type: DataSourceType, description: 'The data source as stored now.', resolve: (r) => r.row }),
    id: t.int({ description: 'Its id.', resolve: (r) => r.row.id }),
    message: t.exposeString('message', { description: '`Datasource added` or `Datasource updated`.' }),
    name: t.string({ description: 'Its name.', resolve: (r) => r.row.name }),
  }),
});

const DataSourceDeletion = builder.objectRef<{ id: number; message: string }>('DataSourceDeletion').implement({
  description: 'Result of deleting a data source.',
  fields: (t) => ({ id: t.exposeInt('id', { description: 'The id of the data source deleted.' }), message: t.exposeString('message', { description: 'Always `Data source deleted`.' }) }),
});

const secretsDescription = 'Secrets (string values) to store encrypted; a key sent empty is removed, keys not sent are kept.';

const DataSourceFields = {
  url: 'Address of the store; `http://` is assumed when no scheme is given.',
} as const;

/** The input fields' descriptions, shared by creation and update. */
const INPUT = {
  name: 'Unique in the org; used in by-name paths.',
  type: 'Kind of store, e.g. `prometheus`, `loki`, `graphite`, `elasticsearch`.',
  access: '`proxy` (calls go through the server) or `direct`.',
  database: 'Database name, for kinds that take one.',
  user: 'User name sent to the store, for kinds that take one.',
  basicAuth: 'Whether to send Basic authentication to the store.',
  basicAuthUser: 'User name of Basic authentication.',
  withCredentials: 'Whether browsers send cookies with direct calls.',
  jsonData: 'Kind-specific options.',
  password: 'Legacy plaintext password, kept as the `password` secret.',
  basicAuthPassword: 'Legacy plaintext Basic password, kept as the `basicAuthPassword` secret.',
} as const;

export const CreateDataSourceInput = builder.inputType('CreateDataSourceInput', {
  description: 'A new data source. Without a name, the first free of `<type>`, `<type>-1`, ... is used.',
  fields: (t) => ({
    name: t.string({ required: false, description: INPUT.name }),
    type: t.string({ required: true, description: INPUT.type }),
    access: t.string({ required: true, description: INPUT.access }),
    url: t.string({ required: false, description: DataSourceFields.url }),
    database: t.string({ required: false, description: INPUT.database }),
    user: t.string({ required: false, description: INPUT.user }),
    basicAuth: t.boolean({ required: false, description: INPUT.basicAuth }),
    basicAuthUser: t.string({ required: false, description: INPUT.basicAuthUser }),
    withCredentials: t.boolean({ required: false, description: INPUT.withCredentials }),
    isDefault: t.boolean({ required: false, description: 'The org\'s first data source is the default whatever this says.' }),
    jsonData: t.field({ type: 'JSONObject', required: false, description: INPUT.jsonData }),
    secureJsonData: t.field({ type: 'JSONObject', required: false, description: secretsDescription }),
    uid: t.string({ required: false, description: 'Up to 40 of `[a-zA-Z0-9-_]`; generated when empty.' }),
    password: t.string({ required: false, description: INPUT.password, deprecationReason: 'Use `secureJsonData.password`.' }),
    basicAuthPassword: t.string({ required: false, description: INPUT.basicAuthPassword, deprecationReason: 'Use `secureJsonData.basicAuthPassword`.' }),
  }),
});

export const UpdateDataSourceInput = builder.inputType('UpdateDataSourceInput', {
  description: 'The whole data source: omitted flags become false and `user`, `database` and `jsonData` are cleared (`jsonData` to `{}`); an empty `url`, `basicAuthUser` or `uid` keeps the stored value.',
  fields: (t) => ({
    name: t.string({ required: true, description: INPUT.name }),
    type: t.string({ required: true, description: INPUT.type }),
    access: t.string({ required: true, description: INPUT.access }),
    url: t.string({ required: false, description: DataSourceFields.url }),
    database: t.string({ required: false, description: INPUT.database }),
    user: t.string({ required: false, description: INPUT.user }),
    basicAuth: t.boolean({ required: false, description: INPUT.basicAuth }),
    basicAuthUser: t.string({ required: false, description: INPUT.basicAuthUser }),
    withCredentials: t.boolean({ required: false, description: INPUT.withCredentials }),
    isDefault: t.boolean({ required: false, description: 'Whether it becomes the org\'s default (another default stops being one).' }),
    jsonData: t.field({ type: 'JSONObject', required: false, description: INPUT.jsonData }),
    secureJsonData: t.field({ type: 'JSONObject', required: false, description: secretsDescription }),
    uid: t.string({ required: false, description: 'A new uid, up to 40 of `[a-zA-Z0-9-_]`; empty keeps it.' }),
    version: t.int({ required: false, description: 'The version read; a stale one is refused. 0 or absent skips the check.' }),
    password: t.string({ required: false, description: INPUT.password, deprecationReason: 'Use `secureJsonData.password`.' }),
    basicAuthPassword: t.string({ required: false, description: INPUT.basicAuthPassword, deprecationReason: 'Use `secureJsonData.basicAuthPassword`.' }),
  }),
});

/**
 * Who may call each root field; REST rows running these fields declare the same rules. Each data
 * source's own permissions are then applied by the service, in its SQL (`getFor`, `list`).
 */
const DATA_SOURCE_ACCESS = {
  read: orgMember('datasources:read'),
  readId: orgRole('Viewer', 'datasources:id:read'),
  create: orgRole('Admin', 'datasources:create'),
  // Every member passes the gate; whether it may change this data source is its permission (Edit).
  write: orgMember('datasources:write'),
  delete: orgMember('datasources:delete'),
};
const { read, readId, create, write, delete: remove } = DATA_SOURCE_ACCESS;

/** How the rules read in the root fields' descriptions. */
const RULE = {
  read: 'Org members of any role (`None` included) (datasources:read); the data source\'s permissions then require Query.',
  write: 'Org members of any role (`None` included) pass the gate (datasources:write); the data source\'s permissions then require Edit (Admins and Editors by default).',
  delete: 'Org members of any role (`None` included) pass the gate (datasources:delete); the data source\'s permissions then require Edit (Admins and Editors by default).',
};
const byId = 'The data source\'s id.';
const byUid = 'The data source\'s uid.';
const byName = 'The data source\'s name.';

builder.queryFields((t) => ({
  dataSources: t.field({
    deprecationReason: 'Use `viewer.currentOrganization.dataSources`, a connection.',
    type: [DataSourceType],
    description: `The caller's org's data sources, ordered by name case-insensitively, as \`GET /api/datasources\`. Org members of any role (\`None\` included) (datasources:read); those whose permissions grant the caller Query.`,
    extensions: { access: read },
    resolve: (_root, _args, ctx) => ctx.services.dataSources.list(ctx.em, ctx.caller),
  }),
  dataSource: t.field({
    deprecationReason: 'Use `node(id:)` with a `DataSourceNode` id.',
    type: DataSourceType,
    args: { id: t.arg.int({ required: true, description: byId }) },
    description: `A data source of the caller's org by id, as \`GET /api/datasources/:id\`. ${RULE.read}`,
    extensions: { access: read },
    resolve: (_root, { id }, ctx) => ctx.services.dataSources.getFor(ctx.em, ctx.caller, { id }, 'read'),
  }),
  dataSourceByUid: t.field({
    deprecationReason: 'Use `viewer.currentOrganization.dataSource(uid:)`.',
    type: DataSourceType,
    args: { uid: t.arg.string({ required: true, description: byUid }) },
    description: `A data source of the caller's org by uid, as \`GET /api/datasources/uid/:uid\`. ${RULE.read}`,
    extensions: { access: read },
    resolve: (_root, { uid }, ctx) => ctx.services.dataSources.getFor(ctx.em, ctx.caller, { uid }, 'read'),
  }),
  dataSourceByName: t.field({
    deprecationReason: 'Use `viewer.currentOrganization.dataSource(name:)`.',
    type: DataSourceType,
    args: { name: t.arg.string({ required: true, description: byName }) },
    description: `A data source of the caller's org by name, as \`GET /api/datasources/name/:name\`. ${RULE.read}`,
    extensions: { access: read },
    resolve: (_root, { name }, ctx) => ctx.services.dataSources.getFor(ctx.em, ctx.caller, { name }, 'read'),
  }),
  dataSourceIdByName: t.field({
    deprecationReason: 'Use `viewer.currentOrganization.dataSource(name:) { databaseId }`.',
    type: DataSourceIdentity,
    args: { name: t.arg.string({ required: true, description: byName }) },
    description: `The id of a data source of the caller's org by name, as \`GET /api/datasources/id/:name\`. Org Viewers and up (datasources:id:read); the data source's permissions then require Query.`,
    extensions: { access: readId },
    resolve: async (_root, { name }, ctx) => ({ id: (await ctx.services.dataSources.getFor(ctx.em, ctx.caller, { name }, 'read')).id }),
  }),
}));

const updated = 'Use `dataSourceUpdate` with a `DataSourceNode` id: its payload carries the node and `userErrors`.';
const deleted = 'Use `dataSourceDelete` with a `DataSourceNode` id: its payload carries the deleted id and `userErrors`.';

builder.mutationFields((t) => ({
  createDataSource: t.field({
    deprecationReason: 'Use `dataSourceCreate`: its payload carries the node and `userErrors`.',
    type: DataSourceChange,
    args: { input: t.arg({ type: CreateDataSourceInput, required: true, description: 'The data source.' }) },
    description: 'Creates a data source in the caller\'s org, as `POST /api/datasources`. Org Admins (datasources:create).',
    extensions: { access: create },
    resolve: async (_root, { input }, ctx) => ({ row: await ctx.services.dataSources.create(ctx.em, ctx.orgId, input), message: MESSAGES.dataSource.added }),
  }),
  updateDataSource: t.field({
    deprecationReason: updated,
    type: DataSourceChange,
    args: { id: t.arg.int({ required: true, description: byId }), input: t.arg({ type: UpdateDataSourceInput, required: true, description: 'The whole data source.' }) },
    description: `Replaces a data source of the caller's org, as \`PUT /api/datasources/:id\`. ${RULE.write}`,
    extensions: { access: write },
    resolve: (_root, { id, input }, ctx) => updateBy(ctx, { id }, input),
  }),
  updateDataSourceByUid: t.field({
    deprecationReason: updated,
    type: DataSourceChange,
    args: { uid: t.arg.string({ required: true, description: byUid }), input: t.arg({ type: UpdateDataSourceInput, required: true, description: 'The whole data source.' }) },
    description: `Replaces a data source of the caller's org, as \`PUT /api/datasources/uid/:uid\`. ${RULE.write}`,
    extensions: { access: write },
    resolve: (_root, { uid, input }, ctx) => updateBy(ctx, { uid }, input),
  }),
  deleteDataSource: t.field({
    deprecationReason: deleted,
    type: DataSourceDeletion,
    args: { id: t.arg.int({ required: true, description: byId }) },
    description: `Deletes a data source of the caller's org, as \`DELETE /api/datasources/:id\`. ${RULE.delete}`,
    extensions: { access: remove },
    resolve: (_root, { id }, ctx) => deleteBy(ctx, { id }),
  }),
  deleteDataSourceByUid: t.field({
    deprecationReason: deleted,
    type: DataSourceDeletion,
    args: { uid: t.arg.string({ required: true, description: byUid }) },
    description: `Deletes a data source of the caller's org, as \`DELETE /api/datasources/uid/:uid\`. ${RULE.delete}`,
    extensions: { access: remove },
    resolve: (_root, { uid }, ctx) => deleteBy(ctx, { uid }),
  }),
  deleteDataSourceByName: t.field({
    deprecationReason: deleted,
    type: DataSourceDeletion,
    args: { name: t.arg.string({ required: true, description: byName }) },
    description: `Deletes a data source of the caller's org, as \`DELETE /api/datasources/name/:name\`. ${RULE.delete}`,
    extensions: { access: remove },
    resolve: (_root, { name }, ctx) => deleteBy(ctx, { name }),
  }),
}));

async function updateBy(ctx: RequestContext, ref: { id: number } | { uid: string }, input: DataSourceInput) {
  return { row: await ctx.services.dataSources.update(ctx.em, ctx.caller, ref, input), message: MESSAGES.dataSource.updated };
}

async function deleteBy(ctx: RequestContext, ref: DataSourceRef) {
  return { id: await ctx.services.dataSources.delete(ctx.em, ctx.caller, ref), message: MESSAGES.dataSource.deleted };
}
