import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ChangeListener } from './db/change-listener.ts';
import type { EmbeddedCluster, PgConnection } from './db/embedded.ts';
import { DataSourceProxy } from './proxy/handler.ts';
import { createProvisioningReloader } from './provisioning/reload.ts';
import { environmentSnapshot, type Environment } from './config/env.ts';
import type { Settings } from './config/settings.ts';
import { createGraphQLHandler } from './graphql/yoga.ts';
import { loadTrustedDocuments } from './graphql/trusted-documents.ts';
import { getPublicSchema } from './graphql/schema/index.ts';
import { createChangeFeeds } from './live/feeds/index.ts';
import { LiveStreams } from './live/streams.ts';
import { LiveQueries, type QueryRunner } from './query/live/live-queries.ts';
import { LiveQuerySharing } from './query/live/sharing.ts';
import { createFrontDoor } from './http/front-door.ts';
import { restOperations } from './http/routes.ts';
import { createHealthCheck } from './http/health.ts';
import { closeConnectionsAfterResponses, createHttpServer } from './http/server.ts';
import { Metrics } from './metrics/index.ts';
import type { Logger } from './logging/logger.ts';
import { traceStatements } from './db/tracing.ts';
import { withTraceIds, type Tracing } from './tracing/index.ts';
import type { Runtime } from './runtime.ts';
import { createServices } from './services/index.ts';
import { Upstream, type LookupFunction } from './upstream/index.ts';
import { DataSourceHealthChecks } from './query/health.ts';
import { QueryService, type QueryCaller } from './query/service.ts';
import type { Principal } from './auth/principal.ts';

export interface App {
  /** The whole runtime, as every request context carries it. */
  services: Runtime;
  server: Server;
  /** The one way out to data sources, for every caller that reaches one. */
  upstream: Upstream;
  /** Open subscription streams. */
  live: LiveStreams;
  /** Live queries' shared runs. */
  liveQueries: LiveQueries;
  /** The traces it makes; null when tracing is off. */
  tracing: Tracing | null;
  /** `/api/ds/query` and the graph's queries (its budgets, the bytes of answers in flight). */
  queries: QueryService;
  listen(port: number, host?: string): Promise<AddressInfo>;
  /**
   * The first step of stopping behind a load balancer: `/api/health` answers 503 and every response
   * closes its connection, while requests are still served. `close` then stops taking connections.
   */
  drain(): void;
  close(): Promise<void>;
}

export interface AppOptions {
  /** Benchmarks compare with the verified-credential and principal caches off. */
  cacheCredentials?: boolean;
  /** The DNS resolver behind the proxy's guarded lookup (tests stand in a fake one). */
  proxyResolver?: LookupFunction;
  /** What `$VAR` in provisioning files expands to on reload; the process environment by default. */
  environment?: Environment;
  /** Off: every `/graphql` request goes through yoga's HTTP pipeline (tests compare the two paths). */
  graphqlDirectPath?: boolean;
  /** What live queries run each tick: the `/api/ds/query` service unless a test stands in its own. */
  queryRunner?: QueryRunner;
  /**
   * Tracing as started from `[tracing.opentelemetry]` (`startTracing`), which the app then owns and
   * closes; absent or null: off.
   */
  tracing?: Tracing | null;
}

/**
 * Builds what the app is made of that needs no database: the schema, the public schema and the REST
 * rows (some 90 ms of CPU), once; `createApp` finds them built. Start-up calls it while the
 * database is being reached, so that its round trips and this overlap: in two parts, with a turn
 * of the event loop between them for the answers that came meanwhile. Rejects with what failed
 * (createApp then meets the same error).
 */
export async function prepareApp(): Promise<void> {
  getPublicSchema();
  await new Promise((resolve) => setImmediate(resolve));
  restOperations();
}

/**
 * Builds the whole runtime over an initialised ORM, each part with everything it needs, in the
 * order they depend on one another, before the first request: the domain services, the one way
 * out to data sources, the query API and health checks over it, the live streams and live
 * queries, provisioning; then GraphQL, REST, the proxy and HTTP over them.
 */
