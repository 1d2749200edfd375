import { builder } from '../builder.ts';
import { pageOf, type PageArgs } from '../paging.ts';

/**
 * The connection types (GraphQL Cursor Connections), one per kind of node, shared by every list of
 * that kind: edges with cursors, `nodes`, `pageInfo`, and `totalCount`. Their pages are made by
 * `pageOf` (paging.ts), which reads `totalCount` and the nodes as plain properties.
 */
export const totalCount = { description: 'How many items the whole list holds (after its filters), on every page.' };

export const connection = <T extends object>(name: string, type: Parameters<typeof builder.connectionObject>[0]['type'], what: string) =>
  builder.connectionObject({
    type,
    name,
    description: `A page of ${what} (GraphQL Cursor Connections).`,
    fields: (t) => ({ totalCount: t.int({ ...totalCount, resolve: (c) => (c as unknown as { totalCount: number }).totalCount }) }),
  }, { name: `${name.replace(/Connection$/, '')}Edge`, description: `One of ${what} with its cursor.` }) as unknown as T;

export const contains = (text: string, part: string) => text.toLowerCase().includes(part.toLowerCase());

/** A relationship's list, or null when the caller may not see it; filtered, then paged (whole, for a REST row's answer). */
export async function pageIf<T>(allowed: Promise<boolean> | boolean, list: string, items: () => Promise<readonly T[]>, args: PageArgs, keep?: (item: T) => boolean, whole = false) {
  if (!(await allowed)) return null;
  const all = await items();
  return pageOf(list, keep ? all.filter(keep) : all, args, whole);
}
