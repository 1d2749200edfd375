import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorize } from '../auth/access.ts';
import { RequestContext } from '../context.ts';
import { badRequest, notFound, tooLarge } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { renderError } from '../errors/render.ts';
import type { GraphQLHandler } from '../graphql/handler.ts';
import { authorizeIn } from '../graphql/access.ts';
import { operationType, traceOperation } from '../graphql/tracing.ts';
import type { Logger } from '../logging/logger.ts';
import type { Span, Tracing } from '../tracing/index.ts';
import type { DataSourceProxy } from '../proxy/handler.ts';
import { compileRestFunction, runRestOperation, type RestOperation } from '../rest/executor.ts';
import { queryVariables, restVariables } from '../rest/variables.ts';
import type { Runtime } from '../runtime.ts';
import type { DataSourceKey } from '../services/data-sources.ts';
import { declaredLength, readBody, readGraphQLBody, readJsonBody, refuseBody } from './body.ts';
import type { Health } from './health.ts';
import { sendJson } from './respond.ts';
import { Router } from './router.ts';
import { restOperations, ROUTES, type Endpoint, type Route } from './routes.ts';
import { originForm, pathOf } from './request-target.ts';

/**
 * Validates and compiles the prepared operations, one per event-loop turn. Started once the server
 * listens, so start-up neither waits for them (some 100 ms of CPU) nor has its last round trips held
 * up by them; a request reaching a route first compiles it then. One that is invalid or fails to
 * compile is logged here and fails its route's requests through the renderer.
 */
function compileInIdleTurns(operations: RestOperation[], log: Logger): void {
  let next = 0;
  const step = () => {
    if (next >= operations.length) return;
    const op = operations[next++]!;
    try {
      compileRestFunction(op);
    } catch (error) {
      log.error({ err: error, operation: op.name }, 'REST operation cannot be compiled');
    }
    setImmediate(step).unref();
  };
  setImmediate(step).unref();
}

/** The original server's default headers, except on proxied responses (those are the upstream's). */
const DEFAULT_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-frame-options': 'deny',
  'x-content-type-options': 'nosniff',
  'x-xss-protection': '1; mode=block',
};

export interface FrontDoorHandlers {
  graphql: GraphQLHandler;
  proxy: DataSourceProxy;
  health(): Promise<Health>;
  /** Prometheus exposition, or null when `[metrics] enabled` is off. */
  metrics: { contentType: string; render(): Promise<string> } | null;
  /** Once per request, when its response is over (or the client left: status 499). */
  onRequestDone(method: string, route: string, status: number, seconds: number): void;
  /** Null when tracing is off. */
  tracing: Tracing | null;
}

