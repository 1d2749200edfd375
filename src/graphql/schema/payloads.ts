import type { ObjectRef } from '@pothos/core';
import type { RequestContext } from '../../context.ts';
import { CallerRefusal } from '../../errors/domain.ts';
import { classify } from '../../errors/render.ts';
import { builder, type SchemaTypes } from '../builder.ts';
import { forgetReads } from '../loaders.ts';
import { decodeNodeId, fitsInt4, keyNumbers, type NodeTypeName } from '../node-ids.ts';

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

/** A payload's fields as `mutate` answers them: each read only once a selection asks for it. */
export type Lazy<F> = { [K in keyof F]: F[K] | Promise<F[K]> };

/** What a mutation resolver answers: its payload's own fields (each maybe still to be read) and the user errors. */
export type Payload<F> = Lazy<F> & { userErrors: UserError[] };

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

/**
 * `attempt`, then the payload's fields read from the change's value, or all null with the user
 * errors. The read runs (once) only when the selection asks for one of them: a REST row that
 * answers a message selects `userErrors` alone and costs no read-back.
 */
export async function mutate<T, F extends Record<string, unknown>>(
  ctx: RequestContext, change: () => Promise<T>, read: (value: T) => Promise<F> | F, failed: { [K in keyof F]: null },
): Promise<Payload<F | { [K in keyof F]: null }>> {
  const outcome = await attempt(ctx, change);
  if (!outcome.done) return { ...failed, userErrors: outcome.userErrors };
  let fields: Promise<F> | undefined;
  const payload = { userErrors: [] } as unknown as Payload<F>;
  for (const key of Object.keys(failed)) {
    Object.defineProperty(payload, key, { enumerable: true, get: () => (fields ??= Promise.resolve(read(outcome.value))).then((f) => f[key]) });
  }
  return payload;
}

/** The database id in a global id of `typename`, or null for another type's id or one beyond int4 (it names no row). A malformed id is the request's error. */
export function databaseId(globalId: string | number, typename: NodeTypeName): number | null {
  const { typename: found, id } = decodeNodeId(String(globalId));
  const [n] = keyNumbers(id);
  return found === typename && n !== undefined && fitsInt4(n) && !id.includes(':') ? n : null;
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

