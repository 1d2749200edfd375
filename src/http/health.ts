import type { MikroORM } from '@mikro-orm/postgresql';
import { COMMIT, VERSION } from '../version.ts';

const CACHE_MS = 3_000;
const PROBE_TIMEOUT_MS = 2_000;

export interface Health {
  status: number;
  body: { database: 'ok' | 'failing'; version: string; commit: string };
}

/**
 * `GET /api/health`: a `select 1` probe, cached for a few seconds so that load balancers polling
 * many instances do not become a database load of their own, and bounded in time so it never hangs.
 */
export function createHealthCheck(orm: MikroORM): () => Promise<Health> {
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
      body: { database: cached.ok ? 'ok' : 'failing', version: VERSION, commit: COMMIT },
    };
  };
}
