import { isObjectType, type GraphQLSchema } from 'graphql';
import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

/**
 * Global ids (GraphQL Global Object Identification): `<Type>:<key>` in base64url, opaque to
 * clients. The key is the database id, or `<orgId>:<userId>` for a membership. Anything that does
 * not decode to a node type of this schema is the client's error (400), never a crash.
 */
export const NODE_TYPES = ['DataSource', 'Organization', 'User', 'OrganizationMember', 'ServiceAccount', 'ServiceAccountToken', 'Team'] as const;
export type NodeTypeName = (typeof NODE_TYPES)[number];

/**
 * The names the node types had when the schema held REST-shaped twins beside them: ids encoded
 * then (kept by clients, in caches or URLs) still name the same objects.
 */
const FORMER_NAMES: Readonly<Record<string, NodeTypeName>> = { DataSourceNode: 'DataSource', UserNode: 'User', TeamNode: 'Team', ServiceAccountNode: 'ServiceAccount', ServiceAccountTokenNode: 'ServiceAccountToken', OrganizationNode: 'Organization' };

/** A key: digits, or two for a membership. A negative number names no row, as a REST path's negative id names none. */
const KEY = /^-?[0-9]{1,15}(:-?[0-9]{1,15})?$/;

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** base64url of a string of ASCII characters (type names, digits, colons), unpadded as Buffer writes it. */
function asciiBase64url(text: string): string {
  let out = '';
  let i = 0;
  for (; i + 2 < text.length; i += 3) {
    const n = (text.charCodeAt(i) << 16) | (text.charCodeAt(i + 1) << 8) | text.charCodeAt(i + 2);
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]! + BASE64URL[n & 63]!;
  }
  const left = text.length - i;
  if (left === 1) {
    const n = text.charCodeAt(i) << 16;
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]!;
  } else if (left === 2) {
    const n = (text.charCodeAt(i) << 16) | (text.charCodeAt(i + 1) << 8);
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]!;
  }
  return out;
}

/** Per type: its `<Type>:` prefix split where base64's groups of three bytes end, the whole groups encoded. */
const prefixes = new Map<string, { encoded: string; rest: string } | null>();
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function prefixOf(typename: string): { encoded: string; rest: string } | null {
  const prefix = `${typename}:`;
  const whole = prefix.length - (prefix.length % 3);
  const split = /^[A-Za-z]+$/.test(typename) ? { encoded: asciiBase64url(prefix.slice(0, whole)), rest: prefix.slice(whole) } : null;
  prefixes.set(typename, split);
  return split;
}

/**
 * Ids are encoded once per object listed (a thousand per page of data sources), so without a
 * Buffer each: the prefix's whole groups are encoded once per type, the rest per id.
 */
export function encodeNodeId(typename: string, key: bigint | number | string): string {
  const text = String(key);
  const prefix = prefixes.has(typename) ? prefixes.get(typename)! : prefixOf(typename);
  if (!prefix || !PRINTABLE_ASCII.test(text)) return Buffer.from(`${typename}:${text}`, 'utf8').toString('base64url');
  return prefix.encoded + asciiBase64url(prefix.rest + text);
}

/** Each base64url character's six bits, by character code; -1 for any other character. */
const BASE64URL_BITS = Int8Array.from({ length: 128 }, (_, code) => BASE64URL.indexOf(String.fromCharCode(code)));
const MAX_GLOBAL_ID = 200;

/**
 * The ASCII text that 1 to 200 base64url characters encode (unpadded, as `encodeNodeId` writes
 * them; a last lone character carries no whole byte and is dropped, as Buffer drops it), or ''
 * when anything else is given or a byte is not ASCII: no type name or key holds such a byte.
 * Without a Buffer, as ids are decoded once per `node(id)`.
 */
export function asciiFromBase64url(encoded: string): string {
  const length = encoded.length;
  if (length === 0 || length > MAX_GLOBAL_ID) return '';
  let text = '';
  let bits = 0;
  let held = 0;
  for (let i = 0; i < length; i++) {
    const code = encoded.charCodeAt(i);
    const value = code < 128 ? BASE64URL_BITS[code]! : -1;
    if (value < 0) return '';
    // Only the bits not yet written out are kept (fewer than 14).
    bits = ((bits << 6) | value) & 0x3fff;
    held += 6;
    if (held >= 8) {
      held -= 8;
      const byte = (bits >> held) & 0xff;
      if (byte > 0x7f) return '';
      text += String.fromCharCode(byte);
    }
  }
  return text;
}

export function decodeNodeId(globalId: string): { typename: NodeTypeName; id: string } {
  const text = asciiFromBase64url(globalId);
  const colon = text.indexOf(':');
  const named = text.slice(0, colon);
  const typename = (Object.hasOwn(FORMER_NAMES, named) ? FORMER_NAMES[named] : named) as NodeTypeName;
  const id = text.slice(colon + 1);
  if (colon < 1 || !NODE_TYPES.includes(typename) || !KEY.test(id)) throw badRequest(MESSAGES.graph.invalidId(globalId.slice(0, MAX_GLOBAL_ID)));
  return { typename, id };
}

/** A decoded key's numbers: `[id]`, or `[orgId, userId]` for a membership. */
export function keyNumbers(id: string): number[] {
  return id.split(':').map(Number);
}

/** Whether a key's number fits the tables' ids (int4, negative ones naming no row); a number past it names nothing. */
export function fitsInt4(n: number): boolean {
  return Number.isSafeInteger(n) && Math.abs(n) <= 2_147_483_647;
}

/** Whether a number can be a row's id: positive and within int4 (any other names no row). */
export const isRowId = (n: number): boolean => Number.isSafeInteger(n) && n > 0 && n <= 2_147_483_647;

type KeyOf<T> = (obj: T) => bigint | number | string;

/** A node type's `id` option: its key, also kept in the field's extensions for `resolveGlobalIdsInPlace`. */
export function nodeKey<T>(keyOf: KeyOf<T>) {
  return { resolve: keyOf, extensions: { nodeKey: keyOf } };
}

/** The `id` option of a node type whose objects hold their global id as `id` already (`dataSourceNode`). */
export function heldNodeId<T extends { id: string }>() {
  return { resolve: (obj: T) => obj.id, extensions: { heldNodeId: true } };
}

/**
 * Resolves every node's `id` in place: the relay plugin resolves each through an async function,
 * a promise and its reactions per object, which for a page of a thousand data sources cost more
 * than their other fields together. An id its objects hold is read as a plain property, with no
 * resolver at all. Called once, when the schema is built.
 */
export function resolveGlobalIdsInPlace(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    const field = type.getFields().id;
    if (field?.extensions.heldNodeId) field.resolve = undefined;
    const keyOf = field?.extensions.nodeKey as KeyOf<unknown> | undefined;
    if (!field || !keyOf) continue;
    const typename = type.name;
    field.resolve = (obj) => encodeNodeId(typename, keyOf(obj));
  }
}
