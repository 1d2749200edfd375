import { orgMember } from '../../../auth/access.ts';
import type { RequestContext } from '../../../context.ts';
import type { DataSourceRecord, DataSourceRef } from '../../../services/data-sources.ts';
import { typeName } from '../../../services/data-source-types.ts';
import { orgActors } from '../../access.ts';
import { builder } from '../../builder.ts';
import { perRequestGroups } from '../../loaders.ts';
import { encodeNodeId, heldNodeId, isRowId, keyNumbers } from '../../node-ids.ts';
import { orgById } from '../organization/loaders.ts';
import { pageOf } from '../../paging.ts';
import { connection } from '../connections.ts';
import { OrganizationType } from '../organization/node.ts';

/**
 * Data sources: the `DataSource` node, how the graph reads it (a level at a time, with the
 * caller's permissions in the services' SQL) and the org's relationships to it.
 */

/**
 * Who sees a data source: the members of its org, any role, each as the data source's permissions
 * let it read it (datasources:read); those permissions are applied in the services' SQL, so a data
 * source the caller may not read is never loaded.
 */
export const DATA_SOURCE_READ = orgMember('datasources:read');

const NO_JSON_DATA: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * A data source as the graph holds it: every field a plain property or a getter of the class,
 * which a compiled operation reads as it reads `name`, rather than through a resolver (with its
 * closures, resolve info and response path per object). The global id is made when asked for: a
 * page of a thousand through `nodes { name }`, or a REST row over the graph, never makes one.
 */
export class DataSourceNode {
  readonly databaseId: number;
  readonly orgId: number;
  readonly uid: string;
  readonly name: string;
  readonly type: string;
  readonly access: string;
  readonly url: string;
  readonly user: string;
  readonly database: string;
  readonly basicAuth: boolean;
  readonly basicAuthUser: string;
  readonly withCredentials: boolean;
  readonly isDefault: boolean;
  readonly jsonData: Record<string, unknown>;
  /** Sealed; never a field: only the names of the secrets are shown (`secureJsonFields`). */
  readonly secureJsonData: Record<string, string> | null | undefined;
  readonly version: number;
  readonly readOnly: boolean;

  constructor(ds: DataSourceRecord) {
    this.databaseId = ds.id;
    this.orgId = ds.orgId;
    this.uid = ds.uid;
    this.name = ds.name;
    this.type = ds.type;
    this.access = ds.access;
    this.url = ds.url;
    this.user = ds.user;
    this.database = ds.database;
    this.basicAuth = ds.basicAuth;
    this.basicAuthUser = ds.basicAuthUser;
    this.withCredentials = ds.withCredentials;
    this.isDefault = ds.isDefault;
    this.jsonData = (ds.jsonData as Record<string, unknown> | null | undefined) ?? NO_JSON_DATA;
    this.secureJsonData = ds.secureJsonData;
    this.version = ds.version;
    this.readOnly = ds.readOnly;
  }

  /** How the Node interface tells the type (what Pothos's brand, a property set on each object, would tell more slowly). */
  get __typename(): 'DataSource' {
    return 'DataSource';
  }

  get id(): string {
    return encodeNodeId('DataSource', this.databaseId);
  }

  get typeName(): string {
    return typeName(this.type);
  }

  get secureJsonFields(): Record<string, boolean> {
    const fields: Record<string, boolean> = {};
    for (const key in this.secureJsonData) fields[key] = true;
    return fields;
  }
}

/** A database id as the tables hold it (int4); anything else names nothing. */

/** Data sources by global id key, in the order asked: null where none is, or the caller may not read it. */
export async function loadDataSources(ctx: RequestContext, keys: readonly string[]): Promise<Array<DataSourceNode | null>> {
  const ids = keys.map((key) => keyNumbers(key)).map((n) => (n.length === 1 && isRowId(n[0]!) ? n[0]! : 0));
  // The statement reads only in the orgs the caller belongs to and applies each data source's
  // permissions: every row it answers is one the caller may see.
  const wanted = [...new Set(ids.filter((id) => id !== 0))];
  const rows = await ctx.services.dataSources.findByIds(ctx.em, wanted, await orgActors(ctx));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = byId.get(id);
    return row ? new DataSourceNode(row) : null;
  });
}

/** `node(id)` on a data source: the one key through the same statement as `nodes(ids:)`. */
export async function loadDataSourceNode(ctx: RequestContext, key: string): Promise<DataSourceNode | null> {
  const [ds] = await loadDataSources(ctx, [key]);
  return ds ?? null;
}

/** One of an org's data sources by id, uid or name, if the caller may read it: `getFor`'s one statement. */
export async function findDataSource(ctx: RequestContext, orgId: number, ref: DataSourceRef): Promise<DataSourceNode | null> {
  const [caller] = await orgActors(ctx, [orgId]);
  if (!caller) return null;
  const row = await ctx.services.dataSources.findFor(ctx.em, caller, ref, 'read');
  return row ? new DataSourceNode(row) : null;
}

/** Each org's data sources the caller may read, by name (case-insensitively), one statement per level of orgs. */
export const dataSourcesOfOrg = perRequestGroups(async (orgIds: readonly number[], ctx) => {
  const byOrg = new Map<number, DataSourceNode[]>();
  for (const [orgId, list] of await ctx.services.dataSources.listForOrgs(ctx.em, await orgActors(ctx, orgIds))) {
    const nodes = new Array<DataSourceNode>(list.length);
    for (let i = 0; i < list.length; i++) nodes[i] = new DataSourceNode(list[i]!);
    byOrg.set(orgId, nodes);
  }
  // Orgs whose data sources the caller may not read at all have none.
  for (const orgId of orgIds) if (!byOrg.has(orgId)) byOrg.set(orgId, []);
  return byOrg;
});

