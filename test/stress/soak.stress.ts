import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedCluster } from '../../src/db/embedded.ts';
import { sleep } from '../robustness/load.ts';
import { freePort, listening, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';
import { call, gql } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * The soak: two server processes on one PostgreSQL, mixed REST, GraphQL and proxy reads and
 * writes (the proxy against a real upstream) for DASHGATE_SOAK_SECONDS (600 by default), the
 * database stopped and started again halfway. Passes when every answer is an expected one (503
 * "database unavailable" only while the database restarts), each process's RSS and open file
 * descriptors over the last 10% of the run are within 5% of their level after warm-up (25-35% of
 * the run), and every write answered 200 is there at the end. A full-length run writes its
 * figures to bench/RESULTS.md ("## Soak").
 *
 *   DASHGATE_SOAK_SECONDS=120 npm run test:stress -- test/stress/soak.stress.ts
 *
 * DASHGATE_SOAK_TIMELINE=<file> also writes every sample (instance, second, RSS MiB, heap MiB, descriptors).
 */
const SECONDS = Number(process.env.DASHGATE_SOAK_SECONDS || 600);
const FULL_LENGTH = 600;
const WORKERS_PER_INSTANCE = 4;
/** Each worker's pause between requests: a steady load of about 100 requests/s that leaves a shared 2-core machine room. */
const PAUSE_MS = 30;
/** How far the end level of RSS and of open descriptors may be from the level after warm-up. */
const DRIFT = 0.05;
/** After the database is back, how long requests may still get 503 (the pool and the change listener reconnecting). */
const RECOVERY_MS = 5_000;

const KINDS = ['rest-read', 'graphql-read', 'proxy-read', 'rest-update', 'graphql-update', 'proxy-write', 'rest-create', 'graphql-create'] as const;
type Kind = (typeof KINDS)[number];
/** One worker's cycle of requests: reads, writes of every kind, creates rarer (the data source list grows with them). */
const CYCLE: Kind[] = [
  'rest-read', 'proxy-read', 'graphql-read', 'rest-update', 'proxy-read', 'proxy-write', 'graphql-read', 'graphql-update', 'rest-read', 'proxy-read',
  'rest-read', 'proxy-read', 'graphql-read', 'rest-update', 'proxy-read', 'proxy-write', 'graphql-read', 'graphql-update', 'rest-read', 'rest-create',
  'rest-read', 'proxy-read', 'graphql-read', 'rest-update', 'proxy-read', 'proxy-write', 'graphql-read', 'graphql-update', 'rest-read', 'proxy-read',
  'rest-read', 'proxy-read', 'graphql-read', 'rest-update', 'proxy-read', 'proxy-write', 'graphql-read', 'graphql-update', 'rest-read', 'graphql-create',
];

interface Answer {
  at: number;
  instance: number;
  kind: Kind;
  status: number;
  /** 200, and for GraphQL no errors in the body. */
  ok: boolean;
  ms: number;
  /** Kept for anything not ok. */
  body?: string;
}

interface Figures {
  at: number;
  rss: number;
  fds: number;
  /** V8 heap in use, from the instance's /metrics (reported, not judged: it moves with every GC). */
  heap: number;
}

let cluster: EmbeddedCluster | null = null;
let upstream: Upstream | null = null;
const instances: MainProcess[] = [];
let dir = '';

afterAll(async () => {
  for (const main of instances) await stopMain(main);
  await upstream?.close();
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** RSS and open file descriptors of a process, from /proc, and its heap from /metrics. */
async function figuresOf(pid: number, server: { url: string }): Promise<Omit<Figures, 'at'>> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  const metrics = await call(server, 'GET', '/metrics', { auth: null }).then((r) => r.text, () => '');
  const heap = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN);
  return { rss, fds, heap };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? 0;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const percent = (ratio: number) => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)}%`;

describe(`soak: ${SECONDS} s of mixed traffic on two instances over one database, restarted halfway`, () => {
  it('answers only as expected, keeps RSS and open handles level, and loses no committed write', async () => {
    expect(SECONDS).toBeGreaterThanOrEqual(30);
    dir = await mkdtemp(join(tmpdir(), 'dashgate-soak-'));
    await chmod(dir, 0o755);
    const pgDir = join(dir, 'pg');
    cluster = await startEmbeddedPostgres({ dir: pgDir, port: 0, database: 'soak' });
    const db = cluster.connection;
    upstream = await startUpstream();

    const ports = [await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) {
      const config = join(dir, `instance-${i}.ini`);
      await writeFile(config, [
        '[server]', 'http_addr = 127.0.0.1', `http_port = ${port}`,
        '[database]', 'type = postgres', `host = ${db.host}:${db.port}`, `name = ${db.database}`, `user = ${db.user}`, `password = ${db.password}`,
        // Instances sharing a database share its key.
        '[security]', 'secret_key = soak-test-key-0123456789abcdef',
        '[log]', 'level = info', '',
      ].join('\n'));
      const main = spawnMain({ config });
      instances.push(main);
      await listening(main);
    }
    const servers = ports.map((port) => ({ url: `http://127.0.0.1:${port}` }));
    const pids = instances.map((main) => main.child.pid!);

    // What the workers use: a token, the upstream's data source, and one data source per worker to update.
    const token = `Bearer ${(await call(servers[0]!, 'POST', '/api/auth/keys', { body: { name: 'soak', role: 'Admin' } })).body.key}`;
    expect((await call(servers[0]!, 'POST', '/api/datasources', { body: { name: 'soak-upstream', uid: 'soak-upstream', type: 'loki', access: 'proxy', url: upstream.url } })).status).toBe(200);
    const owned: Array<{ id: number; uid: string; name: string; acked: number; tried: number }> = [];
    for (let w = 0; w < WORKERS_PER_INSTANCE * servers.length; w++) {
      const name = `soak-owned-${w}`;
      const res = await call(servers[w % servers.length]!, 'POST', '/api/datasources', { body: { name, uid: name, type: 'loki', access: 'proxy' } });
      expect(res.status).toBe(200);
      owned.push({ id: res.body.id, uid: name, name, acked: 0, tried: 0 });
    }

    const answers: Answer[] = [];
    const created: string[] = [];
    const proxied: string[] = [];
    const figures: Figures[][] = servers.map(() => []);
    let running = true;
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;

    const send = async (instance: number, worker: number, kind: Kind, n: number): Promise<{ status: number; text: string }> => {
      const server = servers[instance]!;
      const mine = owned[worker]!;
      switch (kind) {
        case 'rest-read':
          return call(server, 'GET', `/api/datasources/uid/${mine.uid}`, { auth: token });
        case 'graphql-read':
          return gql(server, 'query($name: String!) { currentOrganization { dataSource(name: $name) { id name jsonData } } }', { name: mine.name }, token);
        case 'proxy-read':
          return call(server, 'GET', `/api/datasources/proxy/uid/soak-upstream/loki/api/v1/query_range?query=up&n=${n}`, { auth: token });
        case 'proxy-write': {
          const id = `${instance}-${worker}-${n}`;
          const res = await call(server, 'POST', `/api/datasources/proxy/uid/soak-upstream/loki/api/v1/push?id=${id}`, { auth: token, body: { streams: [{ stream: { soak: id }, values: [[String(Date.now() * 1e6), 'line']] }] } });
          if (res.status === 200) proxied.push(id);
          return res;
        }
        case 'rest-update':
        case 'graphql-update': {
          const value = ++mine.tried;
          const jsonData = { value, padding: 'x'.repeat(64) };
          const res = kind === 'rest-update'
            ? await call(server, 'PUT', `/api/datasources/${mine.id}`, { body: { name: mine.name, uid: mine.uid, type: 'loki', access: 'proxy', jsonData } })
            : await gql(server, 'mutation($id: ID!, $input: UpdateDataSourceInput!) { dataSourceUpdate(id: $id, input: $input) { dataSource { id } userErrors { message } } }', { id: Buffer.from(`DataSource:${mine.id}`).toString('base64url'), input: { name: mine.name, uid: mine.uid, type: 'loki', access: 'proxy', jsonData } });
          if (res.status === 200 && !(res.body as { errors?: unknown }).errors && !(res.body as { data?: { dataSourceUpdate?: { userErrors: unknown[] } } }).data?.dataSourceUpdate?.userErrors.length) mine.acked = Math.max(mine.acked, value);
          return res;
        }
        case 'rest-create':
        case 'graphql-create': {
          const name = `soak-created-${instance}-${worker}-${n}`;
          const res = kind === 'rest-create'
            ? await call(server, 'POST', '/api/datasources', { body: { name, type: 'loki', access: 'proxy', jsonData: { n } } })
            : await gql(server, 'mutation($input: CreateDataSourceInput!) { dataSourceCreate(input: $input) { dataSource { id } userErrors { message } } }', { input: { name, type: 'loki', access: 'proxy', jsonData: { n } } });
          if (res.status === 200 && !(res.body as { errors?: unknown }).errors && !(res.body as { data?: { dataSourceCreate?: { userErrors: unknown[] } } }).data?.dataSourceCreate?.userErrors.length) created.push(name);
          return res;
        }
      }
    };

    const workers = Array.from({ length: WORKERS_PER_INSTANCE * servers.length }, async (_, worker) => {
      const instance = worker % servers.length;
      // Workers start at different places in the cycle, so every kind is always in flight somewhere.
      for (let n = worker * 5; running; n++) {
        const kind = CYCLE[n % CYCLE.length]!;
        const sent = performance.now();
        let status = 0;
        let text = '';
        try {
          ({ status, text } = await send(instance, worker, kind, n));
        } catch (error) {
          text = String(error);
        }
        const at = performance.now();
        const ok = status === 200 && !(kind.startsWith('graphql') && text.includes('"errors"'));
        answers.push({ at, instance, kind, status, ok, ms: at - sent, ...(ok ? {} : { body: text.slice(0, 300) }) });
        await sleep(PAUSE_MS);
      }
    });
    const sampler = (async () => {
      while (running) {
        for (const [i, pid] of pids.entries()) figures[i]!.push({ at: elapsed(), ...(await figuresOf(pid, servers[i]!)) });
        await sleep(2000);
      }
    })();

    // Halfway: the database stops (a fast shutdown, as a package upgrade or a failover would) and starts again on the same port.
    await sleep((SECONDS / 2) * 1000);
    const stopping = performance.now();
    await cluster.stop();
    cluster = null;
    const stoppedMs = performance.now() - stopping;
    cluster = await startEmbeddedPostgres({ dir: pgDir, port: db.port, database: db.database });
    const back = performance.now();
    const restartWindow = { from: stopping, to: back + RECOVERY_MS };
    await sleep(Math.max(0, SECONDS * 1000 - (performance.now() - started)));
    running = false;
    await Promise.all(workers);
    await sampler;

    // Answers: 200, or 503 "database unavailable" while the database restarted.
    const duringRestart = (a: Answer) => a.at >= restartWindow.from && a.at <= restartWindow.to;
    const unavailable = (a: Answer) => a.status === 503 && a.body !== undefined && /"message":"database unavailable"/.test(a.body);
    const unexpected = answers.filter((a) => !a.ok && !(unavailable(a) && duringRestart(a)));
    const firstOkAfter = servers.map((_, i) => answers.find((a) => a.instance === i && a.at > back && a.ok)?.at ?? Infinity);

    // Levels: medians of the samples just after warm-up (25-35% of the run) and at the end (last
    // 10%). V8 grows its heap for a minute or two under a new load and then settles; a level is a
    // median over a minute, not one sample, because the heap also swings with every major GC.
    const window = (samples: Figures[], from: number, to: number) => samples.filter((s) => s.at >= SECONDS * from && s.at <= SECONDS * to);
    const levels = figures.map((samples) => {
      const base = window(samples, 0.25, 0.35);
      const end = window(samples, 0.9, 1);
      const rss = { base: median(base.map((s) => s.rss)), end: median(end.map((s) => s.rss)), max: Math.max(...samples.map((s) => s.rss)) };
      const fds = { base: median(base.map((s) => s.fds)), end: median(end.map((s) => s.fds)), max: Math.max(...samples.map((s) => s.fds)) };
      const heap = { base: median(base.map((s) => s.heap)), end: median(end.map((s) => s.heap)) };
      return { rss, fds, heap, rssDrift: rss.end / rss.base - 1, fdsDrift: fds.end / fds.base - 1, samples: { base: base.length, end: end.length } };
    });

    // Every write answered 200 is there: created data sources read from the database itself (the
    // REST list stops at 5,000, as the original's does), updates and proxied writes as served.
    const client = new pg.Client(db);
    await client.connect();
    const names = new Set((await client.query<{ name: string }>(`select name from data_source where name like 'soak-created-%'`)).rows.map((r) => r.name));
    await client.end();
    const missingCreates = created.filter((name) => !names.has(name));
    const updates = await Promise.all(owned.map(async (o) => ({ ...o, stored: ((await call(servers[0]!, 'GET', `/api/datasources/${o.id}`)).body.jsonData?.value ?? 0) as number })));
    const lostUpdates = updates.filter((u) => u.stored < u.acked || u.stored > u.tried);
    const received = new Set(upstream.requests.map((r) => new URL(r.url, 'http://upstream').searchParams.get('id')).filter(Boolean));
    const missingProxied = proxied.filter((id) => !received.has(id));

    const exits = [];
    for (const main of instances) exits.push(await stopMain(main));

    const byKind = Object.fromEntries(KINDS.map((kind) => [kind, answers.filter((a) => a.kind === kind).length]));
    const ok = answers.filter((a) => a.ok);
    const summary = {
      seconds: SECONDS,
      answers: answers.length,
      ratePerSecond: Math.round(answers.length / SECONDS),
      byKind,
      p50ms: percentile(ok.map((a) => a.ms), 50),
      p99ms: percentile(ok.map((a) => a.ms), 99),
      unavailableDuringRestart: answers.filter((a) => unavailable(a) && duringRestart(a)).length,
      unexpected: unexpected.length,
      unexpectedExamples: unexpected.slice(0, 5),
      databaseDownMs: Math.round(back - stopping),
      stopMs: Math.round(stoppedMs),
      firstOkAfterStartMs: firstOkAfter.map((at) => Math.round(at - back)),
      levels,
      writes: { created: created.length, updates: owned.reduce((sum, o) => sum + o.acked, 0), proxied: proxied.length },
      missing: { creates: missingCreates.length, updates: lostUpdates.length, proxied: missingProxied.length },
      exits,
    };
    console.log(JSON.stringify(summary, null, 2));
    if (process.env.DASHGATE_SOAK_TIMELINE) {
      const timeline = figures.map((samples, i) => samples.map((f) => `${i} ${f.at.toFixed(0)} ${(f.rss / 1048576).toFixed(1)} ${(f.heap / 1048576).toFixed(1)} ${f.fds}`).join('\n'));
      await writeFile(process.env.DASHGATE_SOAK_TIMELINE, timeline.join('\n'));
    }
    if (SECONDS >= FULL_LENGTH) await recordInResults(summary);

    expect(answers.length).toBeGreaterThan(SECONDS * 20);
    for (const kind of KINDS) expect([kind, byKind[kind]! > 0]).toEqual([kind, true]);
    expect(unexpected.map((a) => `${a.kind} ${a.status} at ${Math.round((a.at - started) / 1000)} s: ${a.body}`)).toEqual([]);
    for (const at of firstOkAfter) expect(at - back).toBeLessThan(RECOVERY_MS);
    for (const level of levels) {
      expect(level.samples.base).toBeGreaterThan(1);
      expect(level.samples.end).toBeGreaterThan(1);
      expect(Math.abs(level.rssDrift)).toBeLessThanOrEqual(DRIFT);
      expect(Math.abs(level.fdsDrift)).toBeLessThanOrEqual(DRIFT);
    }
    expect(created.length).toBeGreaterThan(0);
    expect(proxied.length).toBeGreaterThan(0);
    expect({ missingCreates, lostUpdates, missingProxied }).toEqual({ missingCreates: [], lostUpdates: [], missingProxied: [] });
    expect(exits).toEqual([0, 0]);
  }, (SECONDS + 300) * 1000);
});

