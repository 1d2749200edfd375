import { orgRole } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { DomainError, notFound } from '../../errors/domain.ts';
import { MESSAGES } from '../../errors/messages.ts';
import type { DataSourceRecord } from '../../services/data-sources.ts';
import { builder } from '../builder.ts';
import { decodeNodeId } from '../node-ids.ts';
import { CreateDataSourceInput, UpdateDataSourceInput } from './data-source.ts';
import { DataSourceNode } from './graph.ts';

/**
 * The graph's mutations, as GitHub's and Shopify's: an input object, and a payload carrying the
 * changed node (so a normalized client cache updates itself from the answer) and `userErrors`
 * where REST answers 4xx. Failures of the request itself (authentication, access, a malformed id,
 * the server) stay GraphQL errors.
 */
interface UserError { message: string; code: string }

const UserErrorType = builder.objectRef<UserError>('UserError').implement({
  description: 'Why a mutation did not change anything, where REST answers 4xx.',
  fields: (t) => ({
    message: t.exposeString('message', { description: 'The message REST answers, word for word.' }),
    code: t.exposeString('code', { description: 'As `extensions.code` of an error: `BAD_REQUEST`, `NOT_FOUND`, `CONFLICT`, `PRECONDITION_FAILED`, ...' }),
  }),
});

const DataSourcePayload = builder.objectRef<{ dataSource: DataSourceRecord | null; userErrors: UserError[] }>('DataSourcePayload').implement({
  description: 'The data source created or updated, or why not.',
  fields: (t) => ({
    dataSource: t.field({ type: DataSourceNode, nullable: true, description: 'As stored now; null when `userErrors` says why not.', resolve: (p) => p.dataSource }),
    userErrors: t.field({ type: [UserErrorType], description: 'Empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const DataSourceDeletePayload = builder.objectRef<{ deletedDataSourceId: string | null; userErrors: UserError[] }>('DataSourceDeletePayload').implement({
  description: 'The id of the data source deleted, or why not.',
  fields: (t) => ({
    deletedDataSourceId: t.id({ nullable: true, description: 'Its global id, for clients to evict it from their cache; null when `userErrors` says why not.', resolve: (p) => p.deletedDataSourceId }),
    userErrors: t.field({ type: [UserErrorType], description: 'Empty on success.', resolve: (p) => p.userErrors }),
  }),
});

/** A client's mistake (4xx) as a user error; anything else stays an error of the request. */
async function asUserErrors<T>(change: () => Promise<T>): Promise<{ value: T | null; userErrors: UserError[] }> {
  try {
    return { value: await change(), userErrors: [] };
  } catch (error) {
    if (error instanceof DomainError && error.status >= 400 && error.status < 500 && error.code !== 'UNAUTHENTICATED' && error.code !== 'FORBIDDEN') {
      return { value: null, userErrors: [{ message: error.message, code: error.code }] };
    }
    throw error;
  }
}

/** The numeric id of a data source's global id; another type's id names no data source. */
function dataSourceId(globalId: string): number {
  const { typename, id } = decodeNodeId(globalId);
  // Beyond int4 no row has it: not found rather than a database error.
  if (typename !== 'DataSourceNode' || Number(id) > 2_147_483_647) throw notFound(MESSAGES.dataSource.notFound);
  return Number(id);
}

async function payload(ctx: RequestContext, change: () => Promise<{ id: number }>) {
  const { value, userErrors } = await asUserErrors(change);
  // Read back as queries read it (a plain record), in the caller's org.
  return { dataSource: value ? await ctx.services.dataSources.find(ctx.em, ctx.orgId, { id: value.id }) : null, userErrors };
}

const idArg = 'The data source\'s global id (`DataSourceNode.id`), in the org the request acts in.';

builder.mutationFields((t) => ({
  dataSourceCreate: t.field({
    type: DataSourcePayload,
    args: { input: t.arg({ type: CreateDataSourceInput, required: true }) },
    description: 'Creates a data source in the org the request acts in, as `POST /api/datasources`. Org Admins (datasources:create).',
    extensions: { access: orgRole('Admin', 'datasources:create') },
    resolve: (_root, { input }, ctx) => payload(ctx, () => ctx.services.dataSources.create(ctx.em, ctx.orgId, input)),
  }),
  dataSourceUpdate: t.field({
    type: DataSourcePayload,
    args: { id: t.arg.id({ required: true, description: idArg }), input: t.arg({ type: UpdateDataSourceInput, required: true }) },
    description: 'Replaces a data source, as `PUT /api/datasources/:id`. Org Admins (datasources:write).',
    extensions: { access: orgRole('Admin', 'datasources:write') },
    resolve: (_root, { id, input }, ctx) => payload(ctx, () => ctx.services.dataSources.update(ctx.em, ctx.caller, { id: dataSourceId(String(id)) }, input)),
  }),
  dataSourceDelete: t.field({
    type: DataSourceDeletePayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Deletes a data source, as `DELETE /api/datasources/:id`. Org Admins (datasources:delete).',
    extensions: { access: orgRole('Admin', 'datasources:delete') },
    resolve: async (_root, { id }, ctx) => {
      const { value, userErrors } = await asUserErrors(() => ctx.services.dataSources.delete(ctx.em, ctx.caller, { id: dataSourceId(String(id)) }));
      return { deletedDataSourceId: value === null ? null : String(id), userErrors };
    },
  }),
}));
