import type { ChangeFeeds } from './live/feeds/index.ts';
import type { DataSourceHealthChecks } from './query/health.ts';
import type { LiveQueries } from './query/live/live-queries.ts';
import type { QueryService } from './query/service.ts';
import type { Services } from './services/index.ts';

/** Re-reads the data source provisioning files and applies them (`POST /api/admin/provisioning/datasources/reload`). */
export interface ProvisioningReloader {
  reloadDataSources(): Promise<ProvisioningCounts>;
}

/** How many data sources a provisioning reload changed, by what it did. */
export type ProvisioningCounts = {
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  /** Provisioned with `prune: true` and declared in no file any more. */
  pruned: number;
};

/**
 * Everything requests are served with: the domain services and what the app builds over them,
 * each constructed whole, with all it needs, before the first request (src/app.ts). Every request
 * context carries it as `services`; nothing in it is optional or filled in later.
 */
export interface Runtime extends Services {
  /** `POST /api/ds/query`, resources, and the graph's query fields. */
  readonly queries: QueryService;
  /** Data source health checks, each its kind's own. */
  readonly dataSourceHealth: DataSourceHealthChecks;
  /** The change feeds subscriptions read, fed by `changes`. */
  readonly live: ChangeFeeds;
  /** The `liveQuery` subscription's shared runs. */
  readonly liveQueries: LiveQueries;
  readonly provisioning: ProvisioningReloader;
}
