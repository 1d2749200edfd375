import { Agent, validateHeaderValue, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createProxyServer } from 'http-proxy-3';
import { AUTH_ERRORS } from '../auth/authenticator.ts';
import { hasOrgRole, type Principal } from '../auth/principal.ts';
import { get as getSetting } from '../config/settings.ts';
import { lazyFork } from '../db/orm.ts';
import type { HandledRequest } from '../http/server.ts';
import type { Logger } from '../logging/logger.ts';
import { accessDenied, DomainError } from '../services/errors.ts';
import type { Services } from '../services/index.ts';
import { VERSION } from '../version.ts';
import { TargetSecretsError, type ProxyTargetCache } from './cache.ts';
import { checkLiteralHost, createGuardedLookup, EGRESS_MESSAGES, hostWhitelisted, type EgressPolicy, type LookupFunction } from './policy/address.ts';
import { extractProxyPath, joinUpstreamPath, PROXY_ERRORS, safeProxyPath } from './policy/path.ts';
import { checkProxyRequest } from './policy/rules.ts';
import type { ProxyTarget } from './target.ts';

export interface ProxyRequestInfo extends HandledRequest {
  status: number;
  /** Data source kind and time to the upstream's answer, when the call reached it. */
  upstream: { type: string; seconds: number } | null;
}

export type ProxyHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<ProxyRequestInfo>;

/** Called once per call that went upstream, with the status the client got. */
export type UpstreamObserver = (type: string, status: number, seconds: number) => void;

export interface ProxyHandlerOptions {
  /** The resolver behind the guarded lookup (tests stand in a fake DNS); `dns.lookup` by default. */
  resolve?: LookupFunction;
}

const ROUTE = '/api/datasources/proxy/*';

/**
 * Never forwarded: the caller's credentials, the client's view of the request, our own user
 * header, and hop-by-hop headers (node frames the upstream request itself; `expect` was already
 * answered by our server).
 */
const STRIPPED_REQUEST_HEADERS = new Set([
  'authorization', 'proxy-authorization', 'x-ds-authorization', 'cookie',
  'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'origin', 'referer', 'x-grafana-user',
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect',
]);
/** Hop-by-hop response headers, and the data source's cookies (they would land on our origin). */
const STRIPPED_RESPONSE_HEADERS = new Set(['set-cookie', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'trailer', 'te']);

/**
 * Paths and query strings in which `new URL()` changes nothing: no character it percent-encodes
 * (space, quotes, `<>{}` and backtick, `#`), no backslash (read as `/`), and no dot segment,
 * literal or encoded, to resolve.
 */
const URL_INERT = /^\/[\w\-.~!$&()*+,;=:@%/]*(?:\?[\w\-.~!$&()*+,;=:@%/?]*)?$/;
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/** Decisions about a data source version that depend only on it and the settings. */
interface Verdict {
  /** The 403 message, or null when the target may be called. */
  denied: string | null;
}

/**
 * `ANY /api/datasources/proxy/:id/*` and `/api/datasources/proxy/uid/:uid/*`: authenticate like
 * REST, find the data source in the caller's org (cached, prepared once per version), apply the
 * original server's rules, then stream both ways through http-proxy-3 over keep-alive agents that
 * check every address they connect to against the egress policy.
 */
