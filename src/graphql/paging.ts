import { defaultFieldResolver, isObjectType, type GraphQLNamedType, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { asciiFromBase64url } from './node-ids.ts';

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
  /** The page's objects in order: what a connection's `nodes` answers. */
  nodes: T[];
  edges: Array<Edge<T>>;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number;
}

export function encodeCursor(list: string, offset: number): string {
  return Buffer.from(`${list}:${offset}`, 'utf8').toString('base64url');
}

export function decodeCursor(list: string, cursor: string): number {
  // A cursor holds a list's name and a number: ASCII, as a global id's text is.
  const text = asciiFromBase64url(cursor);
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

/**
 * An item with its place in the list. The cursor is encoded when a client asks for it: a page of
 * a thousand rows read through `nodes` never pays for a thousand cursors.
 */
export class Edge<T> {
  readonly node: T;
  readonly #list: string;
  readonly #offset: number;

  constructor(list: string, offset: number, node: T) {
    this.#list = list;
    this.#offset = offset;
    this.node = node;
  }

  get cursor(): string {
    return encodeCursor(this.#list, this.#offset);
  }
}

/** A page whose edges are made when a client asks for them (through `edges`, not `nodes`). */
class ListPage<T> implements Page<T> {
  readonly nodes: T[];
  readonly pageInfo: Page<T>['pageInfo'];
  readonly totalCount: number;
  readonly #list: string;
  readonly #start: number;
  #edges: Array<Edge<T>> | null = null;

  constructor(list: string, items: readonly T[], start: number, end: number) {
    this.#list = list;
    this.#start = start;
    this.nodes = items.slice(start, end);
    this.totalCount = items.length;
    const some = end > start;
    this.pageInfo = {
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: some ? encodeCursor(list, start) : null,
      endCursor: some ? encodeCursor(list, end - 1) : null,
    };
  }

  get edges(): Array<Edge<T>> {
    return (this.#edges ??= this.nodes.map((node, i) => new Edge(this.#list, this.#start + i, node)));
  }
}

/**
 * The page `args` selects from `items` (the whole list, in order) of the list named `list`. For a
 * REST row (`whole`), no size is refused and a list without one is answered whole: REST's answer
 * is the original's whole list, or the page its own paging asked for.
 */
export function pageOf<T>(list: string, items: readonly T[], args: PageArgs, whole = false): Page<T> {
  const first = whole ? (args.first ?? null) : size('first', args.first);
  const last = whole ? (args.last ?? null) : size('last', args.last);
  // Positions are clamped to the list as it is now: a cursor past its end is a valid, empty place.
  let start = args.after != null ? Math.min(decodeCursor(list, args.after) + 1, items.length) : 0;
  let end = args.before != null ? Math.min(decodeCursor(list, args.before), items.length) : items.length;
  if (end < start) end = start;
  if (first === null && last === null && !whole) end = Math.min(end, start + DEFAULT_PAGE_SIZE);
  if (first !== null) end = Math.min(end, start + first);
  if (last !== null) start = Math.max(start, end - last);
  return new ListPage(list, items, start, end);
}

/** A connection of this schema: an object type with `edges` and `pageInfo`, as the relay plugin makes them. */
export function isConnectionType(type: GraphQLNamedType): type is GraphQLObjectType {
  if (!isObjectType(type)) return false;
  const fields = type.getFields();
  return 'edges' in fields && 'pageInfo' in fields;
}

/**
 * Answers every connection's `nodes` from its page's own list. The relay plugin's resolver walks
 * `edges` (a closure per edge), which would also make every edge of a page read only through `nodes`.
 * Called once, when the schema is built.
 */
export function answerNodesFromPages(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isConnectionType(type)) continue;
    const { nodes } = type.getFields();
    if (!nodes) continue;
    const fromEdges = nodes.resolve ?? defaultFieldResolver;
    nodes.resolve = (page, args, ctx, info) => (Array.isArray((page as Partial<Page<unknown>>).nodes) ? (page as Page<unknown>).nodes : fromEdges(page, args, ctx, info));
  }
}
