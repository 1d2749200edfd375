import type { ObjectRef } from '@pothos/core';
import { orgMember, orgRole } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { CallerRefusal } from '../../errors/domain.ts';
import { classify } from '../../errors/render.ts';
import { builder, type SchemaTypes } from '../builder.ts';
import { forgetReads } from '../loaders.ts';
import { decodeNodeId, keyNumbers, type NodeTypeName } from '../node-ids.ts';
import { loadDataSources, type DataSourceNodeData } from '../node-loaders.ts';
import { checkTlsSecrets } from '../../services/data-source-tls.ts';
import { CreateDataSourceInput, UpdateDataSourceInput } from './data-source.ts';
import { DataSourceNode } from './graph.ts';

/**
 * The graph's mutations, as GitHub's and Shopify's: the objects acted on by global id (what a REST
 * path names), what to write as an `input` object (what a REST body carries), and a payload
 * carrying the changed node (so a normalized client cache updates itself from the answer), or the
 * global id of the one deleted, and `userErrors` where REST answers 4xx. Failures of the request
 * itself (authentication, access, a malformed id, the server) stay GraphQL errors.
 */
export interface UserError { message: string; code: string }

export const UserErrorType = builder.objectRef<UserError>('UserError').implement({
  description: 'Why a mutation did not change anything, where REST answers 4xx.',
  fields: (t) => ({
    message: t.exposeString('message', { description: 'The message REST answers, word for word.' }),
    code: t.exposeString('code', { description: 'As `extensions.code` of an error: `BAD_REQUEST`, `NOT_FOUND`, `CONFLICT`, `PRECONDITION_FAILED`, ...' }),
  }),
});

/** What a mutation resolver answers: its payload's own fields and the user errors. */
export type Payload<F> = F & { userErrors: UserError[] };

/**
 * Runs a change. A client's mistake (a 4xx that does not refuse the caller itself) comes back as a
 * user error; anything else stays an error of the request. Whatever the outcome, the request's
 * reads start afresh, so the payload shows the change.
 */
export async function attempt<T>(ctx: RequestContext, change: () => Promise<T>): Promise<{ done: true; value: T } | { done: false; userErrors: UserError[] }> {
  try {
    return { done: true, value: await change() };
  } catch (error) {
    const known = classify(error);
    if (known && known.status >= 400 && known.status < 500 && !(known instanceof CallerRefusal)) {
      // A REST row answers the error itself, with its whole wire body.
      if (ctx.rest) ctx.userError ??= known;
      return { done: false, userErrors: [{ message: known.message, code: known.code }] };
    }
    throw error;
  } finally {
    forgetReads(ctx);
  }
}

/** `attempt`, then the payload's fields read from the change's value, or all null with the user errors. */
export async function mutate<T, F extends Record<string, unknown>>(
  ctx: RequestContext, change: () => Promise<T>, read: (value: T) => Promise<F> | F, failed: { [K in keyof F]: null },
): Promise<Payload<F | { [K in keyof F]: null }>> {
  const outcome = await attempt(ctx, change);
  return outcome.done ? { ...(await read(outcome.value)), userErrors: [] } : { ...failed, userErrors: outcome.userErrors };
}

/** The database id in a global id of `typename`, or null for another type's id or one beyond int4 (it names no row). A malformed id is the request's error. */
export function databaseId(globalId: string | number, typename: NodeTypeName): number | null {
  const { typename: found, id } = decodeNodeId(String(globalId));
  const [n] = keyNumbers(id);
  return found === typename && n !== undefined && n <= 2_147_483_647 && !id.includes(':') ? n : null;
}

/** As `databaseId`, 0 (which no row has) for an id naming nothing: the service then answers its own 404. */
export const rowId = (globalId: string | number, typename: NodeTypeName): number => databaseId(globalId, typename) ?? 0;

