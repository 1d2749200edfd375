import type { MikroORM } from '@mikro-orm/postgresql';
import { COMMIT } from '../version.ts';

const CACHE_MS = 3_000;
const PROBE_TIMEOUT_MS = 2_000;

export interface Health {
  status: number;
  body: { database: 'ok' | 'failing'; version: string; commit: string };
}

/**
 * `GET /api/health`: a `select 1` probe, cached for a few seconds so that load balancers polling
 * many instances do not become a database load of their own, and bounded in time so it never hangs.
 * `version` is the original server's release this one speaks (`[server] compatible_version`, as
 * `buildInfo.version` says): clients gate features on it and parse it as `major.minor.patch`.
 * This server's own version is in `buildInfo.versionString` and the metrics' build info.
 */
export function createHealthCheck(orm: MikroORM, version: string): () => Promise<Health> {
  let cached: { at: number; ok: boolean } | null = null;
  let inFlight: Promise<boolean> | null = null;

  const probe = async (): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        orm.em.fork().execute('select 1').then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS))),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };

  return async () => {
    if (!cached || Date.now() - cached.at > CACHE_MS) {
      inFlight ??= probe().finally(() => (inFlight = null));
      const ok = await inFlight;
      cached = { at: Date.now(), ok };
    }
    return {
      status: cached.ok ? 200 : 503,
      body: { database: cached.ok ? 'ok' : 'failing', version, commit: COMMIT },
    };
  };
}