export function createProxyHandler(
  services: Services,
  cache: ProxyTargetCache,
  log: Logger,
  onUpstream?: UpstreamObserver,
  options: ProxyHandlerOptions = {},
): { handle: ProxyHandler; close(): void } {
  const settings = services.settings;
  const dataproxy = settings.dataproxy;
  const policy: EgressPolicy = { denyPrivate: settings.security.dataSourceProxyDenyPrivate };
  const whitelist = settings.security.dataSourceProxyWhitelist;
  const maxConnsPerHost = Number(getSetting(settings, 'dataproxy', 'max_conns_per_host') ?? 0);
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: dataproxy.keepAliveSeconds * 1000,
    // `[dataproxy] max_conns_per_host`, read raw: the typed settings do not carry it (yet). Unset
    // or 0 means unlimited, as in the original.
    maxSockets: maxConnsPerHost > 0 ? maxConnsPerHost : Infinity,
    maxFreeSockets: dataproxy.maxIdleConnections > 0 ? dataproxy.maxIdleConnections : 256,
    // Applies to idle pooled sockets only: node's agent destroys a free socket on timeout.
    timeout: dataproxy.idleConnTimeoutSeconds * 1000,
    scheduling: 'lifo' as const,
    // Every address a connection is about to use is checked here, DNS answer by DNS answer.
    lookup: createGuardedLookup(policy, options.resolve) as never,
  };
  const httpAgent = new Agent(agentOptions);
  const httpsAgent = new HttpsAgent(agentOptions);
  const proxy = createProxyServer({});
  // Each call passes its own callback, so this only fires for errors http-proxy-3 cannot route.
  proxy.on('error', (error) => log.warn({ err: error, component: 'dataproxy' }, 'proxy error'));
  // Client resets are answered by the close handler of each call; the event only needs a listener.
  proxy.on('econnreset', () => {});
  // One listener per event for all calls, dispatched by incoming request.
  const calls = new WeakMap<IncomingMessage, Call>();
  proxy.on('proxyReq', (proxyReq, req) => calls.get(req)?.onRequest(proxyReq));
  proxy.on('proxyRes', (proxyRes, req) => calls.get(req)?.onResponse(proxyRes));

  const userAgent = usableUserAgent(dataproxy.userAgent, log);
  const responseLimit = dataproxy.responseLimit;
  const loginCookie = settings.auth.loginCookieName;
  const verdicts = new WeakMap<ProxyTarget, Verdict>();
  const verdictFor = (target: ProxyTarget): Verdict => {
    let verdict = verdicts.get(target);
    if (!verdict) {
      const upstream = target.upstream!;
      // The whitelist answers first, as in the original server; then the literal-address policy.
      const denied = !hostWhitelisted(upstream.host, whitelist, upstream.protocol)
        ? EGRESS_MESSAGES.whitelist
        : checkLiteralHost(upstream.hostname, policy).allowed
          ? null
          : EGRESS_MESSAGES.denied;
      verdict = { denied };
      verdicts.set(target, verdict);
    }
    return verdict;
  };

  const handle: ProxyHandler = async (req, res, path) => {
    const info: ProxyRequestInfo = { route: ROUTE, principal: null, status: 0, upstream: null };
    const fail = (status: number, body: unknown) => {
      info.status = status;
      sendJson(res, status, body);
      return info;
    };

    // Forked only if authentication or the data source lookup misses the caches.
    const em = lazyFork(services.orm);
    // One change barrier for both caches: whatever was committed before this call is seen.
    const changeMark = cache.mark();
    let principal: Principal;
    try {
      const found = await services.authenticator.authenticate(em, {
        authorization: req.headers.authorization,
        orgIdHeader: single(req.headers['x-grafana-org-id']),
        ip: req.socket.remoteAddress ?? '',
        changeMark,
      });
      if (!found) throw AUTH_ERRORS.unauthorized();
      info.principal = principal = found;
      // Every org role may query; a user without one in this org may not.
      if (!hasOrgRole(principal, 'Viewer')) throw accessDenied('datasources:query');
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return fail(error.status, error.body ?? { message: error.message });
    }

    const extracted = extractProxyPath(req.url ?? path);
    if (!extracted) return fail(404, { message: 'Not found' });
    if (!extracted.ok) return fail(extracted.status, { message: extracted.message });
    const proxyPath = safeProxyPath(extracted.proxyPath);
    if (proxyPath === null) return fail(400, { message: PROXY_ERRORS.badPath });

    let target: ProxyTarget | null;
    try {
      const cached = cache.get(em, principal.orgId, extracted.ref, changeMark);
      target = cached instanceof Promise ? await cached : cached;
    } catch (error) {
      if (!(error instanceof TargetSecretsError)) throw error;
      log.warn({ err: error, component: 'dataproxy' }, 'data source secrets unreadable');
      return fail(500, { message: 'Unable to load datasource meta data' });
    }
    if (!target) return fail(404, { message: PROXY_ERRORS.notFound });
    const upstream = target.upstream;
    if (!upstream) return fail(400, { message: `Invalid data source URL: "${target.rawUrl}"` });
    const verdict = verdictFor(target);
    if (verdict.denied === EGRESS_MESSAGES.whitelist) return fail(403, { message: verdict.denied });
    const method = req.method ?? 'GET';
    const refused = checkProxyRequest(target.type, method, proxyPath, principal.isServerAdmin ? 'Admin' : principal.orgRole);
    if (refused) return fail(403, { message: refused });
    if (verdict.denied) return fail(403, { message: verdict.denied });

    const chunked = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] !== undefined;
    // http-proxy-3 sends `req.headers`.
    req.headers = upstreamHeaders(req.headers, target, principal, { userAgent, loginCookie, sendUserHeader: dataproxy.sendUserHeader, ip: req.socket.remoteAddress ?? '', chunked });
    if (dataproxy.logging) {
      // The path only: query strings and bodies can carry credentials, headers certainly do.
      log.info({ component: 'dataproxy', method, uri: path, dsType: target.type, dsId: target.id, userId: principal.userId, orgId: principal.orgId }, 'proxying request');
    }

    // A client that left while we authenticated or looked up (res 'close' has already fired, so
    // neither our close handler nor http-proxy-3's would ever run): open nothing upstream for it.
    if (res.destroyed || req.destroyed) {
      info.status = 499;
      return info;
    }

    const timeoutMs = (target.timeoutSeconds ?? dataproxy.timeoutSeconds) * 1000;
    const started = performance.now();
    const type = target.type;
    return new Promise<ProxyRequestInfo>((done) => {
      let settled = false;
      let responded = false;
      let timedOut = false;
      let outgoing: ClientRequest | null = null;
      let timer: NodeJS.Timeout | undefined;
      const settle = (status: number) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        calls.delete(req);
        info.status = status;
        info.upstream = { type, seconds: (performance.now() - started) / 1000 };
        onUpstream?.(type, status, info.upstream.seconds);
        done(info);
      };
      const answerEmpty = (status: number) => {
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(status, { 'content-length': '0' });
          res.end();
        }
        settle(status);
      };
      // As Go's ResponseHeaderTimeout in the original: the wait for the response headers once the
      // request is fully written, so uploads and streamed answers may take as long as they take.
      // Connecting has its own limit (`dialTimeout`); the error callback then answers 504.
      const awaitHeaders = () => {
        if (settled || responded) return;
        timer = setTimeout(() => {
          timedOut = true;
          outgoing?.destroy();
        }, timeoutMs);
      };
      // A client that goes away ends the call; http-proxy-3 destroys the upstream request then.
      res.once('close', () => settle(res.writableFinished ? res.statusCode : 499));

      const call: Call = {
        onRequest(proxyReq) {
          outgoing = proxyReq;
          if (settled) proxyReq.destroy();
          else proxyReq.once('finish', awaitHeaders);
        },
        onResponse(proxyRes) {
          responded = true;
          clearTimeout(timer);
          if (settled || res.headersSent) {
            proxyRes.destroy();
            return;
          }
          proxyRes.on('error', () => res.destroy());
          if (proxyRes.statusCode === 401) {
            // The data source's 401 must not look like ours: clients would drop their own session.
            proxyRes.resume();
            res.writeHead(400, { 'content-security-policy': 'sandbox' });
            res.end('Authentication to data source failed');
            return;
          }
          res.writeHead(proxyRes.statusCode ?? 502, responseHeaders(proxyRes.headers));
          if (responseLimit > 0) {
            // `[dataproxy] response_limit`: the original reads at most that many bytes, then fails
            // the body; registered before the pipe, so the chunk over the limit is never written.
            let bytes = 0;
            proxyRes.on('data', (chunk: Buffer) => {
              bytes += chunk.length;
              if (bytes > responseLimit) {
                proxyRes.destroy();
                res.destroy();
              }
            });
          }
          proxyRes.pipe(res);
        },
      };
      calls.set(req, call);

      const onError = (error: Error) => {
        if (settled) return;
        const code = (error as NodeJS.ErrnoException).code;
        if (res.headersSent) {
          // Mid-body: the status line is gone, so all that is left is to cut the response short.
          res.destroy();
          return;
        }
        if (code === 'EGRESS_DENIED') {
          info.status = 403;
          sendJson(res, 403, { message: EGRESS_MESSAGES.denied });
          settle(403);
          return;
        }
        // As the original: an empty 504 on timeout, an empty 502 for any other upstream failure.
        const status = timedOut || code === 'ECONNECT_TIMEOUT' ? 504 : 502;
        log.debug({ component: 'dataproxy', dsId: target.id, code, status }, 'upstream call failed');
        answerEmpty(status);
      };

      // http-proxy-3's deleteLength pass sets `content-length: 0` on a DELETE or OPTIONS without one,
      // which would truncate a chunked body: it is shown another method while the passes run (they
      // run synchronously), and the upstream gets the real one through the `method` option.
      const hideMethod = chunked && (method === 'DELETE' || method === 'OPTIONS');
      if (hideMethod) req.method = 'POST';
      const upstreamPath = joinUpstreamPath(upstream.basePath, proxyPath);
      const incomingUrl = req.url;
      // http-proxy-3 parses the target's path and the incoming URL with `new URL()` on every call.
      // A path that parsing would leave as it is goes as the request URL, taken verbatim
      // (`toProxy`); any other is given as the target's path, for the parser to normalise.
      const upstreamUrl = upstreamPath + extracted.search;
      const verbatim = URL_INERT.test(upstreamUrl) && !DOT_SEGMENT.test(upstreamPath);
      if (verbatim) req.url = upstreamUrl;
      const origin = { protocol: upstream.protocol, host: upstream.host, hostname: upstream.hostname, port: upstream.port };
      try {
        proxy.web(
          req,
          res,
          {
            method,
            ...(verbatim
              ? { target: origin as never, prependPath: false, toProxy: true }
              : { target: { ...origin, pathname: upstreamPath, search: extracted.search } as never, ignorePath: true }),
            // The Host header is set with the rest of the request headers.
            changeOrigin: false,
            selfHandleResponse: true,
            connectTimeout: dataproxy.dialTimeoutSeconds * 1000,
            agent: upstream.protocol === 'https:' ? httpsAgent : httpAgent,
          },
          onError,
        );
      } catch (error) {
        onError(error as Error);
      } finally {
        // http-proxy-3 reads both synchronously, while it sets up the upstream request.
        if (hideMethod) req.method = method;
        req.url = incomingUrl;
      }
    });
  };

  return {
    handle,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
      proxy.removeAllListeners();
    },
  };
}