export function createApp(settings: Settings, db: { orm: MikroORM; connection: PgConnection; embedded?: EmbeddedCluster | null }, baseLog: Logger, options: AppOptions = {}): App {
  const tracing = options.tracing ?? null;
  // Traced, every line written while serving a request names its trace.
  const log = withTraceIds(baseLog, tracing);
  const sqlTraced = tracing ? traceStatements(db.orm, tracing).catch((error: unknown) => log.warn({ err: error, component: 'tracing' }, 'SQL statements cannot be traced')) : null;
  const changes = new ChangeListener(db.connection, log);
  const domain = createServices(settings, db.orm, changes, options);
  // The one way out to data sources: the proxy, the health checks, queries, resources and live
  // queries all open data sources through it, sharing its prepared targets, pools and policy.
  const upstream = new Upstream(settings, domain.dataSources, domain.dataSourceAccess, changes, log, { resolve: options.proxyResolver, tracing });
  const queries = new QueryService(settings, upstream, log);
  const live = new LiveStreams(db.orm, changes, log, {
    maxStreams: settings.graphql.maxSubscriptions,
    maxStreamsPerPrincipal: settings.graphql.maxSubscriptionsPerPrincipal,
    queueSize: settings.graphql.subscriptionQueueSize,
  });
  const metrics = new Metrics(db.orm);
  // Live queries watched through several instances are fetched by one of them (a PostgreSQL lease).
  const liveQueryPeers = settings.live.maxSharedAnswerBytes > 0
    ? new LiveQuerySharing(db.orm, changes, log, { maxAnswerBytes: settings.live.maxSharedAnswerBytes })
    : undefined;
  const liveQueries = new LiveQueries(live, log, {
    runner: options.queryRunner ?? queryRunner(queries, db.orm, changes, tracing),
    // Ticks run on timers started by a subscriber's request, whose trace they are not part of.
    authorize: (caller, requested) => {
      const check = () => queries.authorize(tickCaller(caller, db.orm, changes, new AbortController().signal), requested);
      return tracing ? tracing.outside(check) : check();
    },
    minRefreshMs: settings.live.minRefreshMs,
    maxUpstreamCallsPerSecond: settings.live.maxUpstreamCallsPerSecond,
    // The upstream calls time out first, with their own error; this only bounds a run that hangs anyway.
    runTimeoutMs: settings.dataproxy.timeoutSeconds * 1000 + 1000,
    onUpstreamCall: () => metrics.liveQueryUpstreamCalls.inc(),
    onSkippedTick: () => metrics.liveQuerySkippedTicks.inc(),
    peers: liveQueryPeers,
  });
  const services: Runtime = {
    ...domain,
    queries,
    dataSourceHealth: new DataSourceHealthChecks(settings, upstream, log),
    live: createChangeFeeds(live, db.orm, changes, log, domain.dataSources, domain.dataSourceAccess),
    liveQueries,
    provisioning: createProvisioningReloader(db.orm, domain.dataSources, settings.paths.provisioning, options.environment ?? environmentSnapshot(), log),
  };
  const trustedDocuments = settings.graphql.trustedDocuments === 'off' ? undefined : loadTrustedDocuments(settings.graphql.trustedDocumentsPath, getPublicSchema());
  db.embedded?.onRestart(() => metrics.embeddedPostgresRestarts.inc());
  const proxy = new DataSourceProxy(settings, upstream, log, (type, status, seconds) => metrics.recordProxy(type, status, seconds));
  metrics.watchLiveQueries(() => ({ active: liveQueries.active, subscribers: liveQueries.subscribers }));
  // Set by drain(), read by the health check.
  let draining = false;
  metrics.watchAnswerMemory(() => ({ bytes: queries.memory.used, requests: queries.memory.holders }));
  const frontDoor = createFrontDoor(services, {
    graphql: createGraphQLHandler(settings, log, { trustedDocuments, directPath: options.graphqlDirectPath, tracing }),
    proxy,
    health: createHealthCheck(db.orm, settings.server.compatibleVersion, () => draining),
    metrics: settings.metrics.enabled ? { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() } : null,
    onRequestDone: (method, route, status, seconds) => metrics.recordRequest(method, route, status, seconds),
    tracing,
  }, log);
  const server = createHttpServer(settings, frontDoor);

  return {
    services,
    server,
    upstream,
    live,
    liveQueries,
    tracing,
    queries,
    async listen(port, host) {
      await changes.start();
      await sqlTraced;
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host || undefined, () => {
          server.off('error', reject);
          frontDoor.compileOperations();
          resolve(server.address() as AddressInfo);
        });
      });
    },
    drain() {
      if (draining) return;
      draining = true;
      closeConnectionsAfterResponses(server);
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Subscriptions never finish by themselves: each ends now with a final event, and the
      // connection it leaves idle is closed as soon as it is.
      live.close();
      // Hands this instance's live query leases to the others (awaited before the pool closes).
      const liveQueriesClosed = liveQueries.close();
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      await closed.finally(() => clearInterval(sweep));
      // Reads for subscribers still running finish before the pool can be closed.
      await live.settled();
      await liveQueriesClosed;
      upstream.close();
      await changes.close();
      // The spans of the last requests go out before the process ends.
      await tracing?.close().catch((error: unknown) => log.warn({ err: error, component: 'tracing' }, 'spans not sent at shutdown'));
    },
  };
}

/** A live query's tick as the caller of data sources: no request carries it (no Via, no client address). */
function tickCaller(principal: Principal, orm: MikroORM, changes: ChangeListener, signal: AbortSignal): QueryCaller {
  return { principal, em: () => orm.em.fork(), changeMark: changes.mark(), signal };
}

/**
 * Live queries run through the query service as `POST /api/ds/query` does, in the caller's org;
 * their answers go out through the graph, so each refresh has the graph's budget. Traced, each
 * refresh is a trace of its own (shared by every viewer, so in no viewer's request).
 */
function queryRunner(queries: QueryService, orm: MikroORM, changes: ChangeListener, tracing: Tracing | null): QueryRunner {
  const run: QueryRunner = async (caller, request, signal) => {
    const outcome = await queries.frames(tickCaller(caller, orm, changes, signal), { queries: request.queries, from: request.from, to: request.to }, { pointsUsed: 0 });
    return outcome.responses;
  };
  if (!tracing) return run;
  return async (caller, request, signal) => {
    const span = tracing.rootSpan('live query refresh', 'internal', { org_id: caller.orgId, queries: request.queries.length });
    try {
      return await tracing.within(span, () => run(caller, request, signal));
    } catch (error) {
      tracing.failed(span, 'error');
      throw error;
    } finally {
      span.end();
    }
  };
}
