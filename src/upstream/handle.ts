import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { LazyEntityManager } from '../db/orm.ts';
import type { DataSourceCaller } from '../services/data-source-permissions.ts';
import type { Span, Tracing } from '../tracing/index.ts';
import type { UpstreamConnections } from './connections.ts';
import { callError, unusableTarget, UpstreamError, type UpstreamErrorKind } from './errors.ts';
import { forwardedHeaders } from './headers.ts';
import type { CallQueue } from './queue.ts';
import { requestUrl, sendRequest, timeoutText, type UpstreamRequest, type UpstreamResponse } from './request.ts';
import type { StreamAnswers, StreamOutcome, UpstreamStreamer } from './stream.ts';
import { joinUpstreamPath, type DataSourceTarget } from './target.ts';
import { answered, unanswered, upstreamSpan } from './tracing.ts';
import { withVia } from './via.ts';

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Who calls a data source, for one request: one object per request (the request's own queue of
 * calls is kept per caller object, so every data source one request opens shares it).
 */
export interface UpstreamCaller {
  /** Who asks, in the org it acts in: the data source's permissions decide (its level for the action). */
  principal: DataSourceCaller & { login?: string; isServerAdmin?: boolean };
  em: LazyEntityManager;
  /** The request's change mark: a data source or permission changed before it is never seen stale. */
  changeMark: number;
  /** Aborted when the client goes away: calls running or waiting for a slot stop with it. */
  signal?: AbortSignal;
  /** The incoming request's `Via` (the loop guard); absent for work no request carries (a live query's tick). */
  via?: string | string[];
  /** The client's address, appended to `X-Forwarded-For` when its request is passed on. */
  ip?: string;
}

/** What a handle needs of the layer that made it. */
export interface HandleContext {
  connections: UpstreamConnections;
  streamer: UpstreamStreamer;
  /** The whole server's calls in flight. */
  serverQueue: CallQueue;
  /** The caller's (its request's) calls in flight. */
  requestQueue(caller: UpstreamCaller): CallQueue;
  verdict(target: DataSourceTarget): string | null;
  /** `[dataproxy] timeout`, the ceiling of every data source's own. */
  timeoutCeilingSeconds: number;
  dialTimeoutMs: number;
  bodyLimit: number;
  expectContinueTimeoutMs: number;
  viaPseudonym: string;
  sendUserHeader: boolean;
  loginCookie: string;
  /** Null when tracing is off: no span, and no trace header added to any call. */
  tracing: Tracing | null;
}

/**
 * One data source opened for one caller: authorized and loaded once, with everything calling it
 * needs. Every call to a data source is made through one of these (`Upstream.open`).
 */
export class DataSourceHandle {
  readonly target: DataSourceTarget;
  readonly caller: UpstreamCaller;
  /** The calls' limit: `jsonData.timeout` when valid, at most `[dataproxy] timeout`, which it is otherwise. */
  readonly timeoutMs: number;
  readonly #context: HandleContext;

  constructor(context: HandleContext, target: DataSourceTarget, caller: UpstreamCaller) {
    this.#context = context;
    this.target = target;
    this.caller = caller;
    const ceiling = context.timeoutCeilingSeconds;
    // Timers cannot wait longer than 2^31-1 ms (a longer wait fires at once).
    this.timeoutMs = Math.min(Math.min(target.timeoutSeconds ?? ceiling, ceiling) * 1000, MAX_TIMER_MS);
  }

  /**
   * The 403 message when the data source may not be called (outside the whitelist, or a literal
   * address the egress policy denies), else null. Addresses from DNS are checked as connections are made.
   */
  get verdict(): string | null {
    return this.target.upstream ? this.#context.verdict(this.target) : null;
  }

  /**
   * Why no call can succeed with the data source as configured, before any is tried: secrets that
   * cannot be decrypted (`secrets`), a URL that is not absolute http(s) (`invalid-url`), TLS
   * material that does not parse (`tls-config`, naming the field). Null when calls may be tried.
   */
  get unusable(): UpstreamError | null {
    return unusableTarget(this.target);
  }

  /**
   * One buffered call, waiting for a slot of the request's and the server's queues first (the
   * wait counts against the timeout, as Go's wait for a connection does). Rejects only with
   * `UpstreamError`: what `unusable` says; `denied` for an address the policy refuses (the
   * proxy's 403 message); else the network's failure, in Go's words. Traced, each call has its
   * span, and tells the data source its trace (`traceparent`...).
   */
  call(req: UpstreamRequest): Promise<UpstreamResponse> {
    const tracing = this.#context.tracing;
    if (!tracing) return this.#call(req, null);
    const span = upstreamSpan(tracing, this.target, req.method);
    return tracing.within(span, () => this.#call(req, span)).then(
      (response) => {
        answered(tracing, span, response.status);
        return response;
      },
      (error: unknown) => {
        unanswered(tracing, span, error);
        throw error;
      },
    );
  }

