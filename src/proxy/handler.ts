import { Agent, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createProxyServer } from 'http-proxy-3';
import type { Principal } from '../auth/principal.ts';
import type { Logger } from '../logging/logger.ts';
import { DomainError } from '../services/errors.ts';
import type { Services } from '../services/index.ts';
import { VERSION } from '../version.ts';
import type { ProxyTarget, ProxyTargetCache } from './cache.ts';
import { createGuardedLookup, EGRESS_MESSAGES, hostWhitelisted, literalHostAllowed } from './policy/address.ts';
import { extractProxyPath, joinUpstreamPath, PROXY_ERRORS, safeProxyPath } from './policy/path.ts';
import { checkProxyRequest } from './policy/rules.ts';

export interface ProxyRequestInfo {
  principal: Principal | null;
  status: number;
  upstreamMs: number | null;
}

export type ProxyHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<ProxyRequestInfo>;

/** Headers that carry the caller's identity or the client's view of the request: never forwarded. */
const STRIPPED = ['authorization', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'origin', 'referer', 'x-grafana-user', 'x-ds-authorization'];
/** Hop-by-hop response headers; node re-frames the body itself. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'trailer', 'te']);

/**
 * `ANY /api/datasources/proxy/:id/*` and `/api/datasources/proxy/uid/:uid/*`: authenticate like
 * REST, find the data source in the caller's org (cached), apply the original server's rules,
 * then stream both ways through http-proxy-3 over keep-alive agents that check every address
 * they connect to against the egress policy.
 */
export function createProxyHandler(services: Services, cache: ProxyTargetCache, log: Logger): { handle: ProxyHandler; close(): void } {
  const settings = services.settings;
  const policy = { denyPrivate: settings.security.dataSourceProxyDenyPrivate };
  const lookup = createGuardedLookup(policy);
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: settings.dataproxy.keepAliveSeconds * 1000,
    maxFreeSockets: settings.dataproxy.maxIdleConnections,
    timeout: settings.dataproxy.idleConnTimeoutSeconds * 1000,
    lookup: lookup as never,
  };
  const httpAgent = new Agent(agentOptions);
  const httpsAgent = new HttpsAgent(agentOptions);
  const proxy = createProxyServer({});
  // Errors arrive through each call's callback; this only keeps an unexpected one from crashing us.
  proxy.on('error', (error) => log.warn({ err: error }, 'proxy error'));
  // One listener per event for all calls, dispatched by incoming request.
  const calls = new WeakMap<IncomingMessage, { onRequest(proxyReq: ClientRequest): void; onResponse(proxyRes: IncomingMessage): void }>();
  proxy.on('proxyReq', (proxyReq, req) => calls.get(req)?.onRequest(proxyReq));
  proxy.on('proxyRes', (proxyRes, req) => calls.get(req)?.onResponse(proxyRes));
  const userAgent = settings.dataproxy.userAgent || `dashgate/${VERSION}`;
  const loginCookie = settings.auth.loginCookieName;

  const handle: ProxyHandler = async (req, res, path) => {
    const info: ProxyRequestInfo = { principal: null, status: 0, upstreamMs: null };
    const reject = (status: number, message: string) => {
      info.status = status;
      sendError(res, status, message);
      return info;
    };
    const em = services.orm.em.fork();
    try {
      info.principal = await services.authenticator.authenticate(em, {
        authorization: req.headers.authorization,
        orgIdHeader: single(req.headers['x-grafana-org-id']),
        ip: req.socket.remoteAddress ?? '',
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      info.status = error.status;
      sendJson(res, error.status, error.body ?? { message: error.message });
      return info;
    }
    const principal = info.principal;
    if (!principal) return reject(401, 'Unauthorized');

    const extracted = extractProxyPath(path);
    if (!extracted) return reject(404, 'Not found');
    if (!extracted.ok) return reject(400, extracted.message);
    const proxyPath = safeProxyPath(extracted.proxyPath);
    if (proxyPath === null) return reject(400, PROXY_ERRORS.badPath);

    const target = await cache.get(em, principal.orgId, extracted.ref);
    if (!target) return reject(404, PROXY_ERRORS.notFound);
    if (!target.url) return reject(400, `Invalid data source URL: "${target.rawUrl}"`);
    const method = req.method ?? 'GET';
    const denied = checkProxyRequest(target.type, method, proxyPath);
    if (denied) return reject(403, denied);
    if (!hostWhitelisted(target.url.host, settings.security.dataSourceProxyWhitelist)) return reject(403, EGRESS_MESSAGES.whitelist);
    if (!literalHostAllowed(target.url.hostname, policy)) return reject(403, EGRESS_MESSAGES.denied);

    const query = (req.url ?? '').indexOf('?');
    const upstream = new URL(target.url.href);
    upstream.pathname = joinUpstreamPath(target.url.pathname, proxyPath);
    upstream.search = query < 0 ? '' : (req.url ?? '').slice(query);
    rewriteRequestHeaders(req.headers, target, principal, { userAgent, loginCookie, sendUserHeader: settings.dataproxy.sendUserHeader, ip: req.socket.remoteAddress ?? '' });
    if (settings.dataproxy.logging) {
      log.info({ component: 'dataproxy', method, uri: upstream.pathname, dsType: target.type, dsId: target.id, userId: principal.userId, orgId: principal.orgId }, 'proxying request');
    }

    const timeoutSeconds = Number(target.jsonData.timeout) > 0 ? Number(target.jsonData.timeout) : settings.dataproxy.timeoutSeconds;
    const started = performance.now();
    return new Promise<ProxyRequestInfo>((resolve) => {
      let timedOut = false;
      let outgoing: ClientRequest | null = null;
      const timer = setTimeout(() => {
        timedOut = true;
        outgoing?.destroy(new Error('upstream timeout'));
      }, timeoutSeconds * 1000);
      const finish = (status: number) => {
        clearTimeout(timer);
        info.status = status;
        info.upstreamMs = performance.now() - started;
        resolve(info);
      };
      const onResponse = (proxyRes: IncomingMessage) => {
        calls.delete(req);
        clearTimeout(timer);
        if (proxyRes.statusCode === 401) {
          // The data source's own 401 must not look like ours (clients would drop their session).
          proxyRes.resume();
          res.writeHead(400, { 'content-security-policy': 'sandbox' });
          res.end('Authentication to data source failed');
          finish(400);
          return;
        }
        res.writeHead(proxyRes.statusCode ?? 502, responseHeaders(proxyRes.headers));
        proxyRes.pipe(res);
        proxyRes.on('error', () => res.destroy());
        res.on('close', () => finish(proxyRes.statusCode ?? 502));
      };
      calls.set(req, { onRequest: (proxyReq) => (outgoing = proxyReq), onResponse });
      proxy.web(
        req,
        res,
        {
          target: upstream,
          ignorePath: true,
          changeOrigin: true,
          selfHandleResponse: true,
          agent: upstream.protocol === 'https:' ? httpsAgent : httpAgent,
        },
        (error) => {
          calls.delete(req);
          const code = (error as NodeJS.ErrnoException).code;
          if (res.headersSent) {
            res.destroy();
            finish(res.statusCode);
          } else if (code === 'EGRESS_DENIED') {
            sendError(res, 403, EGRESS_MESSAGES.denied);
            finish(403);
          } else {
            // As the original: an empty 504 on timeout, an empty 502 for any other upstream failure.
            const status = timedOut ? 504 : req.socket.destroyed || res.destroyed ? 499 : 502;
            if (!res.destroyed) {
              res.writeHead(status, { 'content-length': '0' });
              res.end();
            }
            finish(status);
          }
        },
      );
    });
  };

  return {
    handle,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
      proxy.close();
    },
  };
}

