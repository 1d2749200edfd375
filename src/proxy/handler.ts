import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Settings } from '../config/settings.ts';
import type { RequestContext } from '../context.ts';
import { DomainError, forbidden, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import { checkProxyRequest } from '../upstream/policy/rules.ts';
import { safeProxyPath } from '../upstream/policy/path.ts';
import type { DataSourceHandle, StreamAnswers, Upstream, UpstreamCaller } from '../upstream/index.ts';
import { proxyAnswers } from './answers.ts';
import { extractProxyPath, type ProxyRef } from './policy/path.ts';

/** The original's proxy words an unknown data source its own way. */
const PROXY_REFUSALS = { notFound: MESSAGES.proxy.notFound };

/** Called once per call that went upstream, with the status the client got. */
export type UpstreamObserver = (type: string, status: number, seconds: number) => void;

/**
 * `ANY /api/datasources/proxy/:id/*` and `/api/datasources/proxy/uid/:uid/*`, for a caller the
 * front door already authenticated and authorized. Each call goes through named steps: parse the
 * path, open the data source (the loop guard, its permissions), check the policy, build the
 * upstream headers, stream, record. Refusals are thrown as domain errors for the one renderer.
 */
export class DataSourceProxy {
  readonly #upstream: Upstream;
  readonly #log: Logger;
  readonly #onUpstream: UpstreamObserver;
  readonly #settings: Settings;
  readonly #answers: StreamAnswers;

  constructor(settings: Settings, upstream: Upstream, log: Logger, onUpstream: UpstreamObserver) {
    this.#settings = settings;
    this.#upstream = upstream;
    this.#log = log;
    this.#onUpstream = onUpstream;
    this.#answers = proxyAnswers(settings.dataproxy.responseLimit, log);
  }

  async handle(ctx: RequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const principal = ctx.caller;
    const caller: UpstreamCaller = { principal, em: () => ctx.em, changeMark: ctx.changeMark, via: req.headers.via, ip: req.socket.remoteAddress ?? '' };
    // A call this deployment already proxied (a data source leading back here) goes no further.
    this.#upstream.refuseLoop(caller);
    const { ref, proxyPath, search } = this.#parsePath(req.url ?? '/');
    const opened = this.#upstream.open(caller, ref, 'query', PROXY_REFUSALS);
    const handle = opened instanceof Promise ? await opened : opened;
    const target = handle.target;
    // Refused before the policy, as the original fails to load such a data source; TLS material
    // that does not parse is answered when the call is tried (a 502 naming the field).
    const unusable = handle.unusable;
    if (unusable?.kind === 'secrets') throw new DomainError('INTERNAL', unusable.message);
    if (unusable?.kind === 'invalid-url') throw new DomainError('BAD_REQUEST', unusable.message);
    const method = req.method ?? 'GET';
    this.#checkPolicy(handle, method, proxyPath);

    const chunked = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] !== undefined;
    // http-proxy-3 sends `req.headers`.
    req.headers = handle.forwardedHeaders(req.headers, chunked, req.httpVersion);
    if (this.#settings.dataproxy.logging) {
      // The path only: query strings and bodies can carry credentials, headers certainly do.
      this.#log.info({ component: 'dataproxy', method, uri: (req.url ?? '/').split('?', 1)[0], dsType: target.type, dsId: target.id, userId: principal.userId, orgId: principal.orgId }, 'proxying request');
    }
    // A client that left while we looked up (res 'close' has already fired, so no close handler
    // would ever run): open nothing upstream for it.
    if (res.destroyed || req.destroyed) return;

    const started = performance.now();
    const { status } = await handle.stream(req, res, { path: proxyPath, search, method, chunked }, this.#answers);
    this.#onUpstream(target.type, status, (performance.now() - started) / 1000);
  }

  /** Step 1: which data source, and which path below it (400/404 as the original answers). */
  #parsePath(url: string): { ref: ProxyRef; proxyPath: string; search: string } {
    const extracted = extractProxyPath(url);
    if (!extracted) throw notFound();
    if (!extracted.ok) throw new DomainError(extracted.status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST', extracted.message);
    const proxyPath = safeProxyPath(extracted.proxyPath);
    if (proxyPath === null) throw new DomainError('BAD_REQUEST', MESSAGES.proxy.badPath);
    return { ref: extracted.ref, proxyPath, search: extracted.search };
  }

  /**
   * Step 3: the original server's order of refusals: the whitelist, then the per-type rules, then
   * (dashgate's own) the literal-address policy. Addresses from DNS are checked when connecting.
   */
  #checkPolicy(handle: DataSourceHandle, method: string, proxyPath: string): void {
    const verdict = handle.verdict;
    if (verdict === MESSAGES.proxy.whitelist) throw forbidden(verdict);
    const principal = handle.caller.principal;
    const refused = checkProxyRequest(handle.target.type, method, proxyPath, principal.isServerAdmin ? 'Admin' : principal.orgRole);
    if (refused) throw forbidden(refused);
    if (verdict) throw forbidden(verdict);
  }
}
