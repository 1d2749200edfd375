/**
 * Server-side expressions (`pkg/expr`): a request with any query on the `__expr__` data source runs
 * here. Its data source queries run once, through the caller; then each expression runs in
 * dependency order over the values of the refIds it names. Every refId not hidden is answered.
 */
import { ownMessage } from '../answer-error.ts';
import type { Size } from '../budget.ts';
import type { DataResponse, Frame } from '../frames/frame.ts';
import { EXPRESSION_UID, EXPRESSION_UIDS } from '../request.ts';
import { drainSliced, nextSlice, sliceDue } from '../slices.ts';
import { buildCommand, goType, type Command } from './commands.ts';
import { framesToValuesSteps } from './convert.ts';
import { Framer, toFrame, type Results, type SeriesGuard } from './values.ts';

/** Whether a query's data source (object or pre-8.3 string) is the expression engine. */
export function isExpressionDataSource(ds: { uid?: string; type?: string } | string | undefined): boolean {
  if (ds === undefined) return false;
  if (typeof ds === 'string') return EXPRESSION_UIDS.has(ds);
  return (ds.uid !== undefined && EXPRESSION_UIDS.has(ds.uid)) || ds.type === EXPRESSION_UID;
}

export interface ExpressionRequestQuery {
  refId: string;
  datasource: { uid: string; type: string };
  model: Readonly<Record<string, unknown>>;
  intervalMs: number;
  maxDataPoints: number;
  queryType: string;
}

/**
 * The whole request refused before anything ran (a bad expression, an unknown or circular
 * reference). The original answers these 500 "Query data error"; the message keeps its cause.
 */
export class ExpressionRequestError extends Error {
  readonly status = 400;
  constructor(cause: string) {
    super(`expression request error: ${cause}`);
  }
}

/** Ours: expressions per request, so one request cannot build an unbounded graph. */
export const MAX_NODES = 1000;

/** What the expression engine uses for a data source query that sets neither (`buildDSNode`). */
const DEFAULT_INTERVAL_MS = 64;
const DEFAULT_MAX_DATA_POINTS = 5000;

interface Node {
  index: number;
  query: ExpressionRequestQuery;
  command?: Command;
  hidden: boolean;
}

/** `sse.*` errors print as errutil errors do: `[messageId] message`. */
const dependencyError = (refId: string, dep: string) => `[sse.dependencyError] did not execute expression [${refId}] due to a failure to of the dependent expression or query [${dep}]`;
const queryError = (refId: string, cause: string) => `[sse.dataQueryError] failed to execute query [${refId}]: ${cause}`;
const conversionError = (refId: string, cause: string) => `[sse.readDataError] [${refId}] got error: ${cause}`;

function buildNodes(queries: readonly ExpressionRequestQuery[]): Node[] {
  if (queries.length > MAX_NODES) throw new ExpressionRequestError(`more than ${MAX_NODES} queries and expressions in one request`);
  return queries.map((query, index) => {
    const node: Node = { index, query, hidden: query.model.hide === true };
    if (isExpressionDataSource(query.datasource)) {
      try {
        node.command = buildCommand(query.refId, query.model);
      } catch (error) {
        throw new ExpressionRequestError(ownMessage(error));
      }
    } else {
      for (const key of ['intervalMs', 'maxDataPoints'] as const) {
        const value = query.model[key];
        if (value !== undefined && typeof value !== 'number') throw new ExpressionRequestError(`expected ${key} to be an float64, got type ${goType(value)} for refId ${query.refId}`);
      }
    }
    return node;
  });
}

/** `buildExecutionOrder`: a stable topological order (by position in the request), data sources first. */
function executionOrder(nodes: readonly Node[]): Node[] {
  const byRefId = new Map(nodes.map((node) => [node.query.refId, node]));
  const dependents = new Map<Node, Node[]>();
  const waiting = new Map<Node, number>();
  for (const node of nodes) {
    waiting.set(node, 0);
    for (const name of node.command?.needs ?? []) {
      const needed = byRefId.get(name);
      if (!needed) throw new ExpressionRequestError(`unable to find dependent node '${name}'`);
      if (needed === node) throw new ExpressionRequestError(`expression '${name}' cannot reference itself. Must be query or another expression`);
      if (node.command?.type === 'classic_conditions' && needed.command) throw new ExpressionRequestError(`only data source queries may be inputs to a classic condition, ${name} is a Expression`);
      if (needed.command?.type === 'classic_conditions') throw new ExpressionRequestError(`classic conditions may not be the input for other expressions, but ${name} is the input for ${node.query.refId}`);
      const list = dependents.get(needed) ?? [];
      list.push(node);
      dependents.set(needed, list);
      waiting.set(node, waiting.get(node)! + 1);
    }
  }
  const ready = nodes.filter((node) => waiting.get(node) === 0);
  const order: Node[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => a.index - b.index);
    const node = ready.shift()!;
    order.push(node);
    for (const next of dependents.get(node) ?? []) {
      const left = waiting.get(next)! - 1;
      waiting.set(next, left);
      if (left === 0) ready.push(next);
    }
  }
  if (order.length < nodes.length) {
    const cyclic = nodes.filter((node) => !order.includes(node)).map((node) => node.query.refId);
    throw new ExpressionRequestError(`topo: no topological ordering: cyclic components: [[${cyclic.join(' ')}]]`);
  }
  return [...order.filter((node) => !node.command), ...order.filter((node) => node.command)];
}