  #call(req: UpstreamRequest, span: Span | null): Promise<UpstreamResponse> {
    // In the order the proxy refuses them: what cannot be read at all, the address, then the rest.
    const denied = this.target.secretsUnreadable ? null : this.verdict;
    if (denied) return Promise.reject(new UpstreamError('denied', denied));
    const unusable = this.unusable;
    if (unusable) return Promise.reject(unusable);
    const timeoutMs = Math.min(req.timeoutMs ?? this.timeoutMs, MAX_TIMER_MS);
    const started = Date.now();
    const send = (release: () => void) => {
      const left = timeoutMs - (Date.now() - started);
      // A slot that came as the deadline passed: no connection is opened for a call already over.
      if (left <= 0) {
        release();
        return Promise.reject(callError('timeout', req.method, requestUrl(this.target, req).url, timeoutText(timeoutMs / 1000)));
      }
      const forwarded = req.forwarded && this.forwardedHeaders(req.forwarded, false);
      return sendRequest(this.target, forwarded ? { ...req, forwarded } : req, {
        connections: this.#context.connections,
        timeoutMs: left,
        timeoutSeconds: timeoutMs / 1000,
        dialTimeoutMs: this.#context.dialTimeoutMs,
        bodyLimit: req.bodyLimit ?? this.#context.bodyLimit,
        expectContinueTimeoutMs: this.#context.expectContinueTimeoutMs,
        viaPseudonym: this.#context.viaPseudonym,
        via: this.caller.via,
        signal: this.caller.signal,
        traceHeaders: span && ((headers) => this.#context.tracing!.inject(headers, span)),
      }).finally(release);
    };
    const slots = this.#slots(req, started + timeoutMs, timeoutMs / 1000);
    return slots instanceof Promise ? slots.then(send) : send(slots);
  }

  /**
   * The headers a client's request is passed on with (the proxy, resources): `forwardedHeaders`
   * for this data source and caller, with our `Via` entry when the request is streamed as it came.
   */
  forwardedHeaders(incoming: IncomingHttpHeaders, chunked: boolean, httpVersion?: string): IncomingHttpHeaders {
    const context = this.#context;
    const principal = this.caller.principal;
    const headers = forwardedHeaders(incoming, this.target, {
      userAgent: context.connections.userAgent,
      loginCookie: context.loginCookie,
      userHeader: context.sendUserHeader && principal.userId !== null && principal.login ? principal.login : null,
      ip: this.caller.ip ?? '',
      chunked,
    });
    if (httpVersion !== undefined) headers.via = withVia(headers.via, httpVersion, context.viaPseudonym);
    return headers;
  }

  /**
   * Streams a client's request (its headers already `forwardedHeaders`) to the data source below
   * `path` and hands the answer or the failure to `answers`: the proxy's way, one call per client
   * connection, so it takes no slot of the queues. Traced, the call has its span, and the data
   * source is told its trace in place of the client's.
   */
  stream(req: IncomingMessage, res: ServerResponse, call: { path: string; search: string; method: string; chunked: boolean }, answers: StreamAnswers): Promise<StreamOutcome> {
    const tracing = this.#context.tracing;
    if (!tracing) return this.#stream(req, res, call, answers);
    const span = upstreamSpan(tracing, this.target, call.method);
    tracing.inject(req.headers, span);
    return tracing.within(span, () => this.#stream(req, res, call, answers)).then((outcome) => {
      // The status the client got: the data source's, or ours when it gave none (502, 504...; 499 when the client left).
      answered(tracing, span, outcome.status);
      return outcome;
    });
  }

  #stream(req: IncomingMessage, res: ServerResponse, call: { path: string; search: string; method: string; chunked: boolean }, answers: StreamAnswers): Promise<StreamOutcome> {
    const upstream = this.target.upstream!;
    return this.#context.streamer.stream(req, res, {
      target: this.target,
      path: joinUpstreamPath(upstream.basePath, call.path),
      search: call.search,
      method: call.method,
      chunked: call.chunked,
      timeoutMs: this.timeoutMs,
    }, answers);
  }

  /** Slots of the request's and then the server's queue: at once when both are free, else once they are. */
  #slots(req: UpstreamRequest, deadline: number, timeoutSeconds: number): (() => void) | Promise<() => void> {
    const queues = [this.#context.requestQueue(this.caller), this.#context.serverQueue];
    const held: Array<() => void> = [];
    const releaseAll = () => {
      for (const release of held) release();
    };
    for (const queue of queues) {
      const slot = queue.tryAcquire();
      if (!slot) return this.#wait(req, queues.slice(held.length), held, deadline, timeoutSeconds).then(() => releaseAll);
      held.push(slot);
    }
    return releaseAll;
  }

  async #wait(req: UpstreamRequest, queues: CallQueue[], held: Array<() => void>, deadline: number, timeoutSeconds: number): Promise<void> {
    const { url } = requestUrl(this.target, req);
    const failed = (kind: UpstreamErrorKind, text: string) => callError(kind, req.method, url, text);
    const signal = this.caller.signal;
    try {
      for (const queue of queues) {
        held.push(await queue.acquire((fail) => {
          const timer = setTimeout(() => fail(failed('timeout', timeoutText(timeoutSeconds))), Math.max(0, deadline - Date.now()));
          const onAbort = () => fail(failed('aborted', 'context canceled'));
          signal?.addEventListener('abort', onAbort, { once: true });
          if (signal?.aborted) onAbort();
          return () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
          };
        }));
      }
    } catch (error) {
      for (const release of held) release();
      throw error;
    }
  }
}
