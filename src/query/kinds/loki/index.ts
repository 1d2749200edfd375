import type { DataResponse } from '../../frames/frame.ts';
import { failed, type DataQuery, type KindContext, type QueryKind, type ResourceRequest, type ResourceResponse } from '../kind.ts';
import { callFailed, framesOrLimit } from '../kind-results.ts';
import { AnswerError, ownMessage } from '../../answer-error.ts';
import { lokiErrorMessage, lokiFramesSliced, lokiRequest, lokiResourceAllowed, parseLokiQuery } from './frames.ts';

/** Loki (`pkg/tsdb/loki`): one GET per refId, answered as frames; resources GET-only on an allow-list. */

async function runOne(ctx: KindContext, query: DataQuery): Promise<DataResponse> {
  let parsed;
  try {
    parsed = parseLokiQuery(query);
  } catch (error) {
    return failed(ownMessage(error), 'plugin', 400);
  }
  let answer;
  try {
    answer = await ctx.call(lokiRequest(parsed));
  } catch (error) {
    return callFailed(error);
  }
  if (answer.status < 200 || answer.status > 299) return failed(lokiErrorMessage(answer.body), 'downstream', answer.status);
  try {
    return framesOrLimit(await lokiFramesSliced(answer.body, parsed), ctx.maxPoints);
  } catch (error) {
    // Anything but an answer the original refuses is this server's fault: logged by the caller.
    if (!(error instanceof AnswerError)) throw error;
    return failed(error.message, 'downstream', 502);
  }
}

function json(status: number, body: unknown): ResourceResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

export const lokiKind: QueryKind = {
  types: ['loki'],

  async query(ctx, queries) {
    const answers = await Promise.all(queries.map((q) => runOne(ctx, q)));
    return new Map(queries.map((q, i) => [q.refId, answers[i]]));
  },

  async resource(ctx: KindContext, req: ResourceRequest): Promise<ResourceResponse> {
    // The original refuses these with a plugin error (500 "Failed to call resource"); the reason
    // is the caller's, so it is said with a 4xx here.
    if (req.method !== 'GET') return json(405, { message: `invalid HTTP method: ${req.method}` });
    const url = req.query ? `${req.path}?${req.query}` : req.path;
    if (!lokiResourceAllowed(url)) return json(400, { message: `invalid URL: ${url}` });
    const answer = await ctx.call({ method: 'GET', path: `loki/api/v1/${req.path}`, query: req.query });
    // Server errors are hidden as the original's plugin proxy hides them; client errors say Loki's message.
    if (answer.status >= 500) return json(502, { message: 'Failed to call resource' });
    if (answer.status < 200 || answer.status > 299) return json(answer.status, { message: lokiErrorMessage(answer.body) });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const encoding = answer.headers['content-encoding'];
    if (typeof encoding === 'string' && encoding !== '') headers['content-encoding'] = encoding;
    return { status: answer.status, headers, body: answer.body };
  },
};
