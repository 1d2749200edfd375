import { builder } from '../builder.ts';
import { orgMember } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { fieldLength, type DataResponse, type Field, type FieldType, type Frame } from '../../query/frames/frame.ts';
import type { GraphShare } from '../../query/service.ts';
import { DataSourceType } from './data-source/node.ts';
import { orgActors } from '../access.ts';
import type { DataSourceCaller } from '../../services/data-source-permissions.ts';

/**
 * Queries in the graph: a data source's `query` field (its own queries) and the root `dataQuery`
 * (several data sources and expressions in one request, as `POST /api/ds/query`). Both run the
 * query service `POST /api/ds/query` runs, and give typed frames: fields with their type, labels,
 * config and values, so a typed client gets typed results rather than the wire's JSON.
 */

/** As the proxy and `/api/ds/query`: every org role may query a data source. */
const QUERY = orgMember('datasources:query');

interface RefIdResult {
  refId: string;
  response: DataResponse;
}
interface Results {
  status: number;
  results: RefIdResult[];
}

const SIMPLE: Record<FieldType, 'TIME' | 'NUMBER' | 'STRING' | 'BOOLEAN' | 'OTHER' | 'ENUM'> = {
  int8: 'NUMBER', int16: 'NUMBER', int32: 'NUMBER', int64: 'NUMBER', uint8: 'NUMBER', uint16: 'NUMBER', uint32: 'NUMBER', uint64: 'NUMBER',
  float32: 'NUMBER', float64: 'NUMBER', string: 'STRING', bool: 'BOOLEAN', 'time.Time': 'TIME', 'json.RawMessage': 'OTHER', enum: 'ENUM',
};

const FieldKind = builder.enumType('DataFieldType', {
  description: 'The type of a frame field\'s values (the original\'s `FieldType`).',
  values: {
    TIME: { description: 'Epoch milliseconds (see `nanos` for finer parts).' },
    NUMBER: { description: 'Integers and floats.' },
    STRING: { description: 'Text.' },
    BOOLEAN: { description: 'True or false.' },
    OTHER: { description: 'Any JSON value.' },
    ENUM: { description: 'Indexes into `config.type.enum.text`.' },
  },
});

const Label = builder.objectRef<[string, string]>('DataLabel').implement({
  description: 'One label of a series (Prometheus labels, tags).',
  fields: (t) => ({
    name: t.string({ description: 'The label\'s name.', resolve: ([name]) => name }),
    value: t.string({ description: 'Its value.', resolve: ([, value]) => value }),
  }),
});

const finite = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

const FieldRef = builder.objectRef<Field>('DataFrameField').implement({
  description: 'One column of a frame: every row\'s value of one quantity.',
  fields: (t) => ({
    name: t.string({ description: 'The field\'s name (`Time`, `Value`, a column name).', resolve: (f) => f.name }),
    type: t.field({ type: FieldKind, description: 'The type of its values, which says which of `numbers`, `strings`, `booleans` holds them.', resolve: (f) => SIMPLE[f.type] }),
    goType: t.string({ description: 'The original\'s type name (`typeInfo.frame`): `float64`, `time.Time`, `int64`, `string`...', resolve: (f) => f.type }),
    nullable: t.boolean({ description: 'Whether a value may be null.', resolve: (f) => f.nullable === true }),
    labels: t.field({ type: [Label], nullable: true, description: 'Sorted by name; null when the field has none.', resolve: (f) => (f.labels ? Object.entries(f.labels).sort(([a], [b]) => (a < b ? -1 : 1)) : null) }),
    config: t.field({ type: 'JSONObject', nullable: true, description: 'Display settings from the data source: `displayNameFromDS`, `unit`, `interval`...', resolve: (f) => (f.config as Record<string, unknown> | undefined) ?? null }),
    displayName: t.string({ nullable: true, description: '`config.displayName`, else `config.displayNameFromDS`.', resolve: (f) => f.config?.displayName ?? f.config?.displayNameFromDS ?? null }),
    numbers: t.field({
      type: ['Float'], nullable: { list: true, items: true },
      description: 'Values of a TIME or NUMBER field (times as epoch milliseconds); NaN and infinities are null. Null for other types.',
      resolve: (f) => (SIMPLE[f.type] === 'TIME' || SIMPLE[f.type] === 'NUMBER' ? f.values.map(finite) : null),
    }),
    strings: t.field({
      type: ['String'], nullable: { list: true, items: true }, description: 'Values of a STRING field; null for other types.',
      resolve: (f) => (f.type === 'string' ? (f.values as Array<string | null>) : null),
    }),
    booleans: t.field({
      type: ['Boolean'], nullable: { list: true, items: true }, description: 'Values of a BOOLEAN field; null for other types.',
      resolve: (f) => (f.type === 'bool' ? (f.values as Array<boolean | null>) : null),
    }),
    values: t.field({
      type: ['JSON'], nullable: { list: false, items: true }, description: 'Values of any type as JSON (NaN and infinities null).',
      resolve: (f) => (f.type === 'float64' || f.type === 'float32' ? f.values.map(finite) : f.values),
    }),
    nanos: t.field({ type: ['Int'], nullable: true, description: 'TIME fields: nanoseconds past each millisecond, when any is not 0.', resolve: (f) => f.nanos ?? null }),
  }),
});

