import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import { signedIn } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { decodeNodeId, encodeNodeId } from './node-ids.ts';

/** `nodes(ids:)` reads at most this many objects in one call. */
const MAX_NODE_IDS = 100;

/** Builder configuration only; types live one per file under schema/. */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
  };
}>({
  defaultFieldNullability: false,
  plugins: [RelayPlugin],
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    encodeGlobalID: (typename, id) => encodeNodeId(typename, id),
    decodeGlobalID: (globalID) => decodeNodeId(globalID),
    nodeTypeOptions: {
      description: 'An object with a global id (GraphQL Global Object Identification): refetch it with `node(id:)`, or normalize a client cache on `id`.',
    },
    nodeFieldOptions: { description: 'The object at the other end of this edge.', nullable: false },
    edgesFieldOptions: { description: 'One page of the list, each object with its cursor.', nullable: false },
    nodesOnConnection: { description: 'The objects of `edges`, without their cursors.' },
    pageInfoFieldOptions: { description: 'Where this page sits in the whole list.' },
    pageInfoTypeOptions: { description: 'Cursors and flags for paging forward (`first`/`after`) and backward (`last`/`before`).' },
    hasNextPageFieldOptions: { description: 'Whether more items follow this page.' },
    hasPreviousPageFieldOptions: { description: 'Whether items precede this page.' },
    startCursorFieldOptions: { description: 'The first edge\'s cursor; null on an empty page.' },
    endCursorFieldOptions: { description: 'The last edge\'s cursor, to pass as `after`; null on an empty page.' },
    cursorFieldOptions: { description: 'Opaque position of this item in this list, for `after`/`before` of the same list.' },
    firstArgOptions: { description: 'At most this many items from the start (or after `after`); 0 to 1000, default 100.' },
    lastArgOptions: { description: 'At most this many items from the end (or before `before`); 0 to 1000.' },
    afterArgOptions: { description: 'A cursor of this same list: items after it.' },
    beforeArgOptions: { description: 'A cursor of this same list: items before it.' },
    idFieldOptions: { description: 'Global id: opaque, unique across types; the numeric id is `databaseId`.' },
    // `node(id)` is defined below, not by the plugin.
    nodeQueryOptions: false,
    nodesQueryOptions: {
      description: 'Objects by global id, in order; null for each that does not exist or the caller may not see. At most 100 ids. Any signed-in caller.',
      extensions: { access: signedIn },
      args: { ids: { description: 'Global ids, as objects\' `id` give them; at most 100.' } },
      resolve: (_root, { ids }, _ctx, _info, resolveNodes) => {
        if (ids.length > MAX_NODE_IDS) throw badRequest(MESSAGES.graph.tooManyIds(MAX_NODE_IDS));
        return resolveNodes(ids);
      },
    },
  },
});

builder.queryType({ description: 'Read access to data sources and server administration.' });
builder.mutationType({ description: 'Changes to data sources, users, tokens and alerting.' });

export type SchemaTypes = typeof builder.$inferSchemaTypes;
/** A field builder for objects of shape `T`: field sets shared by a flat type and its node type take one. */
export type FieldsOf<T> = PothosSchemaTypes.ObjectFieldBuilder<SchemaTypes, T>;
