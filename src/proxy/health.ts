import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import type { Logger } from '../logging/logger.ts';
import type { DataSourceHealth, DataSourceHealthChecker } from '../services/data-source-health.ts';
import type { DataSourceService } from '../services/data-sources.ts';
import type { DataSourceCaller } from '../services/data-source-permissions.ts';
import { DomainError, forbidden } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { UpstreamError, type DataSourceTarget, type Upstream } from '../upstream/index.ts';
import { checkFor, callsNothing, ProbeError, type ProbeContext, type ProbeRequest, type ProbeResponse } from './health-checks.ts';

/** The address resolved to one the proxy may not call: answered as the proxy answers it. */
class ProbeDenied extends Error {}

/** Answer bodies beyond this are not read for a health verdict (nor is more than `[dataproxy] response_limit`). */
const BODY_LIMIT = 1 << 20;

/**
 * `GET /api/datasources/[uid/]:ref/health`: loads the data source, prepares it exactly as the proxy
 * does (its URL, its credentials and custom headers), applies the proxy's whitelist and address
 * verdicts, then runs its kind's check over the proxy's connections (whose lookup refuses denied
 * addresses as they resolve) within the data source's timeout or `[dataproxy] timeout`.
 */
export function createHealthChecker(settings: Settings, dataSources: DataSourceService, upstream: Upstream, log: Logger): DataSourceHealthChecker {
  const dataproxy = settings.dataproxy;
  const bodyLimit = dataproxy.responseLimit > 0 ? Math.min(dataproxy.responseLimit, BODY_LIMIT) : BODY_LIMIT;

  return {
    async check(em: EntityManager, caller: DataSourceCaller, ref: { id: number } | { uid: string }): Promise<DataSourceHealth> {
      const row = await dataSources.getFor(em, caller, ref, 'query');
      let secrets: Record<string, string>;
      try {
        secrets = dataSources.decryptSecrets(row);
      } catch {
        log.warn({ component: 'dataproxy', dsId: row.id }, 'data source secrets unreadable');
        return { status: 'ERROR', message: MESSAGES.health.secretsUnreadable };
      }
      const target = upstream.prepare(row, secrets);
      const check = checkFor(row.type);
      if (check && callsNothing(check)) return check({ jsonData: {}, database: '', secrets: {}, send: () => Promise.reject(new Error('no call')) });
      const denied = upstream.verdict(target);
      // The original refuses a data source outside the whitelist before its plugin runs, whatever its kind.
      if (denied === MESSAGES.proxy.whitelist) throw forbidden(MESSAGES.health.accessDenied);
      if (!check) return { status: 'UNKNOWN', message: MESSAGES.health.notImplemented };
      if (!target.upstream) return { status: 'ERROR', message: MESSAGES.proxy.invalidUrl(target.rawUrl) };
      if (denied) throw forbidden(denied);

      const context: ProbeContext = {
        jsonData: row.jsonData ?? {},
        database: row.database,
        secrets,
        send: (probe) => send(upstream, target, probe, bodyLimit),
      };
      try {
        return await check(context);
      } catch (error) {
        if (error instanceof ProbeDenied) throw forbidden(MESSAGES.proxy.addressDenied);
        if (error instanceof DomainError) throw error;
        // A check must come back with a verdict; anything unforeseen is an ERROR, never a 500.
        log.warn({ err: error, component: 'dataproxy', dsId: row.id }, 'data source health check failed unexpectedly');
        return { status: 'ERROR', message: MESSAGES.health.unexpected };
      }
    },
  };
}

/** One probe through the upstream layer, with its answer read as text; rejects with `ProbeError` or `ProbeDenied`. */
async function send(upstream: Upstream, target: DataSourceTarget, probe: ProbeRequest, bodyLimit: number): Promise<ProbeResponse> {
  try {
    const res = await upstream.request(target, { ...probe, headers: { accept: 'application/json', ...probe.headers }, bodyLimit });
    return { status: res.status, statusLine: `${res.status} ${res.statusText}`.trim(), headers: res.headers, body: res.body.toString('utf8') };
  } catch (error) {
    if (error instanceof UpstreamError) throw error.kind === 'denied' ? new ProbeDenied() : new ProbeError(error.message);
    throw error;
  }
}
