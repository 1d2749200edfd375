import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ChangeListener } from './db/change-listener.ts';
import type { EmbeddedCluster, PgConnection } from './db/embedded.ts';
import { DataSourceProxy } from './proxy/handler.ts';
import { createHealthChecker } from './proxy/health.ts';
import { createProvisioningReloader } from './provisioning/reload.ts';
import { environmentSnapshot, type Environment } from './config/env.ts';
import type { Settings } from './config/settings.ts';
import { createGraphQLHandler } from './graphql/yoga.ts';
import { loadTrustedDocuments } from './graphql/trusted-documents.ts';
import { getSchema } from './graphql/schema/index.ts';
import { LiveChanges } from './live/hub.ts';
import { LiveQueries, type QueryRunner } from './query/live/hub.ts';
import { createFrontDoor } from './http/front-door.ts';
import { createHealthCheck } from './http/health.ts';
import { createHttpServer } from './http/server.ts';
import { Metrics } from './metrics/index.ts';
import type { Logger } from './logging/logger.ts';
import { createServices, type Services } from './services/index.ts';
import { Upstream, type LookupFunction } from './upstream/index.ts';
import { QueryService } from './query/service.ts';

export interface App {
  services: Services;
  server: Server;
  /** The one way out to data sources, for every caller that reaches one. */
  upstream: Upstream;
  /** Open subscription streams. */
  live: LiveChanges;
  /** Live queries' shared runs. */
  liveQueries: LiveQueries;
  /** `/api/ds/query` and the graph's queries (its budgets, the bytes of answers in flight). */
  queries: QueryService;
  listen(port: number, host?: string): Promise<AddressInfo>;
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
}

/** Wires services, GraphQL, REST, the proxy and HTTP together over an initialised ORM. */
export function createApp(settings: Settings, db: { orm: MikroORM; connection: PgConnection; embedded?: EmbeddedCluster | null }, log: Logger, options: AppOptions = {}): App {
  const changes = new ChangeListener(db.connection, log);
  const services = createServices(settings, db.orm, changes, options);
  const live = (services.live = new LiveChanges(db.orm, services.dataSources, changes, log, {
    maxStreams: settings.graphql.maxSubscriptions,
    maxStreamsPerPrincipal: settings.graphql.maxSubscriptionsPerPrincipal,
    queueSize: settings.graphql.subscriptionQueueSize,
  }, services.dataSourceAccess));
  const trustedDocuments = settings.graphql.trustedDocuments === 'off' ? undefined : loadTrustedDocuments(settings.graphql.trustedDocumentsPath, getSchema());
  const metrics = new Metrics(db.orm);
  // The one way out to data sources: the proxy, the health checks and every other caller share
  // its prepared targets, connection pools and egress policy.
  const upstream = new Upstream(settings, services.dataSources, changes, log, { resolve: options.proxyResolver });
  services.dataSourceHealth = createHealthChecker(settings, services.dataSources, upstream, log);
  services.provisioning = createProvisioningReloader(db.orm, services.dataSources, settings.paths.provisioning, options.environment ?? environmentSnapshot(), log);
  db.embedded?.onRestart(() => metrics.embeddedPostgresRestarts.inc());
  const proxy = new DataSourceProxy(settings, upstream, log, (type, status, seconds) => metrics.recordProxy(type, status, seconds));
  const queries = new QueryService(settings, services.dataSources, upstream, log);
  const liveQueries = new LiveQueries(live, log, {
    runner: options.queryRunner ?? queryRunner(queries, db.orm, changes),
    authorize: (caller, requested) => queries.authorize(
      { orgId: caller.orgId, principal: caller, em: () => db.orm.em.fork(), changeMark: changes.mark(), signal: new AbortController().signal },
      requested,
    ),
    minRefreshMs: settings.live.minRefreshMs,
    // The upstream calls time out first, with their own error; this only bounds a run that hangs anyway.
    runTimeoutMs: settings.dataproxy.timeoutSeconds * 1000 + 1000,
    onUpstreamCall: () => metrics.liveQueryUpstreamCalls.inc(),
    onSkippedTick: () => metrics.liveQuerySkippedTicks.inc(),
  });
  services.liveQueries = liveQueries;
  metrics.watchLiveQueries(() => ({ active: liveQueries.active, subscribers: liveQueries.subscribers }));
  metrics.watchAnswerMemory(() => ({ bytes: queries.memory.used, requests: queries.memory.holders }));
  const frontDoor = createFrontDoor(services, {
    graphql: createGraphQLHandler(settings, log, { trustedDocuments, directPath: options.graphqlDirectPath }),
    proxy,
    queries,
    health: createHealthCheck(db.orm),
    metrics: settings.metrics.enabled ? { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() } : null,
    onRequestDone: (method, route, status, seconds) => metrics.recordRequest(method, route, status, seconds),
  }, log);
  const server = createHttpServer(settings, frontDoor);

  return {
    services,
    server,
    upstream,
    live,
    liveQueries,
    queries,
    async listen(port, host) {
      await changes.start();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host || undefined, () => {
          server.off('error', reject);
          frontDoor.compileOperations();
          resolve(server.address() as AddressInfo);
        });
      });
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Subscriptions never finish by themselves: each ends now with a final event, and the
      // connection it leaves idle is closed as soon as it is.
      live.close();
      liveQueries.close();
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      await closed.finally(() => clearInterval(sweep));
      // Reads for subscribers still running finish before the pool can be closed.
      await live.settled();
      upstream.close();
      await changes.close();
    },
  };
}

/**
 * Live queries run through the query service as `POST /api/ds/query` does, in the caller's org;
 * their answers go out through the graph, so each refresh has the graph's budget.
 */
function queryRunner(queries: QueryService, orm: MikroORM, changes: ChangeListener): QueryRunner {
  return async (caller, request, signal) => {
    const outcome = await queries.query(
      { orgId: caller.orgId, principal: caller, em: () => orm.em.fork(), changeMark: changes.mark(), signal },
      { queries: request.queries, from: request.from, to: request.to },
      { pointsUsed: 0 },
    );
    // Built within the request's budgets; what the live query keeps of them is its own.
    outcome.release();
    return outcome.responses;
  };
}
