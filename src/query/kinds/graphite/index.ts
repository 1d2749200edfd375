import type { DataResponse } from '../../frames/frame.ts';
import { failed, type DataQuery, type KindContext, type QueryKind, type ResourceRequest, type ResourceResponse, type UpstreamResponse } from '../kind.ts';
import { callFailed, framesOrLimit } from '../kind-results.ts';
import { AnswerError, checkDepth, parseAnswerJson } from '../../answer-error.ts';
import { encodeValues } from '../../go-text.ts';
import { drainSliced } from '../../slices.ts';
import { graphiteErrorMessage, graphiteFramesSteps, graphiteRequest, graphiteTarget } from './frames.ts';

/** Graphite (`pkg/tsdb/graphite`): `/render` per refId; resources `events`, `metrics/find`, `metrics/expand`, `functions`. */

async function runOne(ctx: KindContext, query: DataQuery, target: string): Promise<DataResponse> {
  let answer;
  try {
    answer = await ctx.call(graphiteRequest(query, target));
  } catch (error) {
    return callFailed(error);
  }
  if (answer.status < 200 || answer.status > 299) {
    const message = `request failed with error: ${graphiteErrorMessage(answer.status, answer.body.toString())}`;
    return failed(message, 'downstream', answer.status);
  }
  try {
    return framesOrLimit(await drainSliced(graphiteFramesSteps(answer.body, query.refId)), ctx.maxPoints);
  } catch (error) {
    // Anything but an answer the original refuses is this server's fault: logged by the caller.
    if (!(error instanceof AnswerError)) throw error;
    return failed(error.message, 'downstream', 502);
  }
}

function json(status: number, body: unknown): ResourceResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** resource_handler.go's error body; `message` too, which is what this server's clients read. */
function resourceError(status: number, text: string): ResourceResponse {
  const message = `failed to handle resource request: ${text}`;
  return json(status, { error: message, message });
}

/** The JSON object a POST resource takes, or undefined. */
function parseBody(req: ResourceRequest): Record<string, unknown> | undefined {
  try {
    const body = JSON.parse(req.body.length > 0 ? req.body.toString() : 'null');
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // answered by the caller
  }
  return undefined;
}

function text(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

function parseAnswer(endpoint: string, answer: UpstreamResponse): unknown {
  try {
    const parsed = parseAnswerJson(answer.body.toString());
    // Written back to the client: nesting past any real answer's is refused before that.
    checkDepth(parsed, 'the answer');
    return parsed;
  } catch (error) {
    throw new AnswerError(`${endpoint} request failed: failed to parse ${endpoint} response: ${(error as Error).message}`);
  }
}

/** A find result's member as the original's struct types it: text for strings, a number for the flags. */
function findMember(value: unknown, type: 'string' | 'number'): unknown {
  if (value === undefined || value === null) return type === 'string' ? '' : 0;
  if (typeof value !== type) throw new AnswerError('metrics find request failed: failed to parse metrics find response: unexpected value');
  return value;
}

async function resource(ctx: KindContext, req: ResourceRequest): Promise<ResourceResponse> {
  const path = req.path.replace(/\/+$/, '');
  if (path === 'functions') {
    const answer = await ctx.call({ method: 'GET', path: 'functions' });
    return { status: answer.status, headers: { 'content-type': 'application/json' }, body: answer.body };
  }
  if (path !== 'events' && path !== 'metrics/find' && path !== 'metrics/expand') return json(404, { message: 'Not found' });
  const args = parseBody(req);
  if (!args) {
    const message = 'failed to parse request body: the body must be a JSON object';
    return json(400, { error: message, message });
  }
  try {
    if (path === 'events') {
      const query = encodeValues({ from: text(args, 'from'), until: text(args, 'until'), tags: text(args, 'tags') || undefined });
      const answer = await ctx.call({ method: 'GET', path: 'events/get_data', query });
      const events = parseAnswer('events', answer);
      return json(answer.status, { data: events });
    }
    const query = text(args, 'query');
    if (query === '') return resourceError(400, 'query is required');
    const range = { from: text(args, 'from') || undefined, until: text(args, 'until') || undefined };
    if (path === 'metrics/find') {
      const answer = await ctx.call({
        method: 'POST', path: 'metrics/find', query: encodeValues(range),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: encodeValues({ query }),
      });
      const found = parseAnswer('metrics find', answer);
      if (!Array.isArray(found)) throw new AnswerError('metrics find request failed: failed to parse metrics find response: not a list');
      // The original decodes into its struct and writes these keys back, in this order.
      const items = found.map((raw) => {
        const m = (raw ?? {}) as Record<string, unknown>;
        return {
          text: findMember(m.text, 'string'), id: findMember(m.id, 'string'), allowChildren: findMember(m.allowChildren, 'number'),
          expandable: findMember(m.expandable, 'number'), leaf: findMember(m.leaf, 'number'),
        };
      });
      return json(answer.status, items);
    }
    const answer = await ctx.call({ method: 'GET', path: 'metrics/expand', query: encodeValues({ query, ...range }) });
    const expanded = parseAnswer('metrics expand', answer) as { results?: unknown };
    const results = Array.isArray(expanded?.results) ? expanded.results : [];
    return json(answer.status, results.map((r) => ({ text: r })));
  } catch (error) {
    // Upstream failures go up as they are; anything but a refused answer is logged by the caller.
    if (!(error instanceof AnswerError)) throw error;
    return resourceError(500, error.message);
  }
}

export const graphiteKind: QueryKind = {
  types: ['graphite'],

  async query(ctx, queries) {
    const results = new Map<string, DataResponse>();
    const runnable = queries.flatMap((q) => {
      const target = graphiteTarget(q.model);
      return target === undefined ? [] : [{ q, target }];
    });
    // Queries without a target are skipped; when none has one, the original answers on refId A.
    if (runnable.length === 0) {
      if (queries.length > 0) results.set('A', failed('no query target found', 'downstream', 400));
      return results;
    }
    const answers = await Promise.all(runnable.map(({ q, target }) => runOne(ctx, q, target)));
    runnable.forEach(({ q }, i) => results.set(q.refId, answers[i]));
    return results;
  },

  resource,
};