export const FrameRef = builder.objectRef<Frame>('DataFrame').implement({
  description: 'A table of fields of equal length: one series, or one table, of a query\'s answer.',
  fields: (t) => ({
    name: t.string({ nullable: true, description: 'The series\' name, when the kind gives one.', resolve: (f) => f.name || null }),
    refId: t.string({ nullable: true, description: 'The query it answers.', resolve: (f) => f.refId || null }),
    meta: t.field({ type: 'JSONObject', nullable: true, description: 'The frame\'s meta (`type`, `executedQueryString`, `notices`, `custom`...).', resolve: (f) => (f.meta ? { typeVersion: [0, 0], ...f.meta } : null) }),
    length: t.int({ description: 'Rows.', resolve: (f) => (f.fields[0] ? fieldLength(f.fields[0]) : 0) }),
    fields: t.field({ type: [FieldRef], description: 'Its columns, in order (the time first for a series).', resolve: (f) => f.fields }),
  }),
});

const ResultRef = builder.objectRef<RefIdResult>('DataQueryResult').implement({
  description: 'The answer to one query (refId).',
  fields: (t) => ({
    refId: t.string({ description: 'The query\'s refId.', resolve: (r) => r.refId }),
    status: t.int({ description: 'HTTP-like: 200, or the upstream\'s status, 502 unreachable, 504 timeout.', resolve: (r) => r.response.status ?? (r.response.error !== undefined ? 500 : 200) }),
    error: t.string({ nullable: true, description: 'Why the query failed, as `/api/ds/query` reports it; null on success.', resolve: (r) => r.response.error ?? null }),
    errorSource: t.string({ nullable: true, description: '`plugin` or `downstream` when `error` is set.', resolve: (r) => (r.response.error !== undefined ? (r.response.errorSource ?? '') : null) }),
    frames: t.field({ type: [FrameRef], description: 'Its answer: series or tables.', resolve: (r) => r.response.frames ?? [] }),
  }),
});

const ResultsRef = builder.objectRef<Results>('DataQueryResults').implement({
  description: 'Every refId\'s answer, sorted by refId; `status` is what `POST /api/ds/query` answers (400 when any failed).',
  fields: (t) => ({
    status: t.int({ description: 'What `POST /api/ds/query` answers: 200, or 400 when any refId failed.', resolve: (r) => r.status }),
    results: t.field({ type: [ResultRef], description: 'Each refId\'s answer, by refId.', resolve: (r) => r.results }),
  }),
});

/**
 * The points each GraphQL request's query fields have answered so far (`[query] max_points_per_graph_request`
 * is over all of them), and the last of them: they run one after another, each knowing what the
 * ones before it used.
 */
const graphShares = new WeakMap<RequestContext, GraphShare & { last: Promise<unknown> }>();

/** Runs a query as the caller is in the org the request acts in, or, for a data source reached through the graph, in `asIn` (its own org). */
async function run(ctx: RequestContext, body: Record<string, unknown>, asIn?: DataSourceCaller): Promise<Results> {
  const caller = ctx.dataSourceCaller(asIn);
  let share = graphShares.get(ctx);
  if (!share) graphShares.set(ctx, (share = { pointsUsed: 0, last: Promise.resolve() }));
  const mine = share;
  const turn = mine.last.then(async () => {
    const done = await ctx.services.queries.frames(caller, body, mine);
    mine.pointsUsed += done.size.points;
    return done;
  });
  mine.last = turn.catch(() => {});
  const outcome = await turn;
  const results = [...outcome.responses].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([refId, response]) => ({ refId, response }));
  return { status: outcome.status, results };
}


builder.queryFields((t) => ({
  dataQuery: t.field({
    extensions: { access: QUERY },
    type: ResultsRef,
    description: 'Runs queries of any data sources of the org, and server-side expressions, in one request: `POST /api/ds/query` in the graph. Org members of any role (`None` included) (datasources:query); each data source\'s permissions then require Query. The query fields of one GraphQL request answer at most `[query] max_points_per_graph_request` data points together (100,000 by default; `POST /api/ds/query` takes far more); past it the later refIds fail with an error.',
    args: {
      from: t.arg.string({ description: 'Epoch milliseconds, a duration before now (`5m`) or date math (`now-1h`, `now/d`).', defaultValue: 'now-1h' }),
      to: t.arg.string({ defaultValue: 'now', description: 'End of the range, in the same forms.' }),
      queries: t.arg({ type: ['JSONObject'], required: true, description: 'As `/api/ds/query` takes them: `refId`, `datasource {type, uid}`, `intervalMs`, `maxDataPoints` and the kind\'s own keys.' }),
    },
    resolve: (_root, args, ctx) => run(ctx, { from: args.from, to: args.to, queries: args.queries }),
  }),
}));

const queryArgs = 'The kind\'s query models (`expr`, `range`, `instant`, `legendFormat` for Prometheus), each with a `refId`.';

builder.objectField(DataSourceType, 'query', (t) => t.field({
  type: ResultsRef,
  description: 'Runs queries against this data source (each query\'s `datasource` is this one), as the caller is in its org: whoever may query it there (datasources:query).',
  extensions: { access: QUERY },
  args: {
    from: t.arg.string({ defaultValue: 'now-1h', description: 'Start of the range: epoch milliseconds, a duration before now (`5m`) or date math (`now-1h`).' }),
    to: t.arg.string({ defaultValue: 'now', description: 'End of the range, in the same forms.' }),
    queries: t.arg({ type: ['JSONObject'], required: true, description: queryArgs }),
  },
  resolve: async (ds, args, ctx) => {
    // The data source may be another org's than the one the request acts in (reached through
    // viewer.organizations): the caller's role there decides, through its permissions.
    const [asIn] = await orgActors(ctx, [ds.orgId]);
    const queries = args.queries.map((q) => ({ ...q, datasource: { type: ds.type, uid: ds.uid }, datasourceId: undefined }));
    return run(ctx, { from: args.from, to: args.to, queries }, asIn);
  },
}));