type Summary = {
  seconds: number;
  answers: number;
  ratePerSecond: number;
  p50ms: number;
  p99ms: number;
  unavailableDuringRestart: number;
  unexpected: number;
  databaseDownMs: number;
  firstOkAfterStartMs: number[];
  levels: Array<{ rss: { base: number; end: number; max: number }; fds: { base: number; end: number; max: number }; heap: { base: number; end: number }; rssDrift: number; fdsDrift: number }>;
  writes: { created: number; updates: number; proxied: number };
  missing: { creates: number; updates: number; proxied: number };
};

/** Replaces the "## Soak" section of bench/RESULTS.md (bench/run.ts keeps it when it rewrites the rest). */
async function recordInResults(s: Summary): Promise<void> {
  const file = new URL('../../bench/RESULTS.md', import.meta.url).pathname;
  const row = (i: number) => {
    const l = s.levels[i]!;
    return `| instance ${i + 1} | ${mib(l.rss.base)} | ${mib(l.rss.end)} | ${percent(l.rssDrift)} | ${mib(l.rss.max)} | ${l.fds.base} | ${l.fds.end} | ${percent(l.fdsDrift)} | ${l.fds.max} | ${mib(l.heap.base)} / ${mib(l.heap.end)} |`;
  };
  const section = [
    '## Soak',
    '',
    `Written by \`npm run test:stress\` (test/stress/soak.stress.ts) after a full run, ${new Date().toISOString()}, on ${cpus().length} cores`,
    `(load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}). Two server processes on one PostgreSQL for ${s.seconds} s,`,
    `${WORKERS_PER_INSTANCE} workers each (a ${PAUSE_MS} ms pause after each answer), mixed REST, GraphQL and proxy reads and writes (the proxy against`,
    'a real upstream); the database stopped and started again halfway. Levels are medians of samples every 2 s, at 25-35% of the run',
    `(after warm-up) and over its last 10%; open handles are the process's open file descriptors. Target: within ${DRIFT * 100}%.`,
    '',
    '| measurement | result |',
    '|---|---|',
    `| answers | ${s.answers.toLocaleString('en')} (${s.ratePerSecond} req/s), p50 ${s.p50ms.toFixed(1)} ms, p99 ${s.p99ms.toFixed(1)} ms |`,
    `| unexpected answers | ${s.unexpected} |`,
    `| 503 "database unavailable" during the restart | ${s.unavailableDuringRestart} |`,
    `| database down (stop and start) | ${(s.databaseDownMs / 1000).toFixed(1)} s; first 200 after it came back: ${s.firstOkAfterStartMs.map((ms) => `${ms} ms`).join(', ')} |`,
    `| writes answered 200 | ${s.writes.created} data sources created, ${s.writes.updates} updates, ${s.writes.proxied} proxied writes |`,
    `| of them missing at the end | ${s.missing.creates + s.missing.updates + s.missing.proxied} |`,
    '',
    '| process | RSS after warm-up | RSS at the end | drift | RSS max | open handles after warm-up | at the end | drift | max | V8 heap used, after warm-up / end |',
    '|---|---|---|---|---|---|---|---|---|---|',
    row(0),
    row(1),
    '',
  ].join('\n');
  const current = await readFile(file, 'utf8');
  const start = current.indexOf('\n## Soak\n');
  const kept = start < 0 ? current : current.slice(0, start + 1) + (current.slice(start + 1).match(/\n## [\s\S]*$/)?.[0].slice(1) ?? '');
  await writeFile(file, `${kept.trimEnd()}\n\n${section}`);
}
