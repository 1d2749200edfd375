import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ChangeListener } from './db/change-listener.ts';
import type { PgConnection } from './db/embedded.ts';
import { ProxyTargetCache } from './proxy/cache.ts';
import { createProxyHandler } from './proxy/handler.ts';
import type { LookupFunction } from './proxy/policy/address.ts';
import type { Settings } from './config/settings.ts';
import { createGraphQLHandler, graphQLPrincipalOf } from './graphql/yoga.ts';
import { getSchema } from './graphql/schema/index.ts';
import { createHealthCheck } from './http/health.ts';
import { createHttpServer } from './http/server.ts';
import { Metrics } from './metrics/index.ts';
import type { Logger } from './logging/logger.ts';
import { RestExecutor } from './rest/executor.ts';
import { createRestHandler } from './rest/handler.ts';
import { createServices, type Services } from './services/index.ts';

export interface App {
  services: Services;
  server: Server;
  listen(port: number, host?: string): Promise<AddressInfo>;
  close(): Promise<void>;
}

export interface AppOptions {
  /** Benchmarks compare with the verified-credential and principal caches off. */
  cacheCredentials?: boolean;
  /** The DNS resolver behind the proxy's guarded lookup (tests stand in a fake one). */
  proxyResolver?: LookupFunction;
}

/** Wires services, GraphQL, REST and HTTP together over an initialised ORM. */
export function createApp(settings: Settings, db: { orm: MikroORM; connection: PgConnection }, log: Logger, options: AppOptions = {}): App {
  const services = createServices(settings, db.orm, options);
  const executor = new RestExecutor(getSchema());
  const rest = createRestHandler(services, executor, (error) => log.error({ err: error }, 'unexpected error in REST route'));
  const yoga = createGraphQLHandler(services, log);
  const graphql = async (req: IncomingMessage, res: ServerResponse) => {
    await yoga(req, res);
    return { route: '/graphql', principal: graphQLPrincipalOf(req) };
  };
  const changes = new ChangeListener(db.connection, log);
  services.authenticator.followChanges(changes);
  const proxyTargets = new ProxyTargetCache(services.dataSources, changes, log);
  const metrics = new Metrics(db.orm);
  const proxy = createProxyHandler(services, proxyTargets, log, (type, status, seconds) => metrics.recordProxy(type, status, seconds), { resolve: options.proxyResolver });
  const server = createHttpServer(settings, {
    rest,
    graphql,
    proxy: proxy.handle,
    health: createHealthCheck(db.orm),
    metrics: settings.metrics.enabled ? { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() } : null,
    onRequestDone: (method, route, status, seconds) => metrics.recordRequest(method, route, status, seconds),
  }, log);

  return {
    services,
    server,
    async listen(port, host) {
      await changes.start();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host || undefined, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      proxy.close();
      await changes.close();
    },
  };
}
