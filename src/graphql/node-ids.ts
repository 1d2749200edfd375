import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

/**
 * Global ids (GraphQL Global Object Identification): `<Type>:<key>` in base64url, opaque to
 * clients. The key is the database id, or `<orgId>:<userId>` for a membership. Anything that does
 * not decode to a node type of this schema is the client's error (400), never a crash.
 */
export const NODE_TYPES = ['DataSourceNode', 'OrganizationNode', 'UserNode', 'OrganizationMember', 'ServiceAccountNode', 'ServiceAccountTokenNode', 'TeamNode'] as const;
export type NodeTypeName = (typeof NODE_TYPES)[number];

const KEY = /^[0-9]{1,15}(:[0-9]{1,15})?$/;

export function encodeNodeId(typename: string, key: bigint | number | string): string {
  return Buffer.from(`${typename}:${key}`, 'utf8').toString('base64url');
}

export function decodeNodeId(globalId: string): { typename: NodeTypeName; id: string } {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(globalId) ? Buffer.from(globalId, 'base64url').toString('utf8') : '';
  const colon = text.indexOf(':');
  const typename = text.slice(0, colon) as NodeTypeName;
  const id = text.slice(colon + 1);
  if (colon < 1 || !NODE_TYPES.includes(typename) || !KEY.test(id)) throw badRequest(MESSAGES.graph.invalidId(globalId.slice(0, 200)));
  return { typename, id };
}

/** A decoded key's numbers: `[id]`, or `[orgId, userId]` for a membership. */
export function keyNumbers(id: string): number[] {
  return id.split(':').map(Number);
}
