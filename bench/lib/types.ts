/**
 * The contract between the bench runner (bench/run.ts) and its scenarios. A scenario is a module
 * whose default export is `(ctx: BenchContext) => Promise<BenchRow[]>`; the runner prints its rows
 * into bench/RESULTS.md. Scenarios measure their own baselines in the same run and report ratios.
 */
import type { PgConnection } from '../../src/db/embedded.ts';

export interface BenchRow {
  /** Groups rows into one table per scenario, e.g. "REST read". */
  scenario: string;
  /** What was measured, e.g. "GET /api/datasources/:id (REST, token)". */
  measurement: string;
  /** The median, already formatted with its unit, e.g. "5,210 req/s". */
  value: string;
  /** The ratio to the baseline, e.g. "0.94x hand-written MikroORM"; empty when not compared. */
  ratio?: string;
  /** The target, e.g. ">= 0.9x"; empty when none. */
  target?: string;
  /** Whether the target holds; undefined when there is none. */
  pass?: boolean;
  /** Anything else worth a reader's attention (p99, rows, statements per request...). */
  notes?: string;
}

/** A server under test in its own process (so its CPU and memory are its own). */
export interface Target {
  url: string;
  pid: number;
  /** Resident set size of the server process, in bytes. */
  rss(): Promise<number>;
  /** SQL statements the process has sent so far (only when started with `countQueries`). */
  queries(): Promise<number>;
  /** CPU time (user + system) the process has used so far, in µs; optional for targets of other runners. */
  cpu?(): Promise<number>;
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
