import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal.ts';
import type { Settings } from '../config/settings.ts';
import type { RequestContext } from '../context.ts';
import { accessDenied, DomainError, forbidden, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import { ACTION_NAMES, allows } from '../services/data-source-access.ts';
import { joinUpstreamPath, passedThrough, TargetSecretsError, upstreamHeaders, withVia, type DataSourceTarget, type Upstream } from '../upstream/index.ts';
import { extractProxyPath, safeProxyPath, type ProxyRef } from './policy/path.ts';
import { checkProxyRequest } from './policy/rules.ts';

/** Called once per call that went upstream, with the status the client got. */
export type UpstreamObserver = (type: string, status: number, seconds: number) => void;

/**
 * `ANY /api/datasources/proxy/:id/*` and `/api/datasources/proxy/uid/:uid/*`, for a caller the
 * front door already authenticated and authorized. Each call goes through named steps: resolve
 * the target, check the policy, build the upstream headers, stream, record. Refusals are thrown
 * as domain errors for the one renderer.
 */
export class DataSourceProxy {
  readonly #upstream: Upstream;
  readonly #log: Logger;
  readonly #onUpstream: UpstreamObserver;
  readonly #settings: Settings;

  constructor(settings: Settings, upstream: Upstream, log: Logger, onUpstream: UpstreamObserver) {
    this.#settings = settings;
    this.#upstream = upstream;
    this.#log = log;
    this.#onUpstream = onUpstream;
  }

  async handle(ctx: RequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A call this deployment already proxied (a data source leading back here) goes no further.
    if (passedThrough(req.headers.via, this.#settings.dataproxy.viaPseudonym)) throw new DomainError('LOOP_DETECTED', MESSAGES.proxy.loopDetected);
    const principal = ctx.caller;
    const { ref, proxyPath, search } = this.#parsePath(req.url ?? '/');
    const resolved = this.#resolveTarget(ctx, ref);
    const target = resolved instanceof Promise ? await resolved : resolved;
    // The data source's own permissions (Query at least), from the access cache: synchronous on a hit.
    const level = ctx.services.dataSourceAccess.level(() => ctx.em, principal, target.id, ctx.changeMark);
    if (!allows(level instanceof Promise ? await level : level, 'query')) throw accessDenied(ACTION_NAMES.query);
    const upstream = target.upstream;
    if (!upstream) throw new DomainError('BAD_REQUEST', MESSAGES.proxy.invalidUrl(target.rawUrl));
    const method = req.method ?? 'GET';
    this.#checkPolicy(target, method, proxyPath, principal);

    const chunked = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] !== undefined;
    // http-proxy-3 sends `req.headers`.
    req.headers = this.#upstreamHeaders(req, target, principal, chunked);
    if (this.#settings.dataproxy.logging) {
      // The path only: query strings and bodies can carry credentials, headers certainly do.
      this.#log.info({ component: 'dataproxy', method, uri: (req.url ?? '/').split('?', 1)[0], dsType: target.type, dsId: target.id, userId: principal.userId, orgId: principal.orgId }, 'proxying request');
    }
    // A client that left while we looked up (res 'close' has already fired, so no close handler
    // would ever run): open nothing upstream for it.
    if (res.destroyed || req.destroyed) return;

    const started = performance.now();
    const { status } = await this.#upstream.stream(req, res, {
      target,
      path: joinUpstreamPath(upstream.basePath, proxyPath),
      search,
      method,
      chunked,
      timeoutMs: this.#upstream.timeoutMs(target),
    });
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
   * Step 2: the data source in the caller's org, from the cache kept exact by the change barrier.
   * Synchronous on a hit (the usual case once the caller is authenticated), so no promise is made.
   */
  #resolveTarget(ctx: RequestContext, ref: ProxyRef): DataSourceTarget | Promise<DataSourceTarget> {
    let cached: ReturnType<Upstream['target']>;
    try {
      cached = this.#upstream.target(() => ctx.em, ctx.orgId, ref, ctx.changeMark);
    } catch (error) {
      throw this.#lookupFailure(error);
    }
    if (!(cached instanceof Promise)) return this.#found(cached);
    return cached.then((target) => this.#found(target), (error: unknown) => {
      throw this.#lookupFailure(error);
    });
  }

  #found(target: DataSourceTarget | null): DataSourceTarget {
    if (!target) throw notFound(MESSAGES.proxy.notFound);
    return target;
  }

  #lookupFailure(error: unknown): unknown {
    if (!(error instanceof TargetSecretsError)) return error;
    this.#log.warn({ err: error, component: 'dataproxy' }, 'data source secrets unreadable');
    return new DomainError('INTERNAL', MESSAGES.proxy.secretsUnreadable);
  }

  /**
   * Step 3: the original server's order of refusals: the whitelist, then the per-type rules, then
   * (dashgate's own) the literal-address policy. Addresses from DNS are checked when connecting.
   */
  #checkPolicy(target: DataSourceTarget, method: string, proxyPath: string, principal: Principal): void {
    const verdict = this.#upstream.verdict(target);
    if (verdict === MESSAGES.proxy.whitelist) throw forbidden(verdict);
    const refused = checkProxyRequest(target.type, method, proxyPath, principal.isServerAdmin ? 'Admin' : principal.orgRole);
    if (refused) throw forbidden(refused);
    if (verdict) throw forbidden(verdict);
  }

  /** Step 4: what the upstream is told. */
  #upstreamHeaders(req: IncomingMessage, target: DataSourceTarget, principal: Principal, chunked: boolean) {
    const dataproxy = this.#settings.dataproxy;
    const headers = upstreamHeaders(req.headers, target, principal, {
      userAgent: this.#upstream.userAgent,
      loginCookie: this.#settings.auth.loginCookieName,
      sendUserHeader: dataproxy.sendUserHeader,
      ip: req.socket.remoteAddress ?? '',
      chunked,
    });
    headers.via = withVia(headers.via, req.httpVersion, dataproxy.viaPseudonym);
    return headers;
  }
}
