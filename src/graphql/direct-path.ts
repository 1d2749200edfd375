import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { sendNodeResponse, type WaitUntilFn } from '@whatwg-node/server';
import type { ExecutionResult } from 'graphql';
import { processRegularResult, type FetchAPI, type Plugin, type YogaServer } from 'graphql-yoga';
import type { RequestContext } from '../context.ts';
import { jsonBody } from '../net/json-encode.ts';
import { CSRF_HEADER, CSRF_PREVENTION, passesCsrfCheck } from './protection.ts';
import { EVENT_STREAM_HEADERS, writeEventStream } from './event-stream.ts';

/** A request body as yoga's JSON parser hands it on: one operation's params. */
export type GraphQLParams = Record<string, unknown>;

type Yoga = YogaServer<RequestContext, Record<string, never>>;
/** Hook payloads are yoga's; each hook is called with the payload yoga itself would pass. */
type Hook = (payload: never) => unknown;

/** The plugin list yoga (and its server adapter) take their hooks from, in their order. */
export function yogaPlugins(server: Yoga): Plugin[] {
  return (server as unknown as { plugins: Array<Plugin | false | null | undefined> }).plugins.filter((p): p is Plugin => Boolean(p));
}

/**
 * The params of a request the direct path serves, or null to leave the request to yoga's HTTP
 * pipeline: a POST to exactly the endpoint (no query string: yoga's health check and routing read
 * the URL), whose Content-Type yoga's JSON parser takes by its own test (the first of a list,
 * `application/json` as sent or with parameters), which CSRF prevention lets through, and whose
 * body parses as one JSON object (an array is a batch; a body that fails to parse gets yoga's own
 * answer). For such a request yoga's request stage only hands on the parsed body: the health check,
 * GraphiQL and the unhandled-route answer do not apply, and JSON is the one parser that matches.
 */
export function directParams(
  method: string | undefined, url: string | undefined, headers: IncomingHttpHeaders, body: Buffer | null, endpoint: string, csrfPrevention: boolean,
): GraphQLParams | null {
  if (method !== 'POST' || url !== endpoint || body === null) return null;
  const contentType = headers['content-type'];
  const first = contentType?.split(',')[0];
  if (first !== 'application/json' && !first?.startsWith('application/json;')) return null;
  if (csrfPrevention && !passesCsrfCheck(headers[CSRF_HEADER] !== undefined, contentType)) return null;
  let params: unknown;
  try {
    // Decoded as yoga's parser decodes it: UTF-8, a byte order mark kept (and so refused by yoga).
    params = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  return params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as GraphQLParams) : null;
}

/**
 * `/graphql` for the request nearly every client sends, one operation POSTed as JSON, through
 * yoga's own stages from the params on: its params hooks (parameter checks, trusted documents),
 * envelop with every plugin (limits, masking, compiled execution, the caches), its result hooks
 * (the result processors among them, choosing by Accept) and the chosen processor, then every
 * response hook; the answer goes out through yoga's own writer. What it leaves out is the
 * adaptation in front of those stages: yoga's server adapter makes a Fetch request with an abort
 * controller and three response listeners, runs its routing hooks, chooses a body parser and reads
 * the body again as a stream, and all of it stays alive while the operation waits on the database.
 * For these requests `directParams` settles all of that before anything is made. Measured with one
 * data source read, a sixth less CPU per request; everything else goes through yoga's pipeline.
 */
export class DirectPath {
  readonly #server: Yoga;
  readonly #fetchAPI: FetchAPI;
  readonly #Request: DirectRequestClass;
  readonly #onResultProcess: Hook[];
  readonly #onResponse: Hook[];
  readonly #waitUntil: WaitUntilFn;

  /**
   * Over a built yoga server (`userPlugins` being those it was given), or null when a plugin needs
   * what this path does not run: a request-stage hook other than CSRF prevention (applied here
   * through `directParams`), or a hook on execution results, which could fail after the operation
   * ran, when this path can no longer hand the request to yoga.
   */
  static over(server: Yoga, userPlugins: readonly Plugin[], waitUntil: WaitUntilFn): DirectPath | null {
    if (userPlugins.some((p) => p !== CSRF_PREVENTION && (p.onRequest || p.onRequestParse))) return null;
    const plugins = yogaPlugins(server);
    if (plugins.some((p) => p.onExecutionResult)) return null;
    return new DirectPath(server, plugins, waitUntil);
  }

  private constructor(server: Yoga, plugins: Plugin[], waitUntil: WaitUntilFn) {
    this.#server = server;
    this.#fetchAPI = server.fetchAPI;
    this.#Request = directRequestClass(server.fetchAPI.Request);
    this.#onResultProcess = plugins.flatMap((p) => (p.onResultProcess ? [p.onResultProcess as Hook] : []));
    this.#onResponse = plugins.flatMap((p) => (p.onResponse ? [p.onResponse as Hook] : []));
    this.#waitUntil = waitUntil;
  }

