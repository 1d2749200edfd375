import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from './database.ts';
import { startNameServer, type NameServer } from './dns.ts';
import { freePort, listening, spawnMain, type MainProcess } from './main-process.ts';
import { call, gql } from './server.ts';
import { subscribe, type OpenSubscription } from './sse.ts';

/**
 * dashgate instances (server processes as `npm start` runs them, on one shared test database)
 * behind Debian's HAProxy running the committed deploy/haproxy.cfg, all on loopback: instance i
 * listens on 127.0.0.(2+i), every one on the same port, and a DNS server of the test's own
 * answers the instances' name with their addresses, as Docker's DNS answers a compose service's
 * name with its replicas'. Only addresses differ from docker compose: the config reads them from
 * the environment (DASHGATE_LB_*); its balancing, checks, retries and timeouts are as committed.
 */

export const HAPROXY = '/usr/sbin/haproxy';
export const haproxyInstalled = existsSync(HAPROXY);
const root = new URL('../..', import.meta.url).pathname;
const NAME = 'dashgate.balancer.test';
/**
 * Matches the committed checks (inter 1s, fastinter 500ms, fall 2: down within 1.5 s plus a
 * check's own time), with room for a loaded machine.
 */
export const DRAIN_SECONDS = 3;
/** How long after an instance stops answering checks the balancer must have marked it down. */
export const DETECTION_MS = 2_500;

export interface Instance {
  index: number;
  address: string;
  url: string;
  main: MainProcess | null;
  /** Every process this instance ran, in order (a restart adds one). */
  runs: MainProcess[];
}

export interface Balancer {
  url: string;
  instances: Instance[];
  db: PgConnection;
  /** Starts instance i (again) and waits until it listens. */
  start(i: number): Promise<void>;
  /** SIGTERM; resolves with the exit code. */
  stop(i: number): Promise<number | null>;
  /** SIGKILL, at once. */
  kill(i: number): Promise<void>;
  /** The balancer's view of each instance, by index: UP, DOWN, `UP 1/2`... */
  states(): Promise<string[]>;
  /** Resolves with the time (performance.now()) the balancer showed instance i as `state`. */
  waitFor(i: number, state: 'UP' | 'DOWN', ms?: number): Promise<number>;
  /** HAProxy's own output (its log lines go to stdout). */
  haproxyOutput(): string;
  close(): Promise<void>;
}

