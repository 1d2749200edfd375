import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Settings } from './config/settings.ts';
import { createGraphQLHandler } from './graphql/yoga.ts';
import { getSchema } from './graphql/schema/index.ts';
import { createHttpServer } from './http/server.ts';
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
  /** Benchmarks compare with the verified-credential cache off. */
  cacheCredentials?: boolean;
}

/** Wires services, GraphQL, REST and HTTP together over an initialised ORM. */
export function createApp(settings: Settings, orm: MikroORM, log: Logger, options: AppOptions = {}): App {
  const services = createServices(settings, orm, options);
  const executor = new RestExecutor(getSchema());
  const rest = createRestHandler(services, executor, (error) => log.error({ err: error }, 'unexpected error in REST route'));
  const graphql = createGraphQLHandler(services);
  const server = createHttpServer(settings, { rest, graphql }, log);

  return {
    services,
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host || undefined, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}
