import type { IncomingMessage } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Access } from './auth/access.ts';
import { AUTH_ERRORS, type DomainError } from './errors/domain.ts';
import type { QueryCaller } from './query/service.ts';
import type { Principal } from './auth/principal.ts';
import type { Runtime } from './runtime.ts';

/** Request ids: this process's random prefix, then a counter; unique across instances and restarts. */
const ID_PREFIX = Math.random().toString(36).slice(2, 10);
let lastId = 0;

/**
 * Everything one request carries, built once by the front door before dispatch and used alike by
 * REST, GraphQL (it is yoga's server context, and so every resolver's context) and the proxy.
 */
export class RequestContext {
  /** The whole runtime: the domain services and everything built over them. */
  readonly services: Runtime;
  /**
   * The change barrier's mark when the request arrived: caches answer it only once every change
   * committed before then, on any instance, has been heard.
   */
  readonly changeMark: number;
  /** Who is calling; null for anonymous requests. */
  principal: Principal | null = null;
  /**
   * The rule the route row already enforced for this request, so that a root field declaring the
   * same rule is not checked twice. Null for `/graphql`, whose fields each enforce their own.
   */
  authorizedAs: Access | null = null;
  /**
   * The request answers a REST row, which runs a document over the graph: its lists are read whole
   * (REST's answer is the original's whole list), and what the graph answers as a null (a
   * relationship the caller may not read) or as a user error the row answers as that error.
   */
  rest = false;
  /** The error behind the user error a mutation of a REST row reported, with its whole wire body. */
  userError: DomainError | null = null;
  /** The route template, for the access log and metrics (never the raw path). */
  route = 'unmatched';
  #id: string | null = null;
  #em: EntityManager | null = null;
  /** Made on first use: most requests never need a signal. */
  #left: AbortController | null = null;
  /** The incoming request, whose `Via` and client address calls to data sources carry (the loop guard, `X-Forwarded-For`). */
  readonly #req: IncomingMessage | undefined;
  #dataSourceCaller: QueryCaller | null = null;

  constructor(services: Runtime, req?: IncomingMessage) {
    this.services = services;
    this.changeMark = services.changes.mark();
    this.#req = req;
  }

  /**
   * The request's id, on every log line about it (the access log, a masked error): made on first
   * use, and never sent to the client, as the original sends none.
   */
  get requestId(): string {
    return (this.#id ??= `${ID_PREFIX}-${(++lastId).toString(36)}`);
  }

  /** This request's own EntityManager, forked on first use: calls served from caches skip the fork. */
  get em(): EntityManager {
    return (this.#em ??= this.services.orm.em.fork());
  }

  /** Fires when the client goes away before its answer is written: upstream calls stop with it. */
  get signal(): AbortSignal {
    return (this.#left ??= new AbortController()).signal;
  }

  /** The front door's word that the client left first. */
  clientLeft(): void {
    (this.#left ??= new AbortController()).abort();
  }

  /**
   * This request as the caller of data sources (queries, resources, health checks), as `asIn` (a
   * caller as it is in another org, reached through the graph) or the signed-in caller. The
   * caller's own is made once: the request's calls share its queue.
   */
  dataSourceCaller(asIn?: QueryCaller['principal']): QueryCaller {
    if (!asIn && this.#dataSourceCaller) return this.#dataSourceCaller;
    const caller: QueryCaller = {
      principal: asIn ?? this.caller, em: () => this.em, changeMark: this.changeMark, signal: this.signal,
      via: this.#req?.headers.via, ip: this.#req?.socket.remoteAddress ?? '', requestId: this.requestId,
    };
    if (!asIn) this.#dataSourceCaller = caller;
    return caller;
  }

  /** The signed-in caller; only fields and rows that admit anonymous callers may meet none (401). */
  get caller(): Principal {
    if (!this.principal) throw AUTH_ERRORS.unauthorized();
    return this.principal;
  }

  /** The org the request acts in: `X-Grafana-Org-Id` or the caller's current org. */
  get orgId(): number {
    return this.caller.orgId;
  }

  /** Resolves the Authorization header (and `X-Grafana-Org-Id`) to the principal; throws 401s. */
  async authenticate(req: IncomingMessage): Promise<Principal | null> {
    this.principal = await this.services.authenticator.authenticate(() => this.em, {
      authorization: req.headers.authorization,
      orgIdHeader: firstHeader(req.headers['x-grafana-org-id']),
      ip: req.socket.remoteAddress ?? '',
      forwardedFor: req.headers['x-forwarded-for'],
      changeMark: this.changeMark,
    });
    return this.principal;
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
