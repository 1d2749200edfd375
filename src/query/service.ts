import type { Settings } from '../config/settings.ts';
import { badRequest, DomainError, forbidden, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import type { DataSourceKey } from '../services/data-sources.ts';
import { checkPassedOn, safeProxyPath, UpstreamError, type DataSourceHandle, type Upstream, type UpstreamCaller } from '../upstream/index.ts';
import { ExpressionRequestError, runExpressionRequest, type ExpressionRequestQuery } from './expressions/index.ts';
import { AnswerMemory, RequestBudget, requestVerdict, type QueryLimits, type Size } from './budget.ts';
import { encodeResultsSliced, type EncodedChunks } from './frames/encode.ts';
import { releaseColumns } from './frames/column-buffers.ts';
import type { DataResponse } from './frames/frame.ts';
import { EncodedAnswer } from './encoded-answer.ts';
import { kindFor } from './kinds/index.ts';
import { countPoints } from './kinds/kind-results.ts';
import { failed, type DataQuery, type DataSourceInfo, type KindContext, type ResourceRequest, type ResourceResponse } from './kinds/kind.ts';
import { mapLimited } from './limit.ts';
import { checkQueryCount, checkRefIds, GRAFANA_UID, isExpressionUid, parseQueryRequest, QUERY_ERRORS, type DataSourceReference, type RequestedQuery } from './request.ts';
import type { TimeRange } from './time-range.ts';

/**
 * Who asks, for one request: the upstream layer's caller (its permissions decide each data source
 * queried, at the `query` level), with the signal that ends the request's calls when the client
 * goes away. One object per request: the request's calls share its queue.
 */
export interface QueryCaller extends UpstreamCaller {
  signal: AbortSignal;
  /** The request's id, for the log lines of failures the client sees only as a fixed message. */
  requestId?: string;
}

/** Every refId's answer and the HTTP status the original gives them: 400 when any failed. */
export interface QueryOutcome {
  responses: Map<string, DataResponse>;
  status: 200 | 400;
  /** What the answers kept hold. */
  size: Size;
  /** Gives back the answers' bytes in the instance's budget: once they are sent, or no longer read. */
  release(): void;
}

/** For the graph's query fields: the points the GraphQL request's earlier query fields have answered. */
export interface GraphShare {
  pointsUsed: number;
}

/** A resolved query as its kind receives it. */
function dataQuery(r: Resolved, range: TimeRange): DataQuery {
  return {
    refId: r.query.refId, queryType: r.query.queryType, intervalMs: r.query.intervalMs,
    maxDataPoints: r.query.maxDataPoints, range, model: r.query.model,
  };
}

interface Resolved {
  query: RequestedQuery;
  /** Null for the expression engine and the built-in Grafana data source. */
  handle: DataSourceHandle | null;
  uid: string;
  type: string;
}

/** The original's data source cache refuses a query with its own words, not access control's. */
const QUERY_REFUSALS = { denied: () => forbidden(MESSAGES.query.accessDenied) };
const RESOURCE_REFUSALS = { denied: () => forbidden(MESSAGES.query.resourceAccessDenied) };

/**
 * The query API behind `POST /api/ds/query`, resources and the graph's query fields: reads the
 * request, opens each data source once through the upstream layer (the caller's permissions, the
 * loop guard), groups the queries by data source and runs the groups concurrently
 * (`[query] concurrent_query_limit`), each through its kind, whose calls go out through the
 * opened data source only. Failures of one group become its refIds' errors; the answer is every
 * refId's response.
 */
export class QueryService {
  readonly #settings: Settings;
  readonly #upstream: Upstream;
  readonly #log: Logger;
  readonly #limits: QueryLimits;
  /** Bytes of answers in flight on this instance (`[query] max_answer_bytes_in_flight`). */
  readonly memory: AnswerMemory;

  constructor(settings: Settings, upstream: Upstream, log: Logger) {
    this.#settings = settings;
    this.#upstream = upstream;
    this.#log = log;
    const q = settings.query;
    this.#limits = {
      pointsPerRefId: q.maxPointsPerResponse, seriesPerRefId: q.maxSeriesPerResponse,
      pointsPerRequest: q.maxPointsPerRequest, seriesPerRequest: q.maxSeriesPerRequest, bytesInFlight: q.maxAnswerBytesInFlight,
    };
    this.memory = new AnswerMemory(q.maxAnswerBytesInFlight);
  }

  /**
   * The request body as the original reads it; throws its 400s and 404s (508 for a loop) as domain
   * errors, and 503 when the instance has no room for its answers now. The outcome holds its
   * answers' bytes until `release`.
   */
  async #query(caller: QueryCaller, body: Record<string, unknown>, graph?: GraphShare): Promise<QueryOutcome> {
    checkQueryCount(body, this.#settings.query.maxQueriesPerRequest);
    const request = parseQueryRequest(body, Date.now());
    const resolved = await this.#resolve(caller, request.queries);
    checkRefIds(request.queries);
    const budget = new RequestBudget(graph ? this.#graphLimits(graph) : this.#limits, this.memory);
    try {
      const responses = await this.#run(caller, request.range, resolved, budget);
      const size = this.#capTotal(responses, budget.limits);
      budget.settle(size);
      let status: 200 | 400 = 200;
      for (const response of responses.values()) if (response.error !== undefined) status = 400;
      return { responses, status, size, release: () => budget.release() };
    } catch (error) {
      budget.release();
      throw error;
    }
  }

  /**
   * `query` for answers that leave through the graph (its query fields, live queries): built within
   * the request's budgets, while the graph's serialization of them is not counted in flight, so
   * their bytes are given back here, before the caller reads them.
   */
  async frames(caller: QueryCaller, body: Record<string, unknown>, graph: GraphShare): Promise<Omit<QueryOutcome, 'release'>> {
    const { release, ...outcome } = await this.#query(caller, body, graph);
    release();
    return outcome;
  }

  /**
   * `query`, answered as the SDK's JSON (large answers encoded in slices): the answer owns its
   * column buffers and its bytes in the instance's budget, and gives them back once written.
   */
  async answer(caller: QueryCaller, body: Record<string, unknown>): Promise<EncodedAnswer> {
    const outcome = await this.#query(caller, body);
    let encoded: EncodedChunks;
    try {
      encoded = await encodeResultsSliced(outcome.responses);
    } catch (error) {
      releaseColumns(outcome.responses.values());
      outcome.release();
      throw error;
    }
    return new EncodedAnswer(outcome.status, encoded, outcome.responses, outcome.release);
  }

  /**
   * Whether `caller` may still query every data source `queries` name (live queries ask at every
   * tick): throws the refusal a new request would get.
   */
  async authorize(caller: QueryCaller, queries: ReadonlyArray<Readonly<Record<string, unknown>>>): Promise<void> {
    const request = parseQueryRequest({ queries }, Date.now());
    await this.#resolve(caller, request.queries);
  }

  /** Each query's data source, opened once per request by uid, else by id, in the caller's org. */
  async #resolve(caller: QueryCaller, queries: readonly RequestedQuery[]): Promise<Resolved[]> {
    const byKey = new Map<string, DataSourceHandle | Promise<DataSourceHandle>>();
    const open = (ref: DataSourceReference) => {
      const key = ref.uid !== null ? `uid:${ref.uid}` : `id:${ref.id}`;
      let found = byKey.get(key);
      if (!found) byKey.set(key, (found = this.#upstream.open(caller, ref.uid !== null ? { uid: ref.uid } : { id: ref.id! }, 'query', QUERY_REFUSALS)));
      return found;
    };
    const out: Resolved[] = [];
    // One after another: one request's lookups share one EntityManager.
    for (const query of queries) {
      const { uid, id } = query.ref;
      if (isExpressionUid(uid)) out.push({ query, handle: null, uid: '__expr__', type: '__expr__' });
      else if (uid === GRAFANA_UID) out.push({ query, handle: null, uid, type: 'grafana' });
      else if (uid === null && id === null) throw QUERY_ERRORS.invalidDatasourceId();
      else {
        const handle = await open(query.ref);
        out.push({ query, handle, uid: handle.target.uid, type: handle.target.type });
      }
    }
    return out;
  }

  async #run(caller: QueryCaller, range: TimeRange, resolved: Resolved[], budget: RequestBudget): Promise<Map<string, DataResponse>> {
    // As the original: one expression makes the whole request the expression engine's.
    if (resolved.some((r) => r.type === '__expr__')) return this.#runExpressions(caller, range, resolved, budget);
    return this.#runGroups(caller, range, resolved, budget);
  }

  /**
   * Data source queries grouped by data source, the groups run concurrently. First the budget:
   * a query whose known size does not fit is answered with why, and never runs.
   */
  async #runGroups(caller: QueryCaller, range: TimeRange, all: readonly Resolved[], budget: RequestBudget): Promise<Map<string, DataResponse>> {
    const responses = new Map<string, DataResponse>();
    const refused = budget.admit(all.map((r) => [r.query.refId, this.#estimate(r, range)] as const));
    const resolved = refused.size === 0 ? all : all.filter((r) => !refused.has(r.query.refId));
    for (const [refId, reason] of refused) responses.set(refId, failed(reason, 'plugin', 400));
    const groups = new Map<string, Resolved[]>();
    for (const r of resolved) {
      const group = groups.get(r.uid);
      if (group) group.push(r);
      else groups.set(r.uid, [r]);
    }
    const answers = await mapLimited([...groups.values()], this.#settings.query.concurrentQueryLimit, (group) => this.#runGroup(caller, range, group, budget));
    for (const answer of answers) for (const [refId, response] of answer) responses.set(refId, response);
    return responses;
  }

  /** Server-side expressions: the data source queries they need run once through #runGroups. */
  async #runExpressions(caller: QueryCaller, range: TimeRange, resolved: readonly Resolved[], budget: RequestBudget): Promise<Map<string, DataResponse>> {
    const byRefId = new Map(resolved.map((r) => [r.query.refId, r]));
    const queries = resolved.map((r): ExpressionRequestQuery => ({
      refId: r.query.refId, datasource: { uid: r.uid, type: r.type }, model: r.query.model,
      intervalMs: r.query.intervalMs, maxDataPoints: r.query.maxDataPoints, queryType: r.query.queryType,
    }));
    try {
      return await runExpressionRequest(queries, range, (dataQueries) => this.#runGroups(caller, range, dataQueries.map((q) => {
        const r = byRefId.get(q.refId)!;
        return { ...r, query: { ...r.query, intervalMs: q.intervalMs, maxDataPoints: q.maxDataPoints } };
      }), budget), budget);
    } catch (error) {
      if (error instanceof ExpressionRequestError) throw badRequest(error.message);
      throw error;
    }
  }

  /** What a query will build, when its kind knows before running it; null when only its answer tells. */
  #estimate(r: Resolved, range: TimeRange): Size | null {
    const kind = kindFor(r.type);
    if (!kind || !r.handle) return { points: 0, series: 0 };
    return kind.estimate ? kind.estimate(dataQuery(r, range)) : null;
  }

  /** One data source's queries through its kind; anything it throws is each refId's error. */
  async #runGroup(caller: QueryCaller, range: TimeRange, group: Resolved[], budget: RequestBudget): Promise<Map<string, DataResponse>> {
    const { handle, type } = group[0]!;
    const queries = group.map((r) => dataQuery(r, range));
    const kind = kindFor(type);
    const everyRefId = (response: () => DataResponse) => new Map(queries.map((q) => [q.refId, response()]));
    if (!kind || !handle) return everyRefId(() => failed(MESSAGES.query.kindNotSupported(type), 'plugin', 501));
    const ctx = kindContext(handle, caller.signal, this.#limits, budget);
    let answers: Map<string, DataResponse>;
    try {
      answers = await kind.query(ctx, queries);
    } catch (error) {
      if (caller.signal.aborted) return everyRefId(() => failed(MESSAGES.query.cancelled, 'downstream', 499));
      this.#log.error({ err: error, component: 'query', dsType: type, dsId: handle.target.id, requestId: caller.requestId }, 'data source query failed unexpectedly');
      return everyRefId(() => failed(MESSAGES.query.failed, 'plugin', 500));
    }
    for (const [refId, response] of answers) {
      // The plugin client's rule: frames without a refId get their result's.
      for (const frame of response.frames ?? []) frame.refId ||= refId;
      const frames = response.frames ?? [];
      if (frames.length > ctx.maxSeries) answers.set(refId, failed(MESSAGES.query.tooManySeries(ctx.maxSeries), 'plugin', 400));
      else if (countPoints(frames) > ctx.maxPoints) answers.set(refId, failed(MESSAGES.query.tooManyPoints(ctx.maxPoints), 'plugin', 400));
    }
    return answers;
  }

  /**
   * The graph's limits: the GraphQL executor writes each value on its own and in one go, so its
   * query fields share `[query] max_points_per_graph_request` over the whole GraphQL request.
   */
  #graphLimits(graph: GraphShare): QueryLimits {
    const cap = this.#settings.query.maxPointsPerGraphRequest;
    return { ...this.#limits, pointsPerRequest: Math.max(0, Math.min(this.#limits.pointsPerRequest, cap - graph.pointsUsed)), graph: { pointsPerRequest: cap } };
  }

  /**
   * Past the request's budgets summed over its refIds (in answer order), the later refIds fail
   * too. Answers what the answers kept take.
   */
  #capTotal(responses: Map<string, DataResponse>, limits: QueryLimits): Size {
    const total: Size = { points: 0, series: 0 };
    for (const [refId, response] of [...responses].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const frames = response.frames ?? [];
      const points = countPoints(frames);
      const verdict = requestVerdict(total, { points, series: frames.length }, limits);
      if (verdict) responses.set(refId, failed(verdict, 'plugin', 400));
      else {
        total.points += points;
        total.series += frames.length;
      }
    }
    return total;
  }

  /**
   * `/api/datasources/[uid/]:ref/resources/*`: the kind's resources, under the proxy's rules (a
   * path leaving the data source's URL in any encoding 400, methods and paths its type does not
   * allow 403, the loop guard 508); 404 "Not found" for a kind without them. A call that got no
   * answer is answered as the proxy answers it, with the reason.
   */
  async resource(caller: QueryCaller, ref: DataSourceKey, request: ResourceRequest): Promise<ResourceResponse> {
    // Refused before anything is looked up, as the proxy refuses them.
    this.#upstream.refuseLoop(caller);
    if (safeProxyPath(request.path) === null) throw badRequest(MESSAGES.proxy.badPath);
    const opened = this.#upstream.open(caller, ref, 'query', RESOURCE_REFUSALS);
    const handle = opened instanceof Promise ? await opened : opened;
    const { type } = handle.target;
    const kind = kindFor(type);
    if (!kind?.resource) throw notFound();
    const principal = caller.principal;
    const refused = checkPassedOn(type, request.method, request.path, principal.isServerAdmin ? 'Admin' : principal.orgRole);
    if (refused) throw new DomainError(refused.status === 400 ? 'BAD_REQUEST' : 'FORBIDDEN', refused.message);
    try {
      return await kind.resource(kindContext(handle, caller.signal, this.#limits), request);
    } catch (error) {
      if (error instanceof UpstreamError) {
        // As the proxy answers a call that got no answer: 502/504 (or 403 for a denied address) with the reason.
        const status = error.status === 499 ? 502 : error.status;
        return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: error.message }) };
      }
      this.#log.error({ err: error, component: 'query', dsType: type, dsId: handle.target.id, requestId: caller.requestId }, 'data source resource failed unexpectedly');
      return { status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: MESSAGES.query.resourceFailed }) };
    }
  }
}

/**
 * What a kind sees of an opened data source (never its secrets), and its one way to call it; a
 * query's answers are spent from its request's budget as they arrive.
 */
export function kindContext(handle: DataSourceHandle, signal: AbortSignal, limits: Pick<QueryLimits, 'pointsPerRefId' | 'seriesPerRefId'>, budget?: RequestBudget): KindContext {
  const t = handle.target;
  const dataSource: DataSourceInfo = { id: t.id, uid: t.uid, orgId: t.orgId, name: t.name, type: t.type, url: t.rawUrl, database: t.database, jsonData: t.jsonData };
  const call: KindContext['call'] = !budget ? (request) => handle.call(request) : async (request) => {
    const answer = await handle.call(request);
    if (!budget.body(answer.body.length)) throw new AnswersBusy();
    return answer;
  };
  return { dataSource, signal, maxPoints: limits.pointsPerRefId, maxSeries: limits.seriesPerRefId, call };
}

/** No room left in the instance's budget for this answer: the refId fails with 503, to be tried again. */
class AnswersBusy extends Error {
  readonly status = 503;
  constructor() {
    super(MESSAGES.query.answersBusy);
    this.name = 'AnswersBusy';
  }
}
