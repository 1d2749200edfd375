import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

/**
 * GraphQL Cursor Connections over a list already read in its stable order. A cursor is the
 * position in that list, tagged with the list's name and base64url-encoded: opaque to clients,
 * and a cursor of another list, or one tampered with, is refused (400) rather than read as a
 * position. Pure: the resolvers load, this slices.
 */
export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 100;

export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface Page<T> {
  edges: Array<{ cursor: string; node: T }>;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number;
}

export function encodeCursor(list: string, offset: number): string {
  return Buffer.from(`${list}:${offset}`, 'utf8').toString('base64url');
}

export function decodeCursor(list: string, cursor: string): number {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const prefix = `${list}:`;
  const offset = text.startsWith(prefix) && /^[0-9]{1,9}$/.test(text.slice(prefix.length)) ? Number(text.slice(prefix.length)) : -1;
  if (offset < 0) throw badRequest(MESSAGES.graph.invalidCursor(cursor.slice(0, 200)));
  return offset;
}

function size(name: 'first' | 'last', value: number | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  if (!Number.isInteger(value) || value < 0 || value > MAX_PAGE_SIZE) throw badRequest(MESSAGES.graph.pageSize(name, MAX_PAGE_SIZE));
  return value;
}

/** The page `args` selects from `items` (the whole list, in order) of the list named `list`. */
export function pageOf<T>(list: string, items: readonly T[], args: PageArgs): Page<T> {
  const first = size('first', args.first);
  const last = size('last', args.last);
  // Positions are clamped to the list as it is now: a cursor past its end is a valid, empty place.
  let start = args.after != null ? Math.min(decodeCursor(list, args.after) + 1, items.length) : 0;
  let end = args.before != null ? Math.min(decodeCursor(list, args.before), items.length) : items.length;
  if (end < start) end = start;
  if (first === null && last === null) end = Math.min(end, start + DEFAULT_PAGE_SIZE);
  if (first !== null) end = Math.min(end, start + first);
  if (last !== null) start = Math.max(start, end - last);
  const edges = items.slice(start, end).map((node, i) => ({ cursor: encodeCursor(list, start + i), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: items.length,
  };
}
