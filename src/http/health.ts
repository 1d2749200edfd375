import type { MikroORM } from '@mikro-orm/postgresql';
import { COMMIT } from '../version.ts';

const CACHE_MS = 3_000;
const PROBE_TIMEOUT_MS = 2_000;

export interface Health {
  status: number;
  /** `draining` only while the instance is stopping (then the status is 503). */
  body: { database: 'ok' | 'failing'; version: string; commit: string; draining?: true };
}

/**
 * `GET /api/health`: a `select 1` probe, cached for a few seconds so that load balancers polling
 * many instances do not become a database load of their own, and bounded in time so it never hangs.
 * `version` is the original server's release this one speaks (`[server] compatible_version`, as
 * `buildInfo.version` says): clients gate features on it and parse it as `major.minor.patch`.
 * This server's own version is in `buildInfo.versionString` and the metrics' build info.
 * While `draining()` (shutdown has begun) it answers 503 whatever the database says, so that a load
 * balancer takes the instance out before it stops taking connections.
 */
export function createHealthCheck(orm: MikroORM, version: string, draining: () => boolean = () => false): () => Promise<Health> {
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
    // A draining instance answers at once: what the balancer needs to know does not wait on a probe.
    if (!cached || (Date.now() - cached.at > CACHE_MS && !draining())) {
      inFlight ??= probe().finally(() => (inFlight = null));
      const ok = await inFlight;
      cached = { at: Date.now(), ok };
    }
    const body: Health['body'] = { database: cached.ok ? 'ok' : 'failing', version, commit: COMMIT };
    if (draining()) return { status: 503, body: { ...body, draining: true } };
    return { status: cached.ok ? 200 : 503, body };
  };
}
