import type { Settings } from '../config/settings.ts';
import type { ChangeListener } from '../db/change-listener.ts';
import { accessDenied, DomainError, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import type { Tracing } from '../tracing/index.ts';
import { ACTION_NAMES, allows, type DataSourceAction } from '../services/data-source-access.ts';
import type { DataSourceAccessCache } from '../services/data-source-permissions.ts';
import type { DataSourceKey, DataSourceService } from '../services/data-sources.ts';
import type { LookupFunction } from './address.ts';
import { DataSourceTargetCache } from './cache.ts';
import { createUpstreamConnections, type UpstreamConnections } from './connections.ts';
import { DataSourceHandle, type HandleContext, type UpstreamCaller } from './handle.ts';
import { CallQueue } from './queue.ts';
import { UpstreamStreamer } from './stream.ts';
import type { DataSourceTarget } from './target.ts';
import { passedThrough } from './via.ts';

export type { LookupFunction } from './address.ts';
export { DataSourceHandle, type UpstreamCaller } from './handle.ts';
export { UpstreamError, type UpstreamErrorKind } from './errors.ts';
export { responseHeaders } from './headers.ts';
export { HOP_BY_HOP } from './policy/hop-by-hop.ts';
export { checkPassedOn, checkProxyRequest } from './policy/rules.ts';
export { safeProxyPath } from './policy/path.ts';
export type { UpstreamRequest, UpstreamResponse } from './request.ts';
export type { StreamAnswers, StreamOutcome } from './stream.ts';
export type { DataSourceTarget } from './target.ts';

/** Answer bodies a buffered call reads when neither the caller nor `[dataproxy] response_limit` sets a smaller cap. */
const DEFAULT_BODY_LIMIT = 64 << 20;

export interface UpstreamOptions {
  /** The resolver behind the guarded lookup (tests stand in a fake DNS); `dns.lookup` by default. */
  resolve?: LookupFunction;
  /** Spans for every call, and trace headers on every call; none when absent or null (tracing off). */
  tracing?: Tracing | null;
}

/** How a caller's refusals are worded where the original words them its own way; the defaults are the data source API's. */
export interface RefusalWords {
  /** The 404 message; "Data source not found" by default. */
  notFound?: string;
  /** The 403; the access-control 403 naming the action's permission by default. */
  denied?: () => DomainError;
}

/**
 * The one way out to data sources, as the front door is the one way in. `open` authorizes the
 * caller for a data source (its permission level for the action, from the access cache kept exact
 * by the change barrier), loads it once (the prepared target, from the cache kept exact the same
 * way: URL, credentials and configured headers, TLS material, timeout) and hands back the handle
 * every call is made through: the proxy's streams, and the buffered calls of health checks,
 * queries, resources and live queries, which wait in the request's and the server's queues for a
 * slot. Nothing else decrypts a data source's secrets or builds a target.
 */
export class Upstream {
  readonly #connections: UpstreamConnections;
  readonly #targets: DataSourceTargetCache;
  readonly #access: DataSourceAccessCache;
  readonly #viaPseudonym: string;
  readonly #context: HandleContext;
  /** Whitelist and literal-address verdicts, which depend only on a target's version and the settings. */
  readonly #verdicts = new WeakMap<DataSourceTarget, string | null>();
  /** Each request's queue, by its caller object. */
  readonly #requestQueues = new WeakMap<UpstreamCaller, CallQueue>();

  constructor(settings: Settings, dataSources: DataSourceService, access: DataSourceAccessCache, changes: ChangeListener, log: Logger, options: UpstreamOptions = {}) {
    const dataproxy = settings.dataproxy;
    const connections = createUpstreamConnections(settings, log, options.resolve);
    this.#connections = connections;
    this.#access = access;
    this.#viaPseudonym = dataproxy.viaPseudonym;
    // A changed data source's TLS pool closes on every instance, as each hears the change.
    this.#targets = new DataSourceTargetCache(dataSources, changes, log, (key) => connections.release(key));
    const perRequest = dataproxy.concurrentCallsPerRequest;
    this.#context = {
      connections,
      streamer: new UpstreamStreamer(settings, log, connections),
      serverQueue: new CallQueue(dataproxy.concurrentCalls),
      requestQueue: (caller) => {
        let queue = this.#requestQueues.get(caller);
        if (!queue) this.#requestQueues.set(caller, (queue = new CallQueue(perRequest)));
        return queue;
      },
      verdict: (target) => this.#verdict(target),
      timeoutCeilingSeconds: dataproxy.timeoutSeconds,
      dialTimeoutMs: dataproxy.dialTimeoutSeconds * 1000,
      bodyLimit: dataproxy.responseLimit > 0 ? dataproxy.responseLimit : DEFAULT_BODY_LIMIT,
      expectContinueTimeoutMs: dataproxy.expectContinueTimeoutSeconds * 1000,
      viaPseudonym: dataproxy.viaPseudonym,
      sendUserHeader: dataproxy.sendUserHeader,
      loginCookie: settings.auth.loginCookieName,
      tracing: options.tracing ?? null,
    };
  }

  /** `[dataproxy] user_agent`, or `dashgate/<version>`. */
  get userAgent(): string {
    return this.#connections.userAgent;
  }

  /** Buffered calls in flight and waiting on this instance (for metrics and tests). */
  get calls(): { busy: number; waiting: number } {
    return { busy: this.#context.serverQueue.busy, waiting: this.#context.serverQueue.waiting };
  }

  /**
   * The caller's data source `ref` (by id or uid, in the caller's org), opened for `action`.
   * Synchronous when the data source and the caller's level are cached (the proxy's usual case).
   * Throws domain errors: 508 when the request already came through this deployment (a data
   * source leading back here), 404 when the org has no such data source, 403 when the caller's
   * level on it does not allow `action`.
   */
  open(caller: UpstreamCaller, ref: DataSourceKey, action: DataSourceAction = 'query', words: RefusalWords = {}): DataSourceHandle | Promise<DataSourceHandle> {
    this.refuseLoop(caller);
    const found = this.#targets.get(caller.em, caller.principal.orgId, ref, caller.changeMark);
    if (found instanceof Promise) return found.then((target) => this.#authorize(caller, target, action, words));
    return this.#authorize(caller, found, action, words);
  }

  /**
   * Throws the 508 of a request that already came through this deployment (its `Via` carries our
   * name: a data source leading back here), as `open` does; for callers that refuse a loop before
   * anything else.
   */
  refuseLoop(caller: UpstreamCaller): void {
    if (passedThrough(caller.via, this.#viaPseudonym)) throw new DomainError('LOOP_DETECTED', MESSAGES.proxy.loopDetected);
  }

  #authorize(caller: UpstreamCaller, target: DataSourceTarget | null, action: DataSourceAction, words: RefusalWords): DataSourceHandle | Promise<DataSourceHandle> {
    if (!target) throw notFound(words.notFound ?? MESSAGES.dataSource.notFound);
    const level = this.#access.level(caller.em, caller.principal, target.id, caller.changeMark);
    const decide = (got: Awaited<typeof level>) => {
      if (!allows(got, action)) throw words.denied?.() ?? accessDenied(ACTION_NAMES[action]);
      return new DataSourceHandle(this.#context, target, caller);
    };
    return level instanceof Promise ? level.then(decide) : decide(level);
  }

  #verdict(target: DataSourceTarget): string | null {
    let verdict = this.#verdicts.get(target);
    if (verdict === undefined) {
      verdict = this.#connections.verdict(target.upstream!);
      this.#verdicts.set(target, verdict);
    }
    return verdict;
  }

  close(): void {
    this.#context.streamer.close();
  }
}
