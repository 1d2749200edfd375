import type { Logger } from '../logging/logger.ts';
import { oneLine } from '../errors/startup.ts';
import type { EmbeddedCluster } from './embedded.ts';

export interface SupervisionPolicy {
  /**
   * Wait before each restart attempt: the n-th failure within the window waits `delaysMs[n-1]`
   * (the last one repeats). The first is short, as PostgreSQL usually comes back at once.
   */
  delaysMs: readonly number[];
  /** This many failures (unexpected exits and failed restarts) within `windowMs`: give up. */
  maxFailures: number;
  windowMs: number;
}

export const DEFAULT_SUPERVISION: SupervisionPolicy = {
  delaysMs: [250, 500, 1_000, 2_000, 4_000],
  maxFailures: 6,
  windowMs: 60_000,
};

export interface Supervisor {
  /** Restarts done so far. */
  readonly restarts: number;
  /** No more restarts (shutdown). */
  stop(): void;
}

/**
 * Starts the embedded PostgreSQL again whenever its postmaster exits unexpectedly (killed, out of
 * memory, crashed), with growing waits between failed attempts. Requests meanwhile get 503
 * "database unavailable"; the pool and the change listener reconnect by themselves once it is
 * back. When it cannot be kept running (`maxFailures` within `windowMs`), `giveUp` is called
 * once with the reason, and the process should exit: a supervisor above it (systemd, Kubernetes)
 * or an operator has to act.
 */
export function superviseEmbeddedPostgres(
  cluster: EmbeddedCluster,
  log: Logger,
  giveUp: (reason: string) => void,
  policy: SupervisionPolicy = DEFAULT_SUPERVISION,
): Supervisor {
  const failures: number[] = [];
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let restarts = 0;
  let downSince = 0;

  const failed = (reason: string) => {
    const now = Date.now();
    failures.push(now);
    while (failures[0]! <= now - policy.windowMs) failures.shift();
    if (failures.length >= policy.maxFailures) {
      stopped = true;
      giveUp(`the embedded PostgreSQL failed ${failures.length} times within ${policy.windowMs / 1000} s, so dashgate stopped restarting it; the last failure: ${reason}`);
      return;
    }
    const delay = policy.delaysMs[Math.min(failures.length, policy.delaysMs.length) - 1]!;
    log.error({ component: 'postgres', failures: failures.length, retryInMs: delay }, `embedded PostgreSQL ${reason}; starting it again in ${delay} ms`);
    timer = setTimeout(attempt, delay);
  };

  const attempt = async () => {
    timer = null;
    if (stopped) return;
    try {
      await cluster.restart();
    } catch (error) {
      if (!stopped) failed(`could not be started again: ${oneLine(error instanceof Error ? error.message : String(error))}`);
      return;
    }
    if (stopped) return;
    restarts++;
    log.warn({ component: 'postgres', restarts, downMs: Date.now() - downSince, pid: cluster.pid }, 'embedded PostgreSQL restarted');
    downSince = 0;
  };

  cluster.onUnexpectedExit((how) => {
    if (stopped) return;
    downSince ||= Date.now();
    failed(`exited unexpectedly (${how})`);
  });

  return {
    get restarts() {
      return restarts;
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