async function answer(results: Results, refId: string): Promise<DataResponse> {
  const frames: Frame[] = [];
  const framer = new Framer();
  for (const value of results.values) {
    frames.push(toFrame(refId, value, framer));
    if (sliceDue()) await nextSlice();
  }
  if (results.error === undefined) return { frames };
  return { error: results.error, errorSource: results.errorSource ?? 'plugin', status: results.status ?? 400, frames };
}

/**
 * Spends what an expression builds from its request's budget: null when `size` more fits the
 * refId and the request, else the refId's error. Nothing is spent when it does not fit; `check`
 * only asks.
 */
export interface ExpressionBudget {
  spend(refId: string, size: Size): string | null;
  check(refId: string, size: Size): string | null;
}

/** An expression's output past its budget: the refId fails with the budget's words. */
class OverBudget extends Error {}

/** Rows of a series are points twice over in its frame (time and value). */
function guardFor(refId: string, budget: ExpressionBudget): SeriesGuard {
  const size = (rows: number, series: number): Size => ({ points: rows * 2, series });
  return {
    spend(rows, series) {
      const refusal = budget.spend(refId, size(rows, series));
      if (refusal !== null) throw new OverBudget(refusal);
    },
    check(rows, series) {
      const refusal = budget.check(refId, size(rows, series));
      if (refusal !== null) throw new OverBudget(refusal);
    },
  };
}

/** What an output holds besides the series spent while it was built: its numbers (a frame of one point each). */
function numbersOf(values: readonly Results['values'][number][]): Size {
  let series = 0;
  for (const value of values) if (value.kind !== 'series') series++;
  return { points: series, series };
}

/**
 * Runs a request containing expressions: calls runQueries once with the datasource queries the
 * expressions need (hidden ones included), then applies the expressions in dependency order.
 * Returns every refId's response. Throws ExpressionRequestError when the request cannot run.
 */
export async function runExpressionRequest(
  queries: readonly ExpressionRequestQuery[],
  range: { from: number; to: number },
  runQueries: (queries: readonly ExpressionRequestQuery[]) => Promise<Map<string, DataResponse>>,
  budget?: ExpressionBudget,
): Promise<Map<string, DataResponse>> {
  const order = executionOrder(buildNodes(queries));
  const needed = new Set(order.flatMap((node) => node.command?.needs ?? []));
  const dataNodes = order.filter((node) => !node.command && (!node.hidden || needed.has(node.query.refId)));
  const vars = new Map<string, Results>();

  if (dataNodes.length > 0) {
    const responses = await runQueries(dataNodes.map(({ query }) => ({
      ...query,
      intervalMs: typeof query.model.intervalMs === 'number' ? Math.trunc(query.model.intervalMs) : DEFAULT_INTERVAL_MS,
      maxDataPoints: typeof query.model.maxDataPoints === 'number' ? Math.trunc(query.model.maxDataPoints) : DEFAULT_MAX_DATA_POINTS,
    })));
    for (const { query } of dataNodes) {
      const response = responses.get(query.refId);
      if (response?.error !== undefined) {
        vars.set(query.refId, { values: [], error: queryError(query.refId, response.error), errorSource: response.errorSource, status: response.status });
        continue;
      }
      try {
        vars.set(query.refId, { values: await drainSliced(framesToValuesSteps(query.datasource.type, response?.frames ?? [])) });
      } catch (error) {
        vars.set(query.refId, { values: [], error: conversionError(query.refId, ownMessage(error)) });
      }
    }
  }

  for (const node of order) {
    const command = node.command;
    if (!command) continue;
    const refId = node.query.refId;
    const failedDependency = command.needs.find((name) => vars.get(name)?.error !== undefined);
    if (failedDependency !== undefined) {
      vars.set(refId, { values: [], error: dependencyError(refId, failedDependency) });
      continue;
    }
    try {
      // Every series it builds is spent from the budget before it is allocated.
      const values = await drainSliced(command.steps(vars, range, budget ? guardFor(refId, budget) : undefined));
      const refusal = budget?.spend(refId, numbersOf(values)) ?? null;
      vars.set(refId, refusal === null ? { values } : { values: [], error: refusal });
    } catch (error) {
      vars.set(refId, { values: [], error: ownMessage(error) });
    }
    if (sliceDue()) await nextSlice();
  }

  const out = new Map<string, DataResponse>();
  for (const node of order) {
    const results = vars.get(node.query.refId);
    if (node.hidden || !results) continue;
    out.set(node.query.refId, await answer(results, node.query.refId));
  }
  return out;
}
