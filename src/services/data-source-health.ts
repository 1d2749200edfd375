import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { DataSourceCaller } from './data-source-permissions.ts';

/** The original's `backend.HealthStatus` names. */
export type HealthStatus = 'OK' | 'ERROR' | 'UNKNOWN';

/** What a data source health check found: 200 when `status` is OK, else 400, with this body. */
export interface DataSourceHealth {
  status: HealthStatus;
  message: string;
  /** Extra detail some kinds report (Graphite's `verboseMessage`); absent otherwise. */
  details?: Record<string, unknown>;
}

/**
 * Calls a data source the way its kind's own check does, through the data source proxy's
 * connections and policy. Implemented next to the proxy (src/proxy/health.ts) and wired by the
 * app, which owns those connections. Refusals that are not check results (no such data source,
 * an address the proxy may not call) are thrown as domain errors.
 */
export interface DataSourceHealthChecker {
  /** Loads the data source with `DataSourceService.getFor(..., 'query')`: the caller must be allowed to query it. */
  check(em: EntityManager, caller: DataSourceCaller, ref: { id: number } | { uid: string }): Promise<DataSourceHealth>;
}

/** Re-reads the data source provisioning files and applies them; wired by the app. */
export interface ProvisioningReloader {
  reloadDataSources(): Promise<void>;
}

const unavailable = () => new DomainError('UNAVAILABLE', MESSAGES.health.notServedHere);

/** Stand-ins for processes that serve no requests (the CLI, start-up provisioning). */
export const UNAVAILABLE_HEALTH: DataSourceHealthChecker = { check: () => Promise.reject(unavailable()) };
export const UNAVAILABLE_PROVISIONING: ProvisioningReloader = { reloadDataSources: () => Promise.reject(unavailable()) };
