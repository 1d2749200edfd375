import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Settings } from '../config/settings.ts';
import type { ChangeListener } from '../db/change-listener.ts';
import type { LazyEntityManager } from '../db/orm.ts';
import type { Logger } from '../logging/logger.ts';
import type { DataSourceRecord, DataSourceService } from '../services/data-sources.ts';
import type { LookupFunction } from './address.ts';
import { DataSourceTargetCache, type DataSourceRef } from './cache.ts';
import { createUpstreamConnections, type UpstreamConnections } from './connections.ts';
import { sendRequest, type UpstreamRequest, type UpstreamResponse } from './request.ts';
import { UpstreamStreamer, type StreamOutcome, type UpstreamCall } from './stream.ts';
import { prepareTarget, type DataSourceTarget } from './target.ts';

export type { LookupFunction } from './address.ts';
export { TargetSecretsError, type DataSourceRef } from './cache.ts';
export type { UpstreamConnections } from './connections.ts';
export { UpstreamError, type UpstreamErrorKind } from './errors.ts';
export type { UpstreamRequest, UpstreamResponse } from './request.ts';
export type { StreamOutcome, UpstreamCall } from './stream.ts';
export { joinUpstreamPath, type DataSourceTarget, type UpstreamBase } from './target.ts';
export { upstreamHeaders, responseHeaders, type UpstreamHeaderOptions } from './headers.ts';
export { passedThrough, withVia } from './via.ts';

/** Answer bodies a buffered call reads when neither the caller nor `[dataproxy] response_limit` sets a smaller cap. */
const DEFAULT_BODY_LIMIT = 64 << 20;

export interface UpstreamOptions {
  /** The resolver behind the guarded lookup (tests stand in a fake DNS); `dns.lookup` by default. */
  resolve?: LookupFunction;
}

/**
 * The one way out to data sources, as the front door is the one way in: the proxy, the health
 * checks, queries and resources say what to call, and this layer owns how: the prepared target
 * (kept exact by the change notifications), the connection pools and their egress policy and
 * whitelist, credentials and custom headers, the user agent, timeouts, size limits and
 * cancellation.
 */
export class Upstream {
  readonly #settings: Settings;
  readonly #connections: UpstreamConnections;
  readonly #targets: DataSourceTargetCache;
  readonly #streamer: UpstreamStreamer;
  /** Whitelist and literal-address verdicts, which depend only on a target's version and the settings. */
  readonly #verdicts = new WeakMap<DataSourceTarget, string | null>();

  constructor(settings: Settings, dataSources: DataSourceService, changes: ChangeListener, log: Logger, options: UpstreamOptions = {}) {
    this.#settings = settings;
    this.#connections = createUpstreamConnections(settings, log, options.resolve);
    this.#targets = new DataSourceTargetCache(dataSources, changes, log);
    this.#streamer = new UpstreamStreamer(settings, log, this.#connections);
  }

  /** `[dataproxy] user_agent`, or `dashgate/<version>`. */
  get userAgent(): string {
    return this.#connections.userAgent;
  }

  /**
   * The org's data source prepared for calls, by id or uid; null when there is none. Synchronous on
   * a cache hit. Rejects with `TargetSecretsError` when its secrets cannot be decrypted. `mark` is
   * the request's change mark (`ctx.changeMark`): a change committed before it is always seen.
   */
  target(em: LazyEntityManager, orgId: number, ref: DataSourceRef, mark: number): Promise<DataSourceTarget | null> | DataSourceTarget | null {
    return this.#targets.get(em, orgId, ref, mark);
  }

  /** A target from a row the caller already read and decrypted (not cached). */
  prepare(row: DataSourceRecord, secrets: Readonly<Record<string, string>>): DataSourceTarget {
    return prepareTarget(row, secrets);
  }

  /**
   * The 403 message when the target may not be called (outside the whitelist, or a literal address
   * the egress policy denies), else null. Addresses from DNS are checked as connections are made.
   */
  verdict(target: DataSourceTarget): string | null {
    if (!target.upstream) return null;
    let verdict = this.#verdicts.get(target);
    if (verdict === undefined) {
      verdict = this.#connections.verdict(target.upstream);
      this.#verdicts.set(target, verdict);
    }
    return verdict;
  }

  /** The call's limit: `jsonData.timeout`, else `[dataproxy] timeout`, in ms. */
  timeoutMs(target: DataSourceTarget): number {
    return (target.timeoutSeconds ?? this.#settings.dataproxy.timeoutSeconds) * 1000;
  }

  /**
   * One buffered call. The caller checks `verdict` first; a DNS answer the policy denies still
   * rejects here with kind `denied`. Rejects only with `UpstreamError`.
   */
  request(target: DataSourceTarget, req: UpstreamRequest): Promise<UpstreamResponse> {
    const dataproxy = this.#settings.dataproxy;
    const limit = dataproxy.responseLimit > 0 ? dataproxy.responseLimit : DEFAULT_BODY_LIMIT;
    return sendRequest(target, req, {
      connections: this.#connections,
      timeoutMs: req.timeoutMs ?? this.timeoutMs(target),
      dialTimeoutMs: dataproxy.dialTimeoutSeconds * 1000,
      bodyLimit: req.bodyLimit ?? limit,
    });
  }

  /**
   * Streams `req` (its headers already the upstream's, see `upstreamHeaders`) both ways and relays
   * the answer to `res` as the proxy does: 502/504 with an empty body on failure, 403 for a denied
   * address, the upstream's 401 as 400. Resolves with the status the client got (499 when it left).
   */
  stream(req: IncomingMessage, res: ServerResponse, call: UpstreamCall): Promise<StreamOutcome> {
    return this.#streamer.stream(req, res, call);
  }

  close(): void {
    this.#streamer.close();
  }
}
