import type { StreamRequest } from './hub.ts';

/** A live query as a subscriber asks for it: the `liveQuery` field's arguments, as sent. */
export interface LiveQueryRequest {
  /** The query objects of `POST /api/ds/query`, as sent. */
  queries: ReadonlyArray<Readonly<Record<string, unknown>>>;
  from: string;
  to: string;
  /** A duration (`5s`, `1m`), at least `[live] min_refresh`. */
  refresh: string;
}

/**
 * The live-query hub as resolvers reach it through the services; the app wires the one in
 * src/query/live/hub.ts, which sits above this layer, so its events are typed there.
 */
export interface LiveQueryOpener {
  open(request: StreamRequest, query: LiveQueryRequest): Promise<AsyncIterableIterator<unknown>>;
}
