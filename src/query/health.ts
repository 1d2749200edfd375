import type { Settings } from '../config/settings.ts';
import { DomainError, forbidden } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import type { DataSourceKey } from '../services/data-sources.ts';
import { UpstreamError, type DataSourceHandle, type Upstream, type UpstreamCaller } from '../upstream/index.ts';
import { callsNothing, healthCheckFor } from './kinds/health-checks.ts';
import type { DataSourceHealth } from './kinds/health.ts';
import type { KindContext } from './kinds/kind.ts';
import { kindContext } from './service.ts';

export type { DataSourceHealth, HealthStatus } from './kinds/health.ts';

/** Answer bodies beyond this are not read for a health verdict (nor is more than `[dataproxy] response_limit`). */
const BODY_LIMIT = 1 << 20;

/**
 * `GET /api/datasources/[uid/]:ref/health` and the graph's `health`: opens the data source through
 * the upstream layer as a query would (the caller's Query permission, the loop guard), refuses as
 * the original does before its plugin runs (the whitelist), then runs its kind's check over the
 * data source's calls: its URL, credentials and configured headers, the egress policy, its
 * timeout. A configuration no call can succeed with (unreadable secrets, an invalid URL, TLS
 * material that does not parse) is the verdict itself, naming what is wrong.
 */
export class DataSourceHealthChecks {
  readonly #upstream: Upstream;
  readonly #log: Logger;
  readonly #bodyLimit: number;
  readonly #limits: { pointsPerRefId: number; seriesPerRefId: number };

  constructor(settings: Settings, upstream: Upstream, log: Logger) {
    this.#upstream = upstream;
    this.#log = log;
    const limit = settings.dataproxy.responseLimit;
    this.#bodyLimit = limit > 0 ? Math.min(limit, BODY_LIMIT) : BODY_LIMIT;
    this.#limits = { pointsPerRefId: settings.query.maxPointsPerResponse, seriesPerRefId: settings.query.maxSeriesPerResponse };
  }

  async check(caller: UpstreamCaller, ref: DataSourceKey): Promise<DataSourceHealth> {
    const handle = await this.#upstream.open(caller, ref, 'query');
    const target = handle.target;
    const unusable = handle.unusable;
    // The original's words, and what to do about it.
    if (unusable?.kind === 'secrets') return { status: 'ERROR', message: MESSAGES.health.secretsUnreadable };
    const check = healthCheckFor(target.type);
    const ctx = this.#context(handle);
    if (check && callsNothing(check)) return check(ctx);
    const denied = handle.verdict;
    // The original refuses a data source outside the whitelist before its plugin runs, whatever its kind.
    if (denied === MESSAGES.proxy.whitelist) throw forbidden(MESSAGES.health.accessDenied);
    if (!check) return { status: 'UNKNOWN', message: MESSAGES.health.notImplemented };
    if (denied) throw forbidden(denied);
    if (unusable) return { status: 'ERROR', message: unusable.message };
    try {
      return await check(ctx);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      // A check must come back with a verdict; anything unforeseen is an ERROR, never a 500.
      this.#log.warn({ err: error, component: 'dataproxy', dsId: target.id }, 'data source health check failed unexpectedly');
      return { status: 'ERROR', message: MESSAGES.health.unexpected };
    }
  }

  /** The kind's context, its calls asking for JSON, reading at most `BODY_LIMIT`, and answered 403 as the proxy for an address the policy denies. */
  #context(handle: DataSourceHandle): KindContext {
    const ctx = kindContext(handle, handle.caller.signal ?? new AbortController().signal, this.#limits);
    ctx.call = async (probe) => {
      try {
        return await handle.call({ ...probe, headers: { accept: 'application/json', ...probe.headers }, bodyLimit: this.#bodyLimit });
      } catch (error) {
        if (error instanceof UpstreamError && error.kind === 'denied') throw forbidden(error.message);
        throw error;
      }
    };
    return ctx;
  }
}