interface Call {
  onRequest(proxyReq: ClientRequest): void;
  onResponse(proxyRes: IncomingMessage): void;
}

/**
 * The headers the upstream gets: the caller's, minus everything stripped, plus ours. Built as a
 * new object rather than by deleting from the parsed one (which would slow every later access).
 */
function upstreamHeaders(
  incoming: IncomingHttpHeaders,
  target: ProxyTarget,
  principal: Principal,
  options: { userAgent: string; loginCookie: string; sendUserHeader: boolean; ip: string; chunked: boolean },
): IncomingHttpHeaders {
  // Headers the client listed in Connection are hop-by-hop too.
  const connection = single(incoming.connection);
  const listed = connection ? new Set(connection.split(',').map((name) => name.trim().toLowerCase())) : null;
  const headers: IncomingHttpHeaders = {};
  for (const name in incoming) {
    if (STRIPPED_REQUEST_HEADERS.has(name) || listed?.has(name)) continue;
    headers[name] = incoming[name];
  }

  const cookies = target.keepCookies.size > 0 ? keptCookies(incoming.cookie, target.keepCookies, options.loginCookie) : '';
  if (cookies) headers.cookie = cookies;
  const forwardedFor = single(incoming['x-forwarded-for']);
  headers['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${options.ip}` : options.ip;
  const dsAuthorization = single(incoming['x-ds-authorization']);
  if (dsAuthorization) headers.authorization = dsAuthorization;
  headers.host = target.upstream!.host;
  headers['user-agent'] = options.userAgent;
  if (options.sendUserHeader && principal.userId !== null && principal.login) headers['x-grafana-user'] = principal.login;
  // A body of unknown length must stay chunked upstream: node would send GET, DELETE or OPTIONS
  // bodies unframed otherwise.
  if (options.chunked) headers['transfer-encoding'] = 'chunked';
  // The data source's own credentials and custom headers win over anything the caller sent.
  for (const [name, value] of target.headers) headers[name] = value;
  return headers;
}

/** The cookies named in `keepCookies`, never the login cookie, sorted by name as the original does. */
function keptCookies(header: string | undefined, keep: ReadonlySet<string>, loginCookie: string): string {
  if (!header) return '';
  const kept: Array<[string, string]> = [];
  for (const part of header.split(';')) {
    const pair = part.trim();
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (name && name !== loginCookie && keep.has(name)) kept.push([name, pair]);
  }
  return kept
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, pair]) => pair)
    .join('; ');
}

function responseHeaders(upstream: IncomingHttpHeaders): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || STRIPPED_RESPONSE_HEADERS.has(name)) continue;
    headers[name] = value;
  }
  headers['content-security-policy'] = 'sandbox';
  return headers;
}

/** `[dataproxy] user_agent`, or `dashgate/<version>` when it is empty or not a valid header value. */
function usableUserAgent(configured: string, log: Logger): string {
  const fallback = `dashgate/${VERSION}`;
  if (!configured) return fallback;
  try {
    validateHeaderValue('user-agent', configured);
    return configured;
  } catch {
    log.warn({ component: 'dataproxy' }, '[dataproxy] user_agent is not a valid header value; using the default');
    return fallback;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
