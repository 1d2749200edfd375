/**
 * The contract between the bench runner (bench/run.ts) and its scenarios. A scenario is a module
 * whose default export is `(ctx: BenchContext) => Promise<BenchRow[]>`; the runner runs it once per
 * run (`--runs`), takes the median of every row over the runs and prints it into bench/RESULTS.md
 * (bench/lib/report.ts). Scenarios measure their own baselines in the same run and report ratios.
 */
import type { PgConnection } from '../../src/db/embedded.ts';

/** The unit of a row's headline figure; report.ts formats each. */
export type Unit = 'req/s' | 'ms' | 'µs' | 'KiB' | 'MiB' | 'count';

/**
 * How a variant compares with another. `throughput` and `cpu` are ratios oriented alike (above 1
 * means the variant is better): its requests per second over the other's, and the other's server
 * CPU per request over its own. `added` is the time per request the variant adds to the other's,
 * in ms; `share` a fraction (0.6 for 60%) of what `of` names.
 */
export interface Comparison {
  kind: 'throughput' | 'cpu' | 'added' | 'share';
  /** What it is compared with, e.g. "MikroORM by hand", "the bare pipe". */
  of: string;
  /** The median of `rounds` when there are rounds. */
  value: number;
  /** One value per round, each from the two variants' loads run back to back. */
  rounds?: number[];
}

/**
 * A target on the row. `ratio` is decided by the server CPU ratio when the row has one (both
 * processes reported their CPU), else by the throughput ratio; `added` by the added time per
 * request; `value` by the headline figure. The runner judges it on the median over the runs.
 */
export interface Goal {
  on: 'value' | 'ratio' | 'added';
  op: '>=' | '<=' | '<' | '>';
  bound: number;
  /** Shown instead of the formatted bound, e.g. "constant (no N+1)". */
  label?: string;
}

/** Figures of a load, each the median over its rounds. */
export interface LoadFigures {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  cpuMicrosPerRequest?: number;
}

/** One measurement of one run; the runner takes medians over the runs and formats every number. */
export interface BenchRow {
  /** Groups rows into one table per scenario, e.g. "Data source read with a token". */
  scenario: string;
  /** What was measured, e.g. "GET /api/datasources/:id (REST)"; the same in every run. */
  measurement: string;
  /** The headline figure, in `unit`. */
  value: number;
  unit: Unit;
  /** Shown instead of the number (e.g. "1 / 1 / 1 / 1" statements by size); the number is still judged. */
  text?: string;
  /** Latency and server CPU per request, when the row is a load: printed in the notes. */
  load?: LoadFigures;
  /** At most one of each kind. */
  comparisons?: Comparison[];
  target?: Goal;
  /** Anything else worth a reader's attention; the median run's notes are shown. */
  notes?: string;
}

/** A server under test in its own process (so its CPU and memory are its own). */
export interface Target {
  url: string;
  pid: number;
  /** Resident set size of the server process, in bytes. */
  rss(): Promise<number>;
  /** RSS after garbage collection: what the process holds on to. */
  retained?(): Promise<number>;
  /**
   * RSS after V8's last-resort collection, which also returns to the system the freed pages V8
   * otherwise keeps pooled after a collection: what live objects and native memory hold.
   */
  reduced?(): Promise<number>;
  /** SQL statements the process has sent so far (only when started with `countQueries`). */
  queries(): Promise<number>;
  /** CPU time (user + system) the process has used so far, in µs; optional for targets of other runners. */
  cpu?(): Promise<number>;
  /** Starts (again) recording the delays of the process's event loop (`perf_hooks.monitorEventLoopDelay`, 5 ms resolution). */
  resetLoopDelay?(): Promise<void>;
  /** The event loop's worst and 99th-percentile delay since `resetLoopDelay`, in ms. */
  loopDelay?(): Promise<{ maxMs: number; p99Ms: number }>;
  close(): Promise<void>;
}

export type TargetKind =
  /** The real application (REST, GraphQL, proxy) over MikroORM. */
  | 'app'
  /** A hand-written node:http handler for GET /api/datasources/:id: same token lookup, one MikroORM findOne. */
  | 'orm-handler'
  /** The same handler on raw pg queries. */
  | 'pg-handler';

export interface TargetOptions {
  kind: TargetKind;
  connection: PgConnection;
  /** `createApp` options, e.g. `{ cacheCredentials: false }`. */
  app?: { cacheCredentials?: boolean };
  /** Settings overrides by section (the app kind). */
  overrides?: Record<string, Record<string, string>>;
  /** Count SQL statements through MikroORM's query logger (costs a little; not for throughput runs). */
  countQueries?: boolean;
}

export interface LoadOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Concurrent connections (default 10, the pool size). */
  connections?: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Answers outside 2xx plus socket errors and timeouts: a valid run has none. */
  failures: number;
  requests: number;
  /** CPU the server process spent per request during the run, in µs (when the target reports CPU). */
  cpuMicrosPerRequest?: number;
}

/** One variant of a comparison: a target and the request to send it. */
export interface Variant {
  name: string;
  target: Target;
  load: LoadOptions;
}

export interface Measured {
  name: string;
  rounds: LoadResult[];
  /** The round of median throughput. */
  median: LoadResult;
}

export interface BenchContext {
  /** The benchmark's own PostgreSQL cluster (superuser connection to its `postgres` database). */
  cluster: PgConnection;
  /** Seconds per round and rounds per variant (`--duration`, `--rounds`). */
  duration: number;
  rounds: number;
  /** A new, empty database on the cluster (migrated by the first app target started on it). */
  createDatabase(name: string): Promise<PgConnection>;
  startTarget(options: TargetOptions): Promise<Target>;
  /** Drives one target with autocannon for `duration` seconds. */
  load(target: Target, options: LoadOptions, duration?: number): Promise<LoadResult>;
  /**
   * Interleaves rounds of every variant (A B C, C B A, ...) after a warm-up, so drift in the
   * machine's load hits each variant alike, and returns each variant's median round. List the two
   * variants of a ratio next to each other: they then run back to back in every round.
   */
  compare(variants: Variant[]): Promise<Measured[]>;
  /** Progress lines on stderr. */
  log(message: string): void;
}
