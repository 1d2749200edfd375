import { orgMember } from '../../auth/access.ts';
import type { StreamEnd } from '../../live/stream.ts';
import type { FrameAppend, ResultDelta } from '../../query/live/delta.ts';
import type { LiveQueryEvent } from '../../query/live/live-queries.ts';
import { builder } from '../builder.ts';
import { FrameRef } from './data-query.ts';
import { streamRequest, unlessEnded } from './live.ts';

const LiveQueryDeltaKind = builder.enumType('LiveQueryDeltaKind', {
  description: 'How a refId\'s answer changed since the subscriber\'s previous event.',
  values: {
    REPLACE: { description: 'The whole answer follows (`status`, `error`, `errorSource`, `frames`): the first event, an error, or a change other than rows appended.' },
    APPEND: { description: 'Same frames, their windows moved: `appends` drops rows from the start of some frames and adds rows at their end.' },
    REMOVE: { description: 'The refId no longer answers.' },
  } as const,
});

const LiveFrameAppend = builder.objectRef<FrameAppend>('LiveFrameAppend').implement({
  description: 'Rows of one frame moved on: drop `drop` rows from its start, then add `values` (one column per field) at its end.',
  fields: (t) => ({
    frame: t.exposeInt('frame', { description: 'Index of the frame in the refId\'s frames.' }),
    drop: t.exposeInt('drop', { description: 'Rows removed from the start of the frame.' }),
    values: t.field({ type: 'JSON', description: 'The rows added: one array per field, in field order, as the field\'s `values` (NaN and infinities null).', resolve: (a) => a.values.map((column) => column.map(finite)) }),
    nanos: t.field({ type: 'JSON', nullable: true, description: 'Per field, the sub-millisecond parts (ns) of the added rows, or null; absent when no field has any.', resolve: (a) => a.nanos ?? null }),
  }),
});

const LiveQueryResultDelta = builder.objectRef<ResultDelta>('LiveQueryResultDelta').implement({
  description: 'What changed in one refId\'s answer. `examples/typed-client/src/live-frames.ts` (`applyLiveDelta`) applies these.',
  fields: (t) => ({
    refId: t.exposeString('refId', { description: 'The query this change is of.' }),
    kind: t.field({ type: LiveQueryDeltaKind, description: 'How it changed, which says which fields are set.', resolve: (d) => (d.kind === 'replace' ? 'REPLACE' : d.kind === 'append' ? 'APPEND' : 'REMOVE') }),
    status: t.int({ nullable: true, description: 'REPLACE: the HTTP-like status of the answer (200 when it has no error).', resolve: (d) => (d.kind === 'replace' ? (d.response.status ?? (d.response.error === undefined ? 200 : 500)) : null) }),
    error: t.string({ nullable: true, description: 'REPLACE: the refId\'s error, as `/api/ds/query` reports it; the stream goes on.', resolve: (d) => (d.kind === 'replace' ? (d.response.error ?? null) : null) }),
    errorSource: t.string({ nullable: true, description: 'REPLACE, with `error`: `plugin` or `downstream`.', resolve: (d) => (d.kind === 'replace' && d.response.error !== undefined ? (d.response.errorSource ?? '') : null) }),
    frames: t.field({ type: [FrameRef], nullable: true, description: 'REPLACE: the refId\'s frames, as `dataQuery` gives them (a client keeping them current reads each field\'s `values`).', resolve: (d) => (d.kind === 'replace' ? (d.response.frames ?? []) : null) }),
    appends: t.field({ type: [LiveFrameAppend], nullable: true, description: 'APPEND: the frames whose rows moved on (frames not listed are unchanged).', resolve: (d) => (d.kind === 'append' ? d.appends : null) }),
  }),
});

const LiveQueryEventType = builder.objectRef<LiveQueryEvent>('LiveQueryEvent').implement({
  description: 'One refresh of a live query: the first carries every refId, later ones only what changed since the subscriber\'s previous event (a reader slower than the refresh gets the change to the newest answer, never a backlog).',
  fields: (t) => ({
    refreshedAt: t.exposeFloat('refreshedAt', { description: 'The refresh (epoch milliseconds) this answer is for: the `now` its range was evaluated at.' }),
    viewers: t.exposeInt('viewers', { description: 'Subscribers of this same query on this server instance (those of other instances share its upstream runs too, but are not counted).' }),
    results: t.field({ type: [LiveQueryResultDelta], description: 'What changed, by refId.', resolve: (e) => e.results }),
  }),
});

/** JSON has no NaN or infinities: null, as `DataFrameField.values` writes them. */
const finite = (value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value);

/** As `POST /api/ds/query`. */
const queryData = orgMember('datasources:query');

builder.subscriptionFields((t) => ({
  liveQuery: t.field({
    type: LiveQueryEventType,
    description: 'A query of `POST /api/ds/query` kept current: its answer at once, then again every `refresh`, over a range that moves with the clock. '
      + 'Subscribers of the same query in the same org (same data sources, models, range, refresh) share one upstream run per refresh, on refreshes aligned on the clock, across every server instance on the same database. '
      + 'The caller\'s rights are checked again at every refresh; the stream ends with `NOT_FOUND` once a data source it queries is deleted. '
      + 'A refId failing again exactly as before is not sent again. '
      + 'Each query naming a data source counts one call per refresh against the caller\'s `[live] max_upstream_calls_per_second` (a live query it already watches counts once); a subscription past it is refused with `TOO_MANY_REQUESTS`. '
      + 'Org members of any role (`None` included) (datasources:query); each data source\'s permissions then require Query.',
    extensions: { access: queryData },
    args: {
      queries: t.arg({ type: ['JSONObject'], required: true, description: 'The `queries` of `POST /api/ds/query`, as sent there.' }),
      from: t.arg.string({ required: true, defaultValue: 'now-1h', description: 'Start of the range: now-based date math (`now-1h`), a duration before now (`1h`) or epoch milliseconds.' }),
      to: t.arg.string({ required: true, defaultValue: 'now', description: 'End of the range, in the same forms.' }),
      refresh: t.arg.string({ required: true, defaultValue: '5s', description: 'How often to run it again (`5s`, `1m`); at least `[live] min_refresh`.' }),
    },
    subscribe: (_root, args, ctx) => ctx.services.liveQueries.open(streamRequest(ctx, queryData), args),
    resolve: (event: LiveQueryEvent | StreamEnd) => unlessEnded(event),
  }),
}));
