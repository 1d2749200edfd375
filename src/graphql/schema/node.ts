import { resolveNodes } from '@pothos/plugin-relay';
import { signedIn } from '../../auth/access.ts';
import { builder } from '../builder.ts';
import { decodeNodeId } from '../node-ids.ts';
import { loadDataSourceNode } from './data-source/node.ts';

/**
 * `node(id)`, the plugin's field without the plugin's argument mapping: the id is decoded here,
 * once, and a data source (the node clients refetch most) goes straight to its loader, without the
 * per-request node cache that only pays off when a request names the same id twice. Every other
 * type is resolved as the plugin resolves it, through its `loadMany`. Each type's loader applies
 * the caller's access and org scoping: what the caller may not see is null.
 */
builder.queryField('node', (t) => t.field({
  type: builder.nodeInterfaceRef(),
  nullable: true,
  description: 'Any object by its global id; null when it does not exist or the caller may not see it (another org\'s object included). Any signed-in caller; each type applies its own rule.',
  extensions: { access: signedIn },
  args: { id: t.arg.id({ required: true, description: 'A global id, as an object\'s `id` gives it.' }) },
  resolve: (_root, args, ctx, info) => {
    const id = decodeNodeId(String(args.id));
    if (id.typename === 'DataSource') return loadDataSourceNode(ctx, id.id);
    return resolveNodes(builder, ctx, info, [id]).then(([node]) => node ?? null);
  },
}));