export async function startBalancer(options: { instances?: number; ini?: string[] } = {}): Promise<Balancer> {
  const count = options.instances ?? 3;
  const dir = await mkdtemp(join(tmpdir(), 'dashgate-balancer-'));
  const db = await createTestDatabase();
  const port = await freePort();
  const instances: Instance[] = Array.from({ length: count }, (_, index) => {
    const address = `127.0.0.${2 + index}`;
    return { index, address, url: `http://${address}:${port}`, main: null, runs: [] };
  });
  let dns: NameServer | null = null;
  let haproxy: ChildProcess | null = null;
  let output = '';
  const bind = `127.0.0.1:${await freePort()}`;
  const stats = `127.0.0.1:${await freePort()}`;

  const start = async (i: number) => {
    const instance = instances[i]!;
    const config = join(dir, `instance-${i}.ini`);
    await writeFile(config, [
      '[server]', `http_addr = ${instance.address}`, `http_port = ${port}`, `shutdown_drain_seconds = ${DRAIN_SECONDS}`, 'shutdown_timeout_seconds = 10',
      // As docker-compose.yml sets it: only the balancer closes idle connections.
      'keep_alive_timeout_seconds = 0',
      '[database]', 'type = postgres', `host = ${db.host}:${db.port}`, `name = ${db.database}`, `user = ${db.user}`, `password = ${db.password}`, 'max_open_conn = 5',
      // Instances sharing a database share its key.
      '[security]', 'secret_key = balancer-test-key-0123456789abcdef0123',
      '[live]', 'min_refresh = 200ms',
      '[log]', 'level = info',
      ...(options.ini ?? []), '',
    ].join('\n'));
    const main = spawnMain({ config });
    instance.main = main;
    instance.runs.push(main);
    await listening(main);
  };

  const states = async (): Promise<string[]> => {
    const csv = await (await fetch(`http://${stats}/stats;csv`)).text();
    const [header, ...rows] = csv.trim().split('\n');
    const columns = header!.replace(/^# /, '').split(',');
    const [svname, status, addr] = ['svname', 'status', 'addr'].map((name) => columns.indexOf(name));
    const byAddress = new Map<string, string>();
    for (const row of rows) {
      const cells = row.split(',');
      if (cells[0] === 'dashgate' && cells[svname!]!.startsWith('dashgate')) byAddress.set(cells[addr!]!, cells[status!]!);
    }
    return instances.map((instance) => byAddress.get(`${instance.address}:${port}`) ?? 'absent');
  };

  const balancer: Balancer = {
    url: `http://${bind}`,
    instances,
    db,
    start,
    async stop(i) {
      const main = instances[i]!.main!;
      main.child.kill('SIGTERM');
      const code = await main.exited;
      instances[i]!.main = null;
      return code;
    },
    async kill(i) {
      const main = instances[i]!.main!;
      main.child.kill('SIGKILL');
      await main.exited;
      instances[i]!.main = null;
    },
    states,
    async waitFor(i, state, ms = 30_000) {
      const deadline = performance.now() + ms;
      for (;;) {
        const seen = (await states())[i]!;
        if (seen === state) return performance.now();
        if (performance.now() > deadline) throw new Error(`instance ${i} not ${state} after ${ms} ms (${seen}):\n${output.slice(-3000)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    haproxyOutput: () => output,
    async close() {
      if (process.env.DASHGATE_BALANCER_LOG) await writeFile(process.env.DASHGATE_BALANCER_LOG, output);
      for (const instance of instances) if (instance.main && instance.main.child.exitCode === null) instance.main.child.kill('SIGKILL');
      await Promise.all(instances.map((instance) => instance.main?.exited));
      if (haproxy && haproxy.exitCode === null) {
        haproxy.kill('SIGTERM');
        await new Promise((resolve) => haproxy!.once('exit', resolve));
      }
      await dns?.close();
      await dropTestDatabase(db).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };

  try {
    // The first instance migrates the (already migrated) database alone; the others start together.
    await start(0);
    await Promise.all(instances.slice(1).map((instance) => start(instance.index)));
    // What the queries and live queries of the load ask.
    const testdata = await call(instances[0]!, 'POST', '/api/datasources', { body: { name: 'testdata', uid: 'testdata', type: 'grafana-testdata-datasource', access: 'proxy' } });
    if (testdata.status !== 200) throw new Error(`creating the TestData data source: ${testdata.status} ${testdata.text}`);
    dns = await startNameServer({ [NAME]: instances.map((instance) => instance.address) });
    haproxy = spawn(HAPROXY, ['-db', '-f', join(root, 'deploy', 'haproxy.cfg')], {
      env: { PATH: process.env.PATH, DASHGATE_LB_BIND: bind, DASHGATE_LB_STATS: stats, DASHGATE_LB_DNS: dns.address, DASHGATE_LB_SERVERS: `${NAME}:${port}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    haproxy.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    haproxy.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = performance.now() + 30_000;
    for (;;) {
      const seen = await states().catch(() => []);
      if (seen.length === count && seen.every((state) => state === 'UP')) break;
      if (haproxy.exitCode !== null || performance.now() > deadline) throw new Error(`the balancer did not bring every instance up (${seen.join(', ')}):\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await balancer.close();
    throw error;
  }
  return balancer;
}

// ---------------------------------------------------------------------------------------------
// Traffic through the balancer, counting every answer.

export interface Failure {
  at: number;
  what: string;
  status: number;
  body: string;
}

/** Answers that were not what the request should get: the balancer tests want none, or know why. */
export class Tally {
  readonly failures: Failure[] = [];
  requests = 0;

  record(what: string, status: number, body: string, ok: boolean): void {
    this.requests++;
    if (!ok) this.failures.push({ at: performance.now(), what, status, body: body.slice(0, 300) });
  }

  async call(server: { url: string }, what: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any } | null> {
    try {
      const res = await call(server, method, path, { body });
      const ok = res.status === 200 && !(what.startsWith('graphql') && res.body?.errors);
      this.record(what, res.status, res.text, ok);
      return ok ? res : null;
    } catch (error) {
      this.record(what, 0, String((error as Error).cause ?? error), false);
      return null;
    }
  }
}

export interface Writes {
  /** Each worker's data source: the last value acknowledged (200) of its updates. */
  updated: Map<string, number>;
  /** Names of the data sources whose creation was acknowledged. */
  created: string[];
}

/**
 * `workers` loops through the balancer until stopped: reads of a data source (REST and GraphQL),
 * an update of each worker's own data source, a TestData query, and now and then a creation.
 * Writes answered 200 are kept, to be looked for afterwards.
 */
export async function startLoad(balancer: { url: string }, tally: Tally, options: { workers: number; pauseMs: number; prefix: string }): Promise<{ writes: Writes; stop(): Promise<void> }> {
  const writes: Writes = { updated: new Map(), created: [] };
  const owned: Array<{ id: number; uid: string }> = [];
  for (let w = 0; w < options.workers; w++) {
    const uid = `${options.prefix}-w${w}`;
    const res = await call(balancer, 'POST', '/api/datasources', { body: { name: uid, uid, type: 'loki', access: 'proxy', jsonData: { value: 0 } } });
    if (res.status !== 200) throw new Error(`creating ${uid}: ${res.status} ${res.text}`);
    owned.push({ id: res.body.id, uid });
    writes.updated.set(uid, 0);
  }
  let running = true;
  const loops = owned.map(async (mine, w) => {
    for (let n = 1; running; n++) {
      switch (n % 5) {
        case 0:
          await tally.call(balancer, 'rest-read', 'GET', `/api/datasources/uid/${mine.uid}`);
          break;
        case 1: {
          // Versioned as an editor sends it (the stored version becomes n + 1), so that clients
          // can tell a newer state from an older one.
          const res = await tally.call(balancer, 'rest-update', 'PUT', `/api/datasources/${mine.id}`, { name: mine.uid, uid: mine.uid, type: 'loki', access: 'proxy', jsonData: { value: n }, version: n });
          if (res) writes.updated.set(mine.uid, n);
          break;
        }
        case 2:
          await tally.call(balancer, 'graphql-read', 'POST', '/graphql', { query: 'query($name: String!) { currentOrganization { dataSource(name: $name) { uid jsonData } } }', variables: { name: mine.uid } });
          break;
        case 3:
          await tally.call(balancer, 'query', 'POST', '/api/ds/query', { from: 'now-5m', to: 'now', queries: [{ refId: 'A', datasource: { type: 'grafana-testdata-datasource', uid: 'testdata' }, scenarioId: 'random_walk', seed: n }] });
          break;
        case 4:
          if (n % 20 === 4) {
            const name = `${options.prefix}-c${w}-${n}`;
            if (await tally.call(balancer, 'rest-create', 'POST', '/api/datasources', { name, type: 'loki', access: 'proxy' })) writes.created.push(name);
          } else await tally.call(balancer, 'rest-list', 'GET', '/api/datasources');
          break;
      }
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  });
  return {
    writes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * The org's data sources, as one page of the graph's connection: its largest (1,000), as a variable
 * (a literal size would count that many times in the query's estimated cost).
 */
const ALL_DATA_SOURCES = 'query($first: Int!) { currentOrganization { dataSources(first: $first) { nodes { uid name version jsonData } } } }';

/** Every acknowledged write, read back through `server`: what is missing (empty when nothing is). */
export async function missingWrites(server: { url: string }, writes: Writes): Promise<string[]> {
  const res = await gql<{ currentOrganization: { dataSources: { nodes: Array<{ uid: string; name: string; jsonData: { value?: number } }> } } }>(server, ALL_DATA_SOURCES, { first: 1000 });
  const all = res.body.data!.currentOrganization.dataSources.nodes;
  const missing: string[] = [];
  for (const [uid, value] of writes.updated) {
    const found = all.find((ds) => ds.uid === uid);
    // A write that failed after reaching the database may have landed too: at least the acknowledged value.
    if (!found || (found.jsonData.value ?? 0) < value) missing.push(`${uid}: acknowledged ${value}, stored ${found?.jsonData.value}`);
  }
  const names = new Set(all.map((ds) => ds.name));
  for (const name of writes.created) if (!names.has(name)) missing.push(`${name}: created, absent`);
  return missing;
}

// ---------------------------------------------------------------------------------------------
// Clients of subscriptions and live queries through the balancer, reconnecting as told to.

const WATCH = 'subscription { dataSourceChanged { kind uid dataSource { version jsonData } } }';

/** How a stream ended: its final `UNAVAILABLE` event (subscribe again), or cut without one. */
export type StreamEnd = 'unavailable' | 'cut' | 'other';

function endOf(stream: OpenSubscription): StreamEnd {
  const last = stream.events.at(-1);
  const error = stream.events.findLast((event) => event.data?.errors)?.data.errors[0];
  if (last?.event === 'complete' && error?.extensions?.code === 'UNAVAILABLE') return 'unavailable';
  if (last?.event !== 'complete') return 'cut';
  return 'other';
}

/**
 * A client keeping the org's data sources current as docs/graphql.md tells one to: subscribe, load
 * the list, apply each change newer than what it has; when its stream ends, subscribe again and
 * reload. Its view must end equal to the database whatever happened to the instance serving it.
 */
export class Watcher {
  /** uid -> [version, jsonData.value] */
  readonly view = new Map<string, [number, number | undefined]>();
  readonly ends: StreamEnd[] = [];
  /** Subscribed and loaded once. */
  ready = false;
  #stream: OpenSubscription | null = null;
  #running = true;
  readonly #done: Promise<void>;

  readonly server: { url: string };
  readonly tally: Tally;

  constructor(server: { url: string }, tally: Tally) {
    this.server = server;
    this.tally = tally;
    this.#done = this.#loop();
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      let stream: OpenSubscription;
      try {
        stream = await subscribe(this.server, WATCH);
      } catch (error) {
        this.tally.record('subscribe', 0, String((error as Error).cause ?? error), false);
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (!this.#running) {
        stream.close();
        break;
      }
      this.tally.record('subscribe', stream.status, '', stream.status === 200);
      if (stream.status !== 200) {
        stream.close();
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      this.#stream = stream;
      let applied = 0;
      const apply = () => {
        for (; applied < stream.events.length; applied++) {
          const change = stream.events[applied]!.data?.data?.dataSourceChanged;
          if (!change?.dataSource) continue;
          this.#merge(change.uid, change.dataSource.version, change.dataSource.jsonData?.value);
        }
      };
      const reload = await this.tally.call(this.server, 'graphql-reload', 'POST', '/graphql', { query: ALL_DATA_SOURCES, variables: { first: 1000 } });
      for (const ds of reload?.body.data.currentOrganization.dataSources.nodes ?? []) this.#merge(ds.uid, ds.version, ds.jsonData?.value);
      this.ready = true;
      // Events as they come, until the stream ends.
      const ticker = setInterval(apply, 20);
      await stream.ended;
      clearInterval(ticker);
      apply();
      this.#stream = null;
      if (this.#running) this.ends.push(endOf(stream));
    }
  }

  #merge(uid: string, version: number, value: number | undefined): void {
    const known = this.view.get(uid);
    if (!known || known[0] < version) this.view.set(uid, [version, value]);
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#stream?.close();
    await this.#done;
  }
}

/** The database's data sources as a watcher's view should hold them. */
export async function currentView(server: { url: string }): Promise<Map<string, [number, number | undefined]>> {
  const res = await gql<{ currentOrganization: { dataSources: { nodes: Array<{ uid: string; version: number; jsonData: { value?: number } }> } } }>(server, ALL_DATA_SOURCES, { first: 1000 });
  return new Map(res.body.data!.currentOrganization.dataSources.nodes.map((ds) => [ds.uid, [ds.version, ds.jsonData.value]]));
}

const LIVE = `subscription($queries: [JSONObject!]!) {
  liveQuery(queries: $queries, from: "now-1m", to: "now", refresh: "500ms") { refreshedAt results { refId status } }
}`;

/** A live query's viewer: every refresh it receives, resubscribing when its stream ends. */
export class LiveViewer {
  /** When each refresh arrived (performance.now()). */
  readonly arrivals: number[] = [];
  readonly ends: StreamEnd[] = [];
  #stream: OpenSubscription | null = null;
  #running = true;
  readonly #done: Promise<void>;

  readonly server: { url: string };
  readonly tally: Tally;

  constructor(server: { url: string }, tally: Tally, seed: number) {
    this.server = server;
    this.tally = tally;
    this.#done = this.#loop(seed);
  }

  async #loop(seed: number): Promise<void> {
    const queries = [{ refId: 'A', datasource: { type: 'grafana-testdata-datasource', uid: 'testdata' }, scenarioId: 'random_walk', seed }];
    while (this.#running) {
      let stream: OpenSubscription;
      try {
        stream = await subscribe(this.server, LIVE, { variables: { queries } });
      } catch (error) {
        this.tally.record('live-subscribe', 0, String((error as Error).cause ?? error), false);
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (!this.#running) {
        stream.close();
        break;
      }
      this.tally.record('live-subscribe', stream.status, '', stream.status === 200);
      if (stream.status !== 200) {
        stream.close();
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      this.#stream = stream;
      let seen = 0;
      const take = () => {
        for (; seen < stream.events.length; seen++) {
          const event = stream.events[seen]!;
          if (event.data?.data?.liveQuery?.results?.[0]?.status === 200) this.arrivals.push(event.at);
        }
      };
      const ticker = setInterval(take, 20);
      await stream.ended;
      clearInterval(ticker);
      take();
      this.#stream = null;
      if (this.#running) this.ends.push(endOf(stream));
    }
  }

  /** The longest wait between two refreshes received from `since` on, in ms. */
  longestGap(since: number, until = performance.now()): number {
    const times = [since, ...this.arrivals.filter((at) => at > since && at < until), until];
    let longest = 0;
    for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
    return longest;
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#stream?.close();
    await this.#done;
  }
}

/** Polls `check` until it holds or `ms` pass; returns whether it held. */
export async function settles(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