function rewriteRequestHeaders(
  headers: IncomingHttpHeaders,
  target: ProxyTarget,
  principal: Principal,
  options: { userAgent: string; loginCookie: string; sendUserHeader: boolean; ip: string },
): void {
  const dsAuthorization = single(headers['x-ds-authorization']);
  for (const name of STRIPPED) delete headers[name];
  const keep = Array.isArray(target.jsonData.keepCookies) ? new Set(target.jsonData.keepCookies.map(String)) : new Set<string>();
  const cookies = keptCookies(single(headers.cookie), keep, options.loginCookie);
  if (cookies) headers.cookie = cookies;
  else delete headers.cookie;
  const forwardedFor = single(headers['x-forwarded-for']);
  headers['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${options.ip}` : options.ip;
  if (dsAuthorization) headers.authorization = dsAuthorization;
  if (target.basicAuth) {
    headers.authorization = basicHeader(target.basicAuthUser, target.secrets.basicAuthPassword ?? '');
  } else if (target.user && (target.type === 'influxdb' || target.secrets.password !== undefined)) {
    headers.authorization = basicHeader(target.user, target.secrets.password ?? '');
  }
  for (let n = 1; ; n++) {
    const name = target.jsonData[`httpHeaderName${n}`];
    if (typeof name !== 'string' || !name) break;
    headers[name.toLowerCase()] = target.secrets[`httpHeaderValue${n}`] ?? '';
  }
  headers['user-agent'] = options.userAgent;
  if (options.sendUserHeader && principal.login) headers['x-grafana-user'] = principal.login;
}

function keptCookies(header: string | undefined, keep: Set<string>, loginCookie: string): string {
  if (!header || keep.size === 0) return '';
  return header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => {
      const name = part.slice(0, part.indexOf('=') < 0 ? part.length : part.indexOf('='));
      return name !== loginCookie && keep.has(name);
    })
    .sort()
    .join('; ');
}

function responseHeaders(upstream: IncomingHttpHeaders): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || name === 'set-cookie' || HOP_BY_HOP.has(name)) continue;
    headers[name] = value;
  }
  headers['content-security-policy'] = 'sandbox';
  return headers;
}

function basicHeader(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { message });
}
