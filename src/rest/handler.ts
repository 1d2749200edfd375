import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLInt, getNullableType } from 'graphql';
import type { Principal } from '../auth/principal.ts';
import { readBody, isJsonContentType } from '../http/body.ts';
import { sendJson } from '../http/respond.ts';
import type { HandledRequest } from '../http/server.ts';
import type { Services } from '../services/index.ts';
import { DomainError } from '../services/errors.ts';
import { databaseError } from '../db/errors.ts';
import { AUTH_ERRORS } from '../auth/authenticator.ts';
import { REST_ERRORS, reply, type RestReply } from './errors.ts';
import { inputFromBody, RestExecutor, type CompiledOperation } from './executor.ts';
import { Router } from './router.ts';
import { ROUTES, type RouteSpec } from './routes.ts';

export type RestHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<HandledRequest>;

/** Serves `/api/*` from the route table: authenticate, match, map variables, execute, reply. */
export function createRestHandler(services: Services, executor: RestExecutor, onError: (error: unknown) => void): RestHandler {
  const router = new Router(ROUTES);
  const operations = new Map(ROUTES.map((r) => [r, executor.operation(r.operation)]));
  const bodyLimit = services.settings.server.requestBodyLimitBytes;

  return async (req, res, path) => {
    const match = router.match(req.method ?? 'GET', path);
    const em = services.orm.em.fork();
    let principal: Principal | null = null;
    let result: RestReply;
    try {
      principal = await services.authenticator.authenticate(em, {
        authorization: req.headers.authorization,
        orgIdHeader: first(req.headers['x-grafana-org-id']),
        ip: req.socket.remoteAddress ?? '',
      });
      if (!principal) throw AUTH_ERRORS.unauthorized();
      if (!match) result = REST_ERRORS.notFound();
      else if (match.route.access === 'server-admin' && (principal.method !== 'basic' || !principal.isServerAdmin)) {
        result = reply(403, 'Permission denied');
      } else {
        const op = operations.get(match.route)!;
        const variables = await variablesFor(req, match.route, op, match.params, bodyLimit);
        result = 'status' in variables ? variables : await executor.run(op, { em, principal, services }, variables.values, match.route.status);
      }
    } catch (error) {
      const known = error instanceof DomainError ? error : databaseError(error);
      result = known ? { status: known.status, body: known.body ?? { message: known.message } } : { ...REST_ERRORS.internal(), cause: error };
    }
    if (result.cause !== undefined) onError(result.cause);
    // Do not leave an unread upload on a keep-alive connection after refusing it.
    const headers: Record<string, string> = result.status === 413 ? { connection: 'close' } : {};
    sendJson(res, result.status, result.body, headers);
    return { route: match?.route.path ?? 'unmatched', principal };
  };
}

async function variablesFor(
  req: IncomingMessage,
  route: RouteSpec,
  op: CompiledOperation,
  params: Record<string, string>,
  bodyLimit: number,
): Promise<{ values: Record<string, unknown> } | RestReply> {
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(params)) {
    const variable = op.variables.get(name);
    if (!variable) continue;
    if (getNullableType(variable.type) === GraphQLInt) {
      if (!/^-?\d{1,10}$/.test(raw) || Math.abs(Number(raw)) > 2 ** 31 - 1) return REST_ERRORS.idInvalid();
      values[name] = Number(raw);
    } else if (raw.includes('\0')) return REST_ERRORS.badRequest();
    else values[name] = raw;
  }
  if (!route.body) return { values };

  const raw = await readBody(req, bodyLimit);
  let body: unknown = {};
  if (raw.length > 0) {
    if (!isJsonContentType(req.headers['content-type'])) return REST_ERRORS.badRequest();
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return REST_ERRORS.badRequest();
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return REST_ERRORS.badRequest();
  // PostgreSQL can store no NUL character, in text or in jsonb: refuse it here rather than fail there.
  if (containsNul(body)) return REST_ERRORS.badRequest();
  const fields = body as Record<string, unknown>;
  if (route.body === 'input') {
    const input = op.variables.get('input');
    values.input = input?.fields ? inputFromBody(input.fields, fields) : fields;
  } else {
    const declared = new Map([...op.variables.keys()].filter((k) => !(k in params)).map((k) => [k.toLowerCase(), k]));
    Object.assign(values, inputFromBody(declared, fields));
  }
  return { values };
}

/** Whether any key or string in a parsed JSON value holds U+0000 (iterative: nesting may be deep). */
function containsNul(value: unknown): boolean {
  const pending = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (next.includes('\0')) return true;
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
    } else if (next !== null && typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        if (key.includes('\0')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
