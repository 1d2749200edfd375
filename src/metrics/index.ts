import type { MikroORM } from '@mikro-orm/postgresql';
import { Counter, Gauge, Registry } from 'prom-client';
import { COMMIT, VERSION } from '../version.ts';
import { TimedSeries } from './timed-series.ts';

/**
 * Prometheus metrics of one app, on a registry of its own (never prom-client's global one), so
 * that several apps in one process (tests, a second instance) never share or clash over counts.
 * `GET /metrics` serves `registry` when `[metrics] enabled`.
 *
 * Recording API, for whoever serves requests:
 * - `recordRequest(method, route, status, seconds)`: once per HTTP request, with the route
 *   TEMPLATE (`/api/datasources/:id`, `/graphql`, `/api/datasources/proxy/*`, `unmatched`),
 *   never the raw path, so label values stay few;
 * - `recordProxy(dataSourceType, upstreamStatus, seconds)`: once per proxied call that reached
 *   (or tried to reach) the upstream, with the upstream's status (502/504 when it failed) and the
 *   time to its answer. The proxy gets it as its `onUpstream` callback (src/app.ts).
 */
export class Metrics {
  readonly registry = new Registry();
  /** `dashgate_http_requests_total` and `dashgate_http_request_duration_seconds`. */
  readonly #requests: TimedSeries;
  /** `dashgate_proxy_upstream_requests_total` and `dashgate_proxy_upstream_duration_seconds`. */
  readonly #proxyCalls: TimedSeries;
  /** Restarts of the embedded PostgreSQL after it exited unexpectedly (src/db/supervisor.ts); stays 0 on an external one. */
  readonly embeddedPostgresRestarts = new Counter({
    name: 'dashgate_embedded_postgres_restarts_total',
    help: 'Times the embedded PostgreSQL was started again after it exited unexpectedly.',
    registers: [this.registry],
  });

  /** Shared live-query runs started (one per distinct query per tick, however many watch it). */
  readonly liveQueryUpstreamCalls = new Counter({
    name: 'dashgate_live_query_upstream_calls_total',
    help: 'Runs of live queries against their data sources: one per distinct query per refresh on this instance, whatever its number of subscribers.',
    registers: [this.registry],
  });
  /** Ticks of a live query skipped because its previous run was still running (a slow or hanging upstream). */
  readonly liveQuerySkippedTicks = new Counter({
    name: 'dashgate_live_query_skipped_ticks_total',
    help: 'Refreshes of live queries skipped because the previous run of the same query was still running.',
    registers: [this.registry],
  });

  constructor(orm: MikroORM) {
    const registers = [this.registry];
    this.#requests = new TimedSeries(
      this.registry,
      { name: 'dashgate_http_requests_total', help: 'HTTP requests served, by method, route template and status.' },
      { name: 'dashgate_http_request_duration_seconds', help: 'Time from receiving an HTTP request to the end of its response, by method, route template and status.' },
      ['method', 'route', 'status'],
      DURATION_BUCKETS,
    );
    this.#proxyCalls = new TimedSeries(
      this.registry,
      { name: 'dashgate_proxy_upstream_requests_total', help: 'Calls of the data source proxy to upstreams, by upstream status and data source type.' },
      { name: 'dashgate_proxy_upstream_duration_seconds', help: 'Time upstreams took to answer the data source proxy, by upstream status and data source type.' },
      ['status', 'type'],
      DURATION_BUCKETS,
    );

    // Read from the pg pool behind MikroORM when scraped; nothing is counted per query.
    const pool = async () => orm.em.getConnection().getNativeClient().catch(() => null);
    new Gauge({
      name: 'dashgate_db_pool_connections',
      help: 'Connections of the PostgreSQL pool: total open, idle, and in_use by a query or transaction.',
      labelNames: ['state'],
      registers,
      async collect() {
        const p = await pool();
        this.set({ state: 'total' }, p?.totalCount ?? 0);
        this.set({ state: 'idle' }, p?.idleCount ?? 0);
        this.set({ state: 'in_use' }, p ? p.totalCount - p.idleCount : 0);
      },
    });
    new Gauge({
      name: 'dashgate_db_pool_waiting',
      help: 'Queries waiting for a free PostgreSQL pool connection.',
      registers,
      async collect() {
        this.set((await pool())?.waitingCount ?? 0);
      },
    });
    new Gauge({
      name: 'dashgate_db_pool_max_connections',
      help: 'Most connections the PostgreSQL pool may open ([database] max_open_conn).',
      registers,
      collect() {
        this.set((orm.config.get('pool') as { max?: number } | undefined)?.max ?? 0);
      },
    });

    new Gauge({ name: 'dashgate_build_info', help: 'Version and commit of the running server; always 1.', labelNames: ['version', 'commit'], registers })
      .set({ version: VERSION, commit: COMMIT }, 1);
    registerProcessMetrics(registers);
  }

  /** Reads the live queries' gauges from `read` when scraped. */
  watchLiveQueries(read: () => { active: number; subscribers: number }): void {
    const registers = [this.registry];
    new Gauge({
      name: 'dashgate_live_queries_active',
      help: 'Distinct live queries running on this instance (each one upstream run per refresh).',
      registers,
      collect() {
        this.set(read().active);
      },
    });
    new Gauge({
      name: 'dashgate_live_query_subscribers',
      help: 'Subscribers of live queries on this instance.',
      registers,
      collect() {
        this.set(read().subscribers);
      },
    });
  }

  /** Reads the query API's answer memory (`[query] max_answer_bytes_in_flight`) when scraped. */
  watchAnswerMemory(read: () => { bytes: number; requests: number }): void {
    const registers = [this.registry];
    new Gauge({
      name: 'dashgate_query_answer_bytes_in_flight',
      help: 'Estimated bytes of query answers being built and sent on this instance ([query] max_answer_bytes_in_flight bounds it).',
      registers,
      collect() {
        this.set(read().bytes);
      },
    });
    new Gauge({
      name: 'dashgate_query_answers_in_flight',
      help: 'Query requests holding answer memory on this instance.',
      registers,
      collect() {
        this.set(read().requests);
      },
    });
  }

  recordRequest(method: string, route: string, status: number, seconds: number): void {
    this.#requests.observe([method, route, status], seconds);
  }

  recordProxy(dataSourceType: string, upstreamStatus: number, seconds: number): void {
    this.#proxyCalls.observe([upstreamStatus, dataSourceType], seconds);
  }
}

/** Prometheus' defaults plus the long tail of slow upstreams (the proxy waits up to `[dataproxy] timeout`). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The usual process gauges, read when scraped. prom-client's `collectDefaultMetrics` would start
 * event-loop and GC monitors per registry that are never stopped, which adds up with one registry per app.
 */
function registerProcessMetrics(registers: Registry[]): void {
  const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
  new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.', registers }).set(startSeconds);
  new Gauge({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds.',
    registers,
    collect() {
      const usage = process.cpuUsage();
      this.set((usage.user + usage.system) / 1e6);
    },
  });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: 'nodejs_heap_size_used_bytes',
    help: 'V8 heap in use, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
}