type EndpointHandler = (ctx: RequestContext, req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * The one way in: every request is matched against the route table, gets its one context
 * (principal, org, lazily forked EntityManager, change mark), is authenticated and authorized from
 * its row, then dispatched. Every failure is answered here, through the one renderer.
 */
export interface FrontDoor {
  /** `expectsContinue`: the client sent `Expect: 100-continue` and waits for the go-ahead to send its body. */
  (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean): void;
  /** Compiles the REST operations not compiled yet, in the turns after this call: once listening. */
  compileOperations(): void;
}

export function createFrontDoor(services: Runtime, handlers: FrontDoorHandlers, log: Logger): FrontDoor {
  const router = new Router(ROUTES);
  // Every REST row's operation, prepared now: a row whose answer or rule cannot be read fails start-up.
  const operations = restOperations();
  const bodyLimit = services.settings.server.requestBodyLimitBytes;
  const accessLevel = services.settings.server.routerLogging ? 'info' : 'debug';
  const tracing = handlers.tracing;

  const endpoints: Record<Endpoint, EndpointHandler> = {
    async health(_ctx, _req, res) {
      const health = await handlers.health();
      // As the original writes it (Go's MarshalIndent): indented by two spaces, UTF-8 said.
      const text = JSON.stringify(health.body, null, 2);
      res.writeHead(health.status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    },
    async metrics(_ctx, _req, res) {
      if (!handlers.metrics) throw notFound();
      const text = await handlers.metrics.render();
      res.writeHead(200, { 'content-type': handlers.metrics.contentType });
      res.end(text);
    },
    // The REST contract is public, like the routes' shapes it describes. Its builder is loaded
    // when first asked for, as few requests ever need it.
    async openapi(_ctx, _req, res) {
      const document = (await import('./openapi.ts')).openApiJson();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(document) });
      res.end(document);
    },
    async graphql(ctx, req, res) {
      await handlers.graphql(ctx, req, res, await readGraphQLBody(req, bodyLimit));
    },
    proxy: (ctx, req, res) => handlers.proxy.handle(ctx, req, res),
    async 'ds-query'(ctx, req, res) {
      const body = parseObject(await readBody(req, bodyLimit));
      const answer = await services.queries.answer(ctx.dataSourceCaller(), body);
      answer.writeTo(res);
    },
    async 'ds-resource'(ctx, req, res) {
      const { ref, path, query } = resourceTarget(req.url ?? '/');
      const body = await readBody(req, bodyLimit);
      const answer = await services.queries.resource(ctx.dataSourceCaller(), ref, {
        method: req.method ?? 'GET', path, query, headers: req.headers, body,
      });
      const payload = typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
      res.writeHead(answer.status, { ...answer.headers, 'content-length': payload.length });
      res.end(payload);
    },
    async 'not-found'() {
      throw notFound();
    },
  };

  async function dispatch(route: Route, params: Record<string, string>, ctx: RequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (route.access.kind !== 'anonymous') await ctx.authenticate(req);
    const denied = authorize(ctx.principal, route.access);
    if (denied) throw denied;
    if (route.kind === 'endpoint') return endpoints[route.endpoint](ctx, req, res);
    const op = operations.get(route)!;
    const body = route.body ? await readJsonBody(req, bodyLimit) : undefined;
    let variables = restVariables(op, params, route, body, () => ctx.orgId);
    if (route.query) Object.assign(variables, queryVariables(op, req.url ?? '', route.query));
    if (route.variables) variables = route.variables(variables, ctx);
    if (op.accessIn) await authorizeIn(ctx, op.accessIn.access, variables[op.accessIn.variable]);
    const run = () => runRestOperation(op, ctx, variables, route.missing);
    const value = await (tracing ? traceOperation(tracing, operationType(op.document), op.name, run, false) : run());
    if (route.result) {
      const { status, body: answer } = route.result.shape(value);
      return sendJson(res, status, answer);
    }
    sendJson(res, route.status ?? 200, value);
  }

  function fail(route: Route | null, res: ServerResponse, error: unknown, method: string, requestId?: string): void {
    const rendered = renderError(error);
    if (rendered.unexpected !== undefined) log.error({ err: error, method, route: route?.path ?? 'unmatched', requestId }, 'request failed');
    else if (rendered.status === 503) log.warn({ err: error, method, route: route?.path ?? 'unmatched', requestId }, 'request failed: database unavailable');
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    const body = route?.kind === 'endpoint' && route.endpoint === 'graphql'
      ? { errors: [{ message: rendered.message, extensions: { code: rendered.code } }] }
      : rendered.body;
    // The client of a refused upload may still be sending it: the connection closes once it stops.
    if (rendered.status === 413) return refuseBody(res.req, res, rendered.status, body);
    sendJson(res, rendered.status, body, rendered.headers);
  }

  const frontDoor = (req: IncomingMessage, res: ServerResponse, expectsContinue = false) => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    // Every handler after this point, the proxy included, sees the origin form.
    req.url = originForm(req.url ?? '/');
    const match = router.match(method, pathOf(req.url));
    const route = match?.route ?? null;
    const ctx = new RequestContext(services, req);
    ctx.route = route && !(route.kind === 'endpoint' && route.endpoint === 'not-found') ? route.path : 'unmatched';
    const span = tracing && !(tracing.filterOperationalEndpoints && isOperational(route)) ? requestSpan(tracing, req, method, ctx.route) : null;

    // 'close' comes once per response, so a plain listener serves (`once` wraps it on every request).
    res.on('close', () => {
      if (!res.writableFinished) ctx.clientLeft();
      const seconds = (performance.now() - started) / 1000;
      const status = res.headersSent ? res.statusCode : 499;
      handlers.onRequestDone(method, ctx.route, status, seconds);
      if (span) endRequestSpan(tracing!, span, status);
      if (!log.isLevelEnabled(accessLevel)) return;
      log[accessLevel]({
        requestId: ctx.requestId,
        // Named here: this runs after the request's own work, outside its span.
        trace_id: span?.spanContext().traceId,
        span_id: span?.spanContext().spanId,
        method,
        route: ctx.route,
        status,
        durationMs: Math.round(seconds * 1e4) / 10,
        userId: ctx.principal?.userId ?? undefined,
        orgId: ctx.principal?.orgId ?? undefined,
      }, 'request');
    });
    if (!(route?.kind === 'endpoint' && route.endpoint === 'proxy')) {
      for (const name in DEFAULT_HEADERS) res.setHeader(name, DEFAULT_HEADERS[name]!);
    }
    if (!match) return fail(null, res, notFound(), method);
    // A body declared past the limit is refused before anything else is done or read, as nginx
    // refuses one past client_max_body_size: no lookup is spent on a request that cannot be served.
    if ((declaredLength(req) ?? 0) > bodyLimit && readsBody(match.route, method)) return fail(match.route, res, tooLarge(), method);
    // The go-ahead only for a body that may be wanted (node:http would send it for any).
    if (expectsContinue) res.writeContinue();
    const failed = (error: unknown) => fail(match.route, res, error, method, ctx.requestId);
    if (span) tracing!.within(span, () => dispatch(match.route, match.params, ctx, req, res).catch(failed));
    else dispatch(match.route, match.params, ctx, req, res).catch(failed);
  };
  return Object.assign(frontDoor, { compileOperations: () => compileInIdleTurns([...operations.values()], log) });
}