const userErrorsField = { description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.' };

/** A payload carrying one changed node (`key`), null when `userErrors` says why not. */
export function nodePayload<K extends string, T extends object>(name: string, key: K, type: ObjectRef<SchemaTypes, T>, what: string) {
  return builder.objectRef<Payload<Record<K, T | null>>>(name).implement({
    description: `The ${what} as stored after the change, or why it did not change.`,
    fields: (t) => ({
      // Pothos cannot check a resolver's result against a type parameter; `p[key]` is a `T | null` by the payload's type.
      [key]: t.field({ type, nullable: true, description: 'As stored now, as the graph reads it; null when `userErrors` says why not.', resolve: (p) => p[key] as never }),
      userErrors: t.field({ type: [UserErrorType], ...userErrorsField, resolve: (p) => p.userErrors }),
    }),
  });
}

/** A payload carrying the global id of the node deleted (`key`), null when `userErrors` says why not. */
export function deletePayload<K extends string>(name: string, key: K, what: string) {
  return builder.objectRef<Payload<Record<K, string | null>>>(name).implement({
    description: `The global id of the ${what} deleted, or why it was not.`,
    fields: (t) => ({
      [key]: t.id({ nullable: true, description: 'Its global id, for clients to evict it from their cache; null when `userErrors` says why not.', resolve: (p) => p[key] }),
      userErrors: t.field({ type: [UserErrorType], ...userErrorsField, resolve: (p) => p.userErrors }),
    }),
  });
}

/** Runs a deletion: the payload carries the deleted node's global id, as the client sent it (for it to evict). */
export function remove<K extends string>(ctx: RequestContext, key: K, globalId: string | number, change: () => Promise<unknown>) {
  return mutate(ctx, change, () => ({ [key]: String(globalId) }) as Record<K, string>, { [key]: null } as Record<K, null>);
}

/** Something stored as sent that will not work where it is used (a TLS secret that is no PEM). */
interface DataSourceWarning { field: string; message: string }

const DataSourceWarningType = builder.objectRef<DataSourceWarning>('DataSourceWarning').implement({
  description: 'A value stored as sent, as the original stores it, that will fail where it is used: the calls that use it will answer an error naming the field.',
  fields: (t) => ({
    field: t.exposeString('field', { description: 'The input field, e.g. `secureJsonData.tlsCACert`.' }),
    message: t.exposeString('message', { description: 'What is wrong with it; never quotes the value.' }),
  }),
});

type DataSourceResult = Payload<{ dataSource: DataSourceNodeData | null; warnings: DataSourceWarning[] }>;

const DataSourcePayload = builder.objectRef<DataSourceResult>('DataSourcePayload').implement({
  description: 'The data source as stored after the change, or why it did not change.',
  fields: (t) => ({
    dataSource: t.field({ type: DataSourceNode, nullable: true, description: 'As stored now, as the graph reads it; null when `userErrors` says why not.', resolve: (p) => p.dataSource }),
    userErrors: t.field({ type: [UserErrorType], ...userErrorsField, resolve: (p) => p.userErrors }),
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

/** The data source as the graph reads it, with the data source permissions in its org. */
const dataSourceChange = async (ctx: RequestContext, input: { secureJsonData?: unknown }, change: () => Promise<{ id: number }>): Promise<DataSourceResult> => {
  const result = await mutate(ctx, change, async (ds) => ({ dataSource: (await loadDataSources(ctx, [String(ds.id)]))[0] ?? null }), { dataSource: null });
  return { ...result, warnings: result.dataSource ? tlsSecretWarnings(input.secureJsonData) : [] };
};

const idArg = 'The data source\'s global id (`DataSourceNode.id`), in the org the request acts in.';

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
      id: t.arg.id({ required: true, description: idArg }),
      input: t.arg({ type: UpdateDataSourceInput, required: true, description: 'The whole data source, as `PUT /api/datasources/:id` takes it.' }),
    },
    description: 'Replaces a data source, as `PUT /api/datasources/:id`. Org members of any role (`None` included) pass the gate (datasources:write); the data source\'s permissions then require Edit (Admins and Editors by default).',
    extensions: { access: orgMember('datasources:write') },
    resolve: (_root, { id, input }, ctx) => {
      const ref = { id: rowId(id, 'DataSourceNode') };
      return dataSourceChange(ctx, input, () => ctx.services.dataSources.update(ctx.em, ctx.caller, ref, input));
    },
  }),
  dataSourceDelete: t.field({
    type: DataSourceDeletePayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Deletes a data source, as `DELETE /api/datasources/:id`. Org members of any role (`None` included) pass the gate (datasources:delete); the data source\'s permissions then require Edit (Admins and Editors by default).',
    extensions: { access: orgMember('datasources:delete') },
    resolve: (_root, { id }, ctx) => {
      const ref = { id: rowId(id, 'DataSourceNode') };
      return remove(ctx, 'deletedDataSourceId', id, () => ctx.services.dataSources.delete(ctx.em, ctx.caller, ref));
    },
  }),
}));