export const DataSourceType = builder.node(builder.objectRef<DataSourceNode>('DataSource'), {
  description: 'A named connection to an external metric or log store, owned by one org. Seen by members of its org whom its permissions let read it (datasources:read).',
  extensions: { access: DATA_SOURCE_READ, orgOf: (ds: DataSourceNode) => ds.orgId },
  id: heldNodeId<DataSourceNode>(),
  loadMany: (keys, ctx) => loadDataSources(ctx, keys),
  fields: (t) => ({
    databaseId: t.exposeInt('databaseId', { description: 'The numeric id REST paths take (`/api/datasources/:id`).' }),
    uid: t.exposeString('uid', { description: 'Stable identifier, unique in the org.' }),
    orgId: t.exposeInt('orgId', { description: 'The owning org\'s numeric id (`organization` is the org).' }),
    name: t.exposeString('name', { description: 'Unique in the org; used in by-name paths.' }),
    type: t.exposeString('type', { description: 'Kind of store, e.g. `graphite`, `elasticsearch`, `cloudwatch`, `prometheus`.' }),
    typeName: t.exposeString('typeName', { description: 'Display name of the kind.' }),
    access: t.exposeString('access', { description: '`proxy` (calls go through the server) or `direct`.' }),
    url: t.exposeString('url', { description: 'Address of the store.' }),
    user: t.exposeString('user', { description: 'User name sent to the store, for kinds that take one.' }),
    database: t.exposeString('database', { description: 'Database name, for kinds that take one.' }),
    basicAuth: t.exposeBoolean('basicAuth', { description: 'Whether Basic authentication is sent to the store.' }),
    basicAuthUser: t.exposeString('basicAuthUser', { description: 'User name of Basic authentication.' }),
    withCredentials: t.exposeBoolean('withCredentials', { description: 'Whether browsers send cookies with direct calls.' }),
    isDefault: t.exposeBoolean('isDefault', { description: 'At most one data source per org is the default.' }),
    jsonData: t.expose('jsonData', { type: 'JSONObject', description: 'Kind-specific options; `{}` when none.' }),
    secureJsonFields: t.expose('secureJsonFields', { type: 'JSONObject', description: 'Names of stored secrets, each mapped to true. Secret values are write-only.' }),
    version: t.exposeInt('version', { description: 'Incremented on every update; send it back to detect concurrent edits.' }),
    readOnly: t.exposeBoolean('readOnly', { description: 'Provisioned from files; cannot be changed through the API.' }),
    organization: t.field({
      type: OrganizationType,
      nullable: true,
      description: 'The org that owns it; null for a member who may not read the org itself (`None`).',
      resolve: (ds, _args, ctx) => orgById(ctx).load(ds.orgId),
    }),
  }),
});

export const DataSourceConnection = connection('DataSourceConnection', DataSourceType, 'data sources');

const contains = (text: string, part: string) => text.toLowerCase().includes(part.toLowerCase());

builder.objectFields(OrganizationType, (t) => ({
  dataSources: t.connection({
    type: DataSourceType,
    nullable: true,
    description: 'Its data sources by name (case-insensitively): `GET /api/datasources` for the org the request acts in. Its members, any role (`None` included) (datasources:read), each seeing those its permissions let it read; null for anyone else.',
    extensions: { access: DATA_SOURCE_READ },
    args: {
      query: t.arg.string({ required: false, description: 'Only those whose name contains it, in any case.' }),
      type: t.arg.string({ required: false, description: 'Only those of this kind (`prometheus`, `loki`, ...).' }),
    },
    resolve: async (org, args, ctx) => {
      const all = await dataSourcesOfOrg(ctx).load(org.id);
      const list = args.query || args.type ? all.filter((ds) => (!args.query || contains(ds.name, args.query)) && (!args.type || ds.type === args.type)) : all;
      return pageOf('Organization.dataSources', list, args, ctx.rest);
    },
  }, DataSourceConnection),
  dataSource: t.field({
    type: DataSourceType,
    nullable: true,
    description: 'One of its data sources by numeric id, uid or name (those given must all match); null when none does, or the caller may not read it. Its members, any role (`None` included) (datasources:read), as its permissions let them read it.',
    extensions: { access: DATA_SOURCE_READ },
    args: {
      databaseId: t.arg.int({ required: false, description: 'The data source\'s numeric id (`/api/datasources/:id`).' }),
      uid: t.arg.string({ required: false, description: 'The data source\'s uid.' }),
      name: t.arg.string({ required: false, description: 'The data source\'s exact name.' }),
    },
    resolve: (org, { databaseId, uid, name }, ctx) => {
      const ref: Record<string, number | string> = {};
      if (databaseId != null) ref.id = databaseId;
      if (uid != null) ref.uid = uid;
      if (name != null) ref.name = name;
      // An id beyond int4 names no row; asking for nothing finds nothing.
      if (Object.keys(ref).length === 0 || (databaseId != null && !isRowId(databaseId))) return null;
      return findDataSource(ctx, org.id, ref as DataSourceRef);
    },
  }),
}));
