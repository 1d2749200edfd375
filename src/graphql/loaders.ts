import { createContextCache } from '@pothos/core';
import DataLoader from 'dataloader';
import type { RequestContext } from '../context.ts';

/**
 * Per-request batching for the graph: every parent of one level asks its loader, and the loader
 * reads for all of them in one statement once the level has been walked (DataLoader's tick), so a
 * nested query costs the same number of statements for 1 parent as for 100. Loaders live as long
 * as the request's context, so nothing is shared between callers.
 */
export function perRequestLoader<K, V>(batch: (keys: readonly K[], ctx: RequestContext) => Promise<readonly V[]>, cacheKey?: (key: K) => unknown) {
  const cache = remembered(createContextCache((ctx: RequestContext) => new DataLoader<K, V, unknown>((keys) => batch(keys, ctx), { cacheKeyFn: cacheKey })));
  return (ctx: RequestContext) => cache(ctx);
}

/** A loader of one list per key, from a batch read answering a map of them. */
export function perRequestGroups<K, V>(read: (keys: readonly K[], ctx: RequestContext) => Promise<Map<K, V[]>>) {
  return perRequestLoader<K, V[]>(async (keys, ctx) => {
    const groups = await read(keys, ctx);
    return keys.map((key) => groups.get(key) ?? []);
  });
}

/** One value per request, computed on first use (such as the caller's roles in every org). */
export function perRequestValue<V>(compute: (ctx: RequestContext) => Promise<V>) {
  return remembered(createContextCache((ctx: RequestContext) => compute(ctx)));
}

/** Every per-request cache, so that a mutation can empty them all for its request. */
const caches: Array<{ delete(ctx: RequestContext): void }> = [];

function remembered<C extends { delete(ctx: RequestContext): void }>(cache: C): C {
  caches.push(cache);
  return cache;
}

/**
 * Forgets what the request has read so far (objects, lists, the caller's roles): after a
 * mutation, its payload and any later mutation of the same request read what it changed, not
 * what an earlier field of the request had loaded.
 */
export function forgetReads(ctx: RequestContext): void {
  for (const cache of caches) cache.delete(ctx);
}

/** The rows in the order of the ids asked (undefined where none). */
export function inOrder<T>(ids: readonly number[], rows: readonly T[], idOf: (row: T) => number): Array<T | undefined> {
  const byId = new Map(rows.map((row) => [idOf(row), row]));
  return ids.map((id) => byId.get(id));
}

/** The ids worth a statement: each once, without 0 (which names no row). */
export const real = (ids: number[]) => [...new Set(ids.filter((id) => id !== 0))];

/** Rows grouped under each key asked (an empty list where none). */
export function groupBy<T>(keys: readonly number[], rows: readonly T[], keyOf: (row: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>(keys.map((key) => [key, []]));
  for (const row of rows) groups.get(keyOf(row))?.push(row);
  return groups;
}