  /**
   * Answers the request, or returns false without having run anything when yoga's params hooks
   * refuse it (a parameter check, a trusted-documents refusal): yoga's pipeline then answers it.
   */
  async serve(ctx: RequestContext, req: IncomingMessage, res: ServerResponse, body: Buffer, params: GraphQLParams): Promise<boolean> {
    const context = ctx as RequestContext & { waitUntil?: WaitUntilFn };
    // As yoga's server adapter does to the server context.
    context.waitUntil ??= this.#waitUntil;
    const request = new this.#Request(`${requestOrigin(req)}${req.url}`, req.headers, body, res) as unknown as Request;
    let result: ExecutionResult | AsyncIterable<ExecutionResult>;
    try {
      result = (await this.#server.getResultForParams({ params, request }, ctx as never)) as ExecutionResult | AsyncIterable<ExecutionResult>;
    } catch {
      // Only the params hooks throw out of here (operation errors come back as results, and no
      // plugin hooks execution results): nothing has run, so yoga may as well answer it whole.
      return false;
    }
    const processed = await this.#processResult(request, result, ctx);
    let response = 'events' in processed ? new this.#fetchAPI.Response(null, { status: 200, headers: EVENT_STREAM_HEADERS }) : processed;
    let replaced = false;
    for (const hook of this.#onResponse) {
      await hook({
        request, response, serverContext: ctx, fetchAPI: this.#fetchAPI, setResponse: (next: Response) => {
          response = next;
          replaced = true;
        },
      } as never);
    }
    if ('events' in processed) {
      // Returned, not awaited: this frame (the request, its result, the response) is not kept
      // for as long as the stream stays open. Yoga's own headers: no response hook here changes
      // a stream's.
      if (!replaced) return writeEventStream(res, processed.events).then(streamed);
      void processed.events[Symbol.asyncIterator]().return?.();
    }
    await sendNodeResponse(response, res, req, true);
    return true;
  }

  /**
   * Yoga's result stage: every result hook in turn (the result processors among them choose by
   * Accept), then the chosen processor; a subscription chosen to go out as Server-Sent Events comes
   * back as its results, for `writeEventStream` to write as yoga's processor would.
   */
  async #processResult(request: Request, result: ExecutionResult | AsyncIterable<ExecutionResult>, ctx: RequestContext): Promise<Response | { events: AsyncIterable<ExecutionResult> }> {
    let processor: ((result: ExecutionResult, fetchAPI: FetchAPI, mediaType: string) => Response | Promise<Response>) | undefined;
    let mediaType = '*/*';
    const acceptableMediaTypes: string[] = [];
    for (const hook of this.#onResultProcess) {
      await hook({
        request,
        result,
        acceptableMediaTypes,
        resultProcessor: processor,
        serverContext: ctx,
        setResult: (next: ExecutionResult | AsyncIterable<ExecutionResult>) => (result = next),
        setResultProcessor: (next: typeof processor, acceptedMediaType: string) => {
          processor = next;
          mediaType = acceptedMediaType;
        },
      } as never);
    }
    if (processor && mediaType === 'text/event-stream' && isAsyncIterable(result)) return { events: result };
    if (processor === processRegularResult && isPlainAnswer(result)) {
      // Yoga's JSON answer for a result with nothing of its own to leave out or to set the status
      // by (its http extension, errors), with the body encoded as bytes: a page of a thousand nodes
      // as one string costs as much again in the socket write as its encoding.
      return new this.#fetchAPI.Response(jsonBody(result) as BodyInit, { status: 200, headers: { 'Content-Type': `${mediaType}; charset=utf-8` } });
    }
    if (processor) return processor(result as ExecutionResult, this.#fetchAPI, mediaType);
    return new this.#fetchAPI.Response(null, { status: 406, statusText: 'Not Acceptable', headers: { accept: acceptableMediaTypes.join('; charset=utf-8, ') } });
  }
}

/** Outside `serve`: a closure made in it would keep its scope (the response among it) alive. */
const streamed = () => true;

/** A single result without errors or an `http` extension: yoga would write it as it is, with status 200. */
const isPlainAnswer = (result: ExecutionResult | AsyncIterable<ExecutionResult>): result is ExecutionResult =>
  !isAsyncIterable(result) && !Array.isArray(result) && !result.errors?.length && !(result.extensions as { http?: unknown } | undefined)?.http;

const isAsyncIterable = (value: unknown): value is AsyncIterable<ExecutionResult> =>
  typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';

/** The origin yoga's server adapter puts in front of the path (`req.protocol` is never set by node:http). */
function requestOrigin(req: IncomingMessage): string {
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  return `${protocol}://${req.headers.host ?? 'localhost'}`;
}

type DirectRequestClass = new (url: string, headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse) => object;

/**
 * Yoga's own Fetch request class over the Node request's headers and its body as read, with the
 * abort signal made only when a stage asks for it (a subscription does): it aborts once the client
 * goes before its answer is complete, as the adapter's signal does.
 */
function directRequestClass(Base: typeof Request): DirectRequestClass {
  const Fetched = Base as unknown as new (url: string, init: { method: string; headers: IncomingHttpHeaders; body: Buffer }) => object;
  return class DirectRequest extends Fetched {
    readonly #res: ServerResponse;
    #controller: AbortController | null = null;

    constructor(url: string, headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse) {
      super(url, { method: 'POST', headers, body });
      this.#res = res;
    }

    get signal(): AbortSignal {
      if (!this.#controller) {
        const controller = (this.#controller = new AbortController());
        const res = this.#res;
        const abort = () => {
          if (!res.writableFinished && !controller.signal.aborted) controller.abort(res.errored ?? undefined);
        };
        if (res.closed) abort();
        else res.once('close', abort);
      }
      return this.#controller.signal;
    }
  };
}