/** `/api/health` and `/metrics`, which `[tracing.opentelemetry] filter_operational_endpoints` leaves untraced. */
function isOperational(route: Route | null): boolean {
  return route?.kind === 'endpoint' && (route.endpoint === 'health' || route.endpoint === 'metrics');
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/**
 * The request's span, continuing the client's trace: named by its method and route template (never
 * the path, whose ids, names and query string may be anything, credentials included).
 */
function requestSpan(tracing: Tracing, req: IncomingMessage, method: string, route: string): Span {
  const known = KNOWN_METHODS.has(method);
  const matched = route !== 'unmatched';
  return tracing.serverSpan(matched ? `${known ? method : 'HTTP'} ${route}` : known ? method : 'HTTP', req.headers, {
    'http.request.method': known ? method : '_OTHER',
    'http.route': matched ? route : undefined,
    'url.scheme': (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
    'network.protocol.version': req.httpVersion,
  });
}

/** 5xx answers (and none at all) mark a request's span failed; a client's 4xx is not the server's failure. */
function endRequestSpan(tracing: Tracing, span: Span, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) tracing.failed(span, String(status));
  span.end();
}

/** Whether the route reads its request body into memory, under `[server] request_body_limit_bytes` (the proxy streams it). */
function readsBody(route: Route, method: string): boolean {
  if (route.kind === 'rest') return route.body !== undefined;
  switch (route.endpoint) {
    case 'graphql': return method !== 'GET' && method !== 'HEAD';
    case 'ds-query':
    case 'ds-resource': return true;
    default: return false;
  }
}

/** A JSON object body, whatever its declared type (the original decodes any); 400 "bad request data" otherwise. */
function parseObject(raw: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw badRequest();
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest();
  return body as Record<string, unknown>;
}

/** `/api/datasources/[uid/]:ref/resources/<path>?<query>`: the data source and the raw rest of the path. */
export function resourceTarget(url: string): { ref: DataSourceKey; path: string; query: string } {
  const q = url.indexOf('?');
  const query = q < 0 ? '' : url.slice(q + 1);
  const parts = (q < 0 ? url : url.slice(0, q)).split('/');
  // ['', 'api', 'datasources', ('uid', <uid>) | <id>, 'resources', ...rest]
  const byUid = parts[3] === 'uid';
  const at = byUid ? 6 : 5;
  const path = parts.slice(at).join('/');
  let raw: string;
  try {
    raw = decodeURIComponent(parts[byUid ? 4 : 3] ?? '');
  } catch {
    throw badRequest(byUid ? MESSAGES.proxy.uidInvalid : MESSAGES.http.idInvalid);
  }
  if (byUid) return { ref: { uid: raw }, path, query };
  if (!/^-?\d+$/.test(raw)) throw badRequest(MESSAGES.http.idInvalid);
  return { ref: { id: Number(raw) }, path, query };
}
