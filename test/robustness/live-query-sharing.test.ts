import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { applyLiveDelta, type LiveResult, type LiveResultDelta } from '../../examples/typed-client/src/live-frames.ts';
import pg from 'pg';
import { createToken } from '../../src/cli/commands.ts';
import { shareKey } from '../../src/query/live/share-key.ts';
import { peerKey } from '../../src/query/live/sharing.ts';
import { eventually } from '../support/instances.ts';
import { freePort, listening, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';
import { ADMIN, basic, call, startTestServer, type TestServer } from '../support/server.ts';
import { subscribe, type OpenSubscription } from '../support/sse.ts';

// Live queries watched through several instances on one database: one instance fetches each
// refresh (a lease in PostgreSQL), the others hand out its answer, every instance checks its own
// viewers at every refresh, and when the leader goes (shut down, connection cut, process killed)
// another one leads from the next refresh on.

const REFRESH_MS = 500;
/** One point per refresh, so that a range's end is the refresh it serves (the step aligns it). */
const PROM_JSON = { httpMethod: 'GET', timeInterval: '500ms' };

interface Call {
  expr: string;
  /** The range's end: the tick the call serves. */
  tick: number;
}

/** A Prometheus query_range API that counts its calls by the tick they serve. */
async function startProm() {
  const calls: Call[] = [];
  /** Expressions answered with an error (500) while listed. */
  const failing = new Set<string>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const expr = url.searchParams.get('query') ?? '';
    const start = Number(url.searchParams.get('start'));
    const end = Number(url.searchParams.get('end'));
    const step = Number(url.searchParams.get('step')) || 0.5;
    calls.push({ expr, tick: Math.round(end * 1000) });
    if (failing.has(expr)) {
      res.statusCode = 500;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ status: 'error', errorType: 'execution', error: `expanding series: ${expr} failed` }));
      return;
    }
    const values: Array<[number, string]> = [];
    for (let t = Math.ceil(start / step) * step; t <= end; t += step) values.push([t, String((t * 2) % 97)]);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric: { __name__: expr, job: 'shared' }, values }] } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    failing,
    /** Calls for `expr` serving each tick of `ticks`. */
    perTick: (expr: string, ticks: number[]) => ticks.map((t) => calls.filter((c) => c.expr === expr && c.tick === t).length),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const LIVE_QUERY = `subscription($queries: [JSONObject!]!, $from: String!, $to: String!, $refresh: String!) {
  liveQuery(queries: $queries, from: $from, to: $to, refresh: $refresh) {
    refreshedAt viewers results { refId kind status error errorSource frames { refId meta fields { name type labels { name value } config values } } appends { frame drop values } }
  }
}`;

const OVERRIDES = { live: { min_refresh: '200ms' }, dataproxy: { timeout: '2' } };

let prom: Awaited<ReturnType<typeof startProm>>;
let a: TestServer;
let b: TestServer;
let c: TestServer;
const open: OpenSubscription[] = [];
const extra: TestServer[] = [];

beforeAll(async () => {
  prom = await startProm();
  a = await startTestServer({ overrides: OVERRIDES });
  b = await startTestServer({ overrides: OVERRIDES, connection: a.connection });
  c = await startTestServer({ overrides: OVERRIDES, connection: a.connection });
  const created = await call(a, 'POST', '/api/datasources', { body: { name: 'prom-shared', uid: 'prom-shared', type: 'prometheus', access: 'proxy', url: prom.url, jsonData: PROM_JSON } });
  expect(created.status).toBe(200);
});

afterEach(async () => {
  for (const stream of open.splice(0)) stream.close();
  for (const server of [a, b, c]) await eventually(async () => server.app.liveQueries.subscribers, 0, 5000);
  for (const server of extra.splice(0)) await server.close().catch(() => undefined);
});

afterAll(async () => {
  await c?.close();
  await b?.close();
  await a?.close();
  await prom?.close();
});

const query = (expr: string) => [{ refId: 'A', datasource: { type: 'prometheus', uid: 'prom-shared' }, expr, range: true, intervalMs: REFRESH_MS }];

async function watch(server: { url: string }, expr: string, auth: string = ADMIN, requestId?: string): Promise<OpenSubscription> {
  const queries = query(expr).map((q) => (requestId ? { ...q, requestId } : q));
  const stream = await subscribe(server, LIVE_QUERY, { auth, variables: { queries, from: 'now-10s', to: 'now', refresh: `${REFRESH_MS}ms` } });
  expect(stream.status).toBe(200);
  open.push(stream);
  return stream;
}

const nexts = (s: OpenSubscription) => s.events.filter((e) => e.event === 'next' && e.data?.data);
const ticks = (s: OpenSubscription) => nexts(s).map((e) => e.data.data.liveQuery.refreshedAt as number);
/** Waits until each stream has seen `n` more refreshes than it had. */
const more = (streams: OpenSubscription | OpenSubscription[], n: number, ms = 10_000) => Promise.all([streams].flat().map((s) => {
  const have = nexts(s).length;
  return s.waitFor(() => nexts(s).length >= have + n, ms);
}));
/** The stream's last event before `complete`: its final error, if it ended with one. */
const finalError = (s: OpenSubscription) => s.events.filter((e) => e.event === 'next').at(-1)!.data.errors?.[0];

/** The client's view after the event of tick `at`: every event up to it applied, in order. */
function stateAt(s: OpenSubscription, at: number): Map<string, LiveResult> {
  let state = new Map<string, LiveResult>();
  for (const event of nexts(s)) {
    const live = event.data.data.liveQuery;
    if (live.refreshedAt > at) break;
    state = applyLiveDelta(state, live.results as LiveResultDelta[]);
  }
  return state;
}

/** Every refresh from `from` to `to`, on the clock. */
const every = (from: number, to: number) => Array.from({ length: (to - from) / REFRESH_MS + 1 }, (_, i) => from + i * REFRESH_MS);

/** The listening connection of the instance leading the most recently claimed shared query: the one whose session lock its lease names. */
async function leaderListenerPid(server: TestServer): Promise<number> {
  const [row] = await server.sql<{ pid: number }>(
    `select l.pid from live_query_lease q
       join pg_locks l on l.locktype = 'advisory' and l.granted and l.objsubid = 1
        and l.database = (select oid from pg_database where datname = current_database())
        and ((l.classid::bigint << 32) | l.objid::bigint) = q.holder
      order by q.tick desc limit 1`,
  );
  return row!.pid;
}

/**
 * Opens a first viewer on `leader` alone and waits until it has led two refreshes (nobody else
 * watches, so it holds the lease), then viewers on each of `followers`, who follow it.
 */
async function ledBy(leader: { url: string }, followers: TestServer[], expr: string) {
  const first = await watch(leader, expr);
  await more(first, 3);
  const streams = [];
  for (const follower of followers) streams.push(await watch(follower, expr));
  await more(streams, 2);
  return { first, streams };
}

describe('a live query watched through three instances', () => {
  it('is fetched once per refresh in all, and every viewer on every instance gets every refresh with the same frames', async () => {
    const viewer = await createToken(a.orm.em.fork(), { orgId: 1, role: 'Viewer', name: 'shared-viewer', secondsToLive: 0 });
    const streams: Array<{ server: TestServer; expr: string; stream: OpenSubscription }> = [];
    // Two queries, three viewers of each on each instance (another credential, another requestId).
    for (const expr of ['shared_a', 'shared_b']) {
      for (const server of [a, b, c]) {
        streams.push({ server, expr, stream: await watch(server, expr) });
        streams.push({ server, expr, stream: await watch(server, expr, `Bearer ${viewer}`) });
        streams.push({ server, expr, stream: await watch(server, expr, ADMIN, `tab-${streams.length}`) });
      }
    }
    const callsBefore = [a, b, c].map((s) => s.app.liveQueries.upstreamCalls);
    const followedBefore = [a, b, c].map((s) => s.app.liveQueries.followedAnswers);
    await more(streams.map((s) => s.stream), 6);

    for (const expr of ['shared_a', 'shared_b']) {
      const mine = streams.filter((s) => s.expr === expr).map((s) => s.stream);
      // The refreshes every viewer saw, past each one's first answer.
      const seen = mine.map((s) => new Set(ticks(s).slice(1)));
      const common = [...seen[0]!].filter((t) => seen.every((set) => set.has(t))).sort((x, y) => x - y);
      expect(common.length).toBeGreaterThanOrEqual(4);
      expect(common.every((t) => t % REFRESH_MS === 0)).toBe(true);
      const window = every(common[0]!, common.at(-1)!);
      // Nobody missed a refresh in between, and each was one upstream call in all.
      expect(common).toEqual(window);
      expect(prom.perTick(expr, window)).toEqual(window.map(() => 1));
      // A follower's frames are the leader's: every viewer's client holds the same at every refresh.
      for (const at of window) {
        const reference = [...stateAt(mine[0]!, at)];
        expect(reference[0]![1].frames![0]!.fields[1]!.values.length).toBeGreaterThan(0);
        for (const stream of mine.slice(1)) expect([...stateAt(stream, at)]).toEqual(reference);
      }
      // `viewers` counts the viewers of the instance that sent the event.
      for (const { stream } of streams.filter((s) => s.expr === expr)) expect(nexts(stream).at(-1)!.data.data.liveQuery.viewers).toBe(3);
    }
    // The runs of each query were on one instance, and the other two received them.
    const ran = [a, b, c].map((s, i) => s.app.liveQueries.upstreamCalls - callsBefore[i]!);
    const followed = [a, b, c].map((s, i) => s.app.liveQueries.followedAnswers - followedBefore[i]!);
    expect(ran.reduce((x, y) => x + y)).toBeGreaterThan(0);
    expect(followed.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  });

  it('checks each viewer on its own instance: one who loses access is ended there, the others keep every refresh', async () => {
    const login = 'shared-leaver';
    const created = await call(a, 'POST', '/api/admin/users', { body: { name: 'Leaver', login, email: `${login}@example.com`, password: 'leaver-pass-1' } });
    expect(created.status).toBe(200);
    // The viewer who will lose access is the only one on the leading instance (the hardest case:
    // the leader then has nobody to fetch for).
    const theirs = await watch(b, 'shared_access', basic(login, 'leaver-pass-1'));
    await more(theirs, 3);
    const others = [await watch(a, 'shared_access'), await watch(c, 'shared_access')];
    await more(others, 2);
    // Quietly (no notification): only the refresh's own check on B can notice.
    await a.sql(`begin; set local session_replication_role = replica; delete from org_user where user_id = ${created.body.id} and org_id = 1; commit;`);
    const last = await theirs.waitFor((e) => e.event === 'next' && Boolean(e.data.errors), 3000);
    expect(last.data.errors[0].extensions.code).toBe('FORBIDDEN');
    await theirs.ended;
    await more(others, 4);
    for (const stream of others) expect(stream.events.every((e) => !e.data?.errors)).toBe(true);
    // No refresh missed by the others, before, during or after the hand-over.
    const seen = others.map((s) => ticks(s).slice(1));
    const from = Math.max(...seen.map((t) => t[0]!));
    const to = Math.min(...seen.map((t) => t.at(-1)!));
    const window = every(from, to);
    for (const t of seen) expect(t.filter((x) => x >= from && x <= to)).toEqual(window);
    expect(prom.perTick('shared_access', window)).toEqual(window.map(() => 1));
  });
});

describe('when the leading instance goes', () => {
  /**
   * The leader went between `from` and `to` (epoch ms). A leader gone before a refresh is replaced
   * at that refresh: the followers miss none. One gone while it ran a refresh (after claiming it)
   * is replaced at the next: they miss that one. Then one call per refresh again.
   */
  async function tookOver(streams: OpenSubscription[], expr: string, from: number, to: number) {
    await more(streams, 4);
    const missed = Math.floor(to / REFRESH_MS) === Math.floor(from / REFRESH_MS) ? 0 : 1;
    for (const stream of streams) {
      const seen = ticks(stream).slice(1);
      const before = seen.filter((t) => t <= from).at(-1)!;
      const after = seen.filter((t) => t > before);
      expect(after[0]! - before).toBeLessThanOrEqual((missed + 1) * REFRESH_MS);
      expect(after).toEqual(every(after[0]!, after.at(-1)!));
      expect(stream.events.every((e) => !e.data?.errors)).toBe(true);
    }
    const first = Math.min(...streams.map((s) => ticks(s).find((t) => t > from)!));
    const last = Math.min(...streams.map((s) => ticks(s).at(-1)!));
    const window = every(first, last);
    expect(prom.perTick(expr, window)).toEqual(window.map(() => 1));
  }

  /** Right after the followers got a refresh's answer: the leader then goes between two refreshes. */
  const betweenRefreshes = (streams: OpenSubscription[]) => more(streams, 1);

  /** Until PostgreSQL has ended the backend `pid` (and so freed its locks). */
  const backendGone = (pid: number) => eventually(async () => (await a.sql('select 1 from pg_stat_activity where pid = $1', [pid])).length, 0, 2000);

  it('shutting down, hands over: another instance leads the very next refresh', async () => {
    const leaving = await startTestServer({ overrides: OVERRIDES, connection: a.connection });
    extra.push(leaving);
    const { first, streams } = await ledBy(leaving, [a, b], 'shared_shutdown');
    await betweenRefreshes(streams);
    const from = Date.now();
    await leaving.close();
    const to = Date.now();
    expect(finalError(first).extensions.code).toBe('UNAVAILABLE');
    await tookOver(streams, 'shared_shutdown', from, to);
  });

  it('cut off from the database, is replaced within one refresh', async () => {
    const cut = await startTestServer({ overrides: OVERRIDES, connection: a.connection });
    extra.push(cut);
    const { first, streams } = await ledBy(cut, [a, b], 'shared_cut');
    const pid = await leaderListenerPid(a);
    await betweenRefreshes(streams);
    const from = Date.now();
    await a.sql('select pg_terminate_backend($1)', [pid]);
    await backendGone(pid);
    const to = Date.now();
    // Its own viewers are told to come back (its change feed is lost), the others go on.
    await first.ended;
    expect(finalError(first).extensions.code).toBe('UNAVAILABLE');
    await tookOver(streams, 'shared_cut', from, to);
  });

  it('killed (SIGKILL), is replaced within one refresh', async () => {
    const port = await freePort();
    const data = await mkdtemp(join(tmpdir(), 'dashgate-shared-'));
    const db = a.connection;
    let main: MainProcess | null = null;
    try {
      main = spawnMain({
        env: {
          GF_SERVER_HTTP_ADDR: '127.0.0.1', GF_SERVER_HTTP_PORT: String(port), GF_PATHS_DATA: data, GF_LOG_LEVEL: 'info',
          GF_DATABASE_TYPE: 'postgres', GF_DATABASE_HOST: `${db.host}:${db.port}`, GF_DATABASE_NAME: db.database, GF_DATABASE_USER: db.user, GF_DATABASE_PASSWORD: db.password ?? '',
          // Its own key: the data source it queries holds no secret.
          GF_SECURITY_SECRET_KEY: 'live-query-sharing-test-key-0123456789', GF_LIVE_MIN_REFRESH: '200ms',
        },
      });
      await listening(main);
      const { streams } = await ledBy({ url: `http://127.0.0.1:${port}` }, [a, b], 'shared_killed');
      const pid = await leaderListenerPid(a);
      await betweenRefreshes(streams);
      const from = Date.now();
      main.child.kill('SIGKILL');
      await main.exited;
      // Its sessions end as PostgreSQL reads the closed connections.
      await backendGone(pid);
      const to = Date.now();
      await tookOver(streams, 'shared_killed', from, to);
    } finally {
      if (main) await stopMain(main);
      await rm(data, { recursive: true, force: true });
    }
  }, 120_000);

  it('alive but no longer claiming (stuck), is replaced after one missed refresh', async () => {
    // A lease held by a session that is alive but claims nothing: an instance whose event loop stalled.
    const stuck = new pg.Client(a.connection);
    await stuck.connect();
    try {
      const holder = '2305843009213693953';
      await stuck.query('select pg_advisory_lock($1::bigint)', [holder]);
      const expr = 'shared_stuck';
      const key = peerKey(shareKey({ orgId: 1, queries: query(expr), from: 'now-10s', to: 'now', refreshMs: REFRESH_MS }));
      const now = Date.now();
      await stuck.query('insert into live_query_lease (key, holder, tick, refresh_ms) values ($1, $2, $3, $4)', [key, holder, Math.floor(now / REFRESH_MS) * REFRESH_MS, REFRESH_MS]);
      const streams = [await watch(a, expr), await watch(b, expr)];
      await more(streams, 4);
      for (const stream of streams) {
        const seen = ticks(stream);
        // Its first answer (a run of its own), then at most one refresh missed, then every one.
        expect(seen[1]! - seen[0]!).toBeLessThanOrEqual(3 * REFRESH_MS);
        expect(seen.slice(1)).toEqual(every(seen[1]!, seen.at(-1)!));
      }
      const [lease] = await a.sql<{ holder: string }>('select holder from live_query_lease where key = $1', [key]);
      expect(lease!.holder).not.toBe(holder);
      const window = every(Math.max(...streams.map((s) => ticks(s)[1]!)), Math.min(...streams.map((s) => ticks(s).at(-1)!)));
      expect(prom.perTick(expr, window)).toEqual(window.map(() => 1));
    } finally {
      await stuck.end();
    }
  });
});

describe('what followers hand out is what the leader does', () => {
  it('an upstream error: the same error event on every instance, once, then the recovery', async () => {
    const { first, streams } = await ledBy(a, [b, c], 'shared_flaky');
    const all = [first, ...streams];
    prom.failing.add('shared_flaky');
    const failed = await Promise.all(all.map((s) => s.waitFor((e) => e.event === 'next' && e.data.data?.liveQuery.results[0]?.error != null)));
    const [reference, ...others] = failed.map((e) => e.data.data.liveQuery);
    expect(reference.results[0]).toMatchObject({ kind: 'REPLACE', status: 500, errorSource: 'downstream' });
    expect(reference.results[0].error).toContain('expanding series: shared_flaky failed');
    for (const other of others) expect(other).toEqual({ ...reference, viewers: other.viewers });
    // The same error at later refreshes is not resent, by the leader or its followers.
    await more(all, 3);
    for (const stream of all) {
      const after = nexts(stream).filter((e) => e.data.data.liveQuery.refreshedAt > reference.refreshedAt);
      expect(after.length).toBeGreaterThanOrEqual(3);
      expect(after.flatMap((e) => e.data.data.liveQuery.results)).toEqual([]);
    }
    prom.failing.delete('shared_flaky');
    await Promise.all(all.map((s) => s.waitFor((e) => e.event === 'next' && e.data.data?.liveQuery.refreshedAt > reference.refreshedAt && e.data.data.liveQuery.results[0]?.status === 200)));
  });

  it('a data source deleted: every stream on every instance ends with the final NOT_FOUND event, and nothing polls it any more', async () => {
    const created = await call(a, 'POST', '/api/datasources', { body: { name: 'prom-shared-gone', uid: 'prom-shared-gone', type: 'prometheus', access: 'proxy', url: prom.url, jsonData: PROM_JSON } });
    expect(created.status).toBe(200);
    const gone = [{ ...query('shared_gone')[0]!, datasource: { type: 'prometheus', uid: 'prom-shared-gone' } }];
    const start = async (server: { url: string }) => {
      const stream = await subscribe(server, LIVE_QUERY, { variables: { queries: gone, from: 'now-10s', to: 'now', refresh: `${REFRESH_MS}ms` } });
      open.push(stream);
      return stream;
    };
    const first = await start(c);
    await more(first, 3);
    const streams = [first, await start(a), await start(b)];
    await more(streams, 2);
    expect((await call(b, 'DELETE', `/api/datasources/${created.body.id}`)).status).toBe(200);
    for (const stream of streams) {
      await stream.ended;
      expect(finalError(stream)).toMatchObject({ message: 'Data source not found (deleted, or its uid changed); this live query has ended', extensions: { code: 'NOT_FOUND' } });
      expect(stream.events.at(-1)!.event).toBe('complete');
    }
    const calls = prom.calls.filter((x) => x.expr === 'shared_gone').length;
    await new Promise((resolve) => setTimeout(resolve, 3 * REFRESH_MS));
    expect(prom.calls.filter((x) => x.expr === 'shared_gone').length).toBe(calls);
    for (const server of [a, b, c]) expect(server.app.liveQueries.active).toBe(0);
  });

  it('an answer larger than [live] max_shared_answer_bytes is not shared: each instance runs that refresh itself', async () => {
    const small = await startTestServer({ overrides: { ...OVERRIDES, live: { ...OVERRIDES.live, max_shared_answer_bytes: '64' } }, connection: a.connection });
    extra.push(small);
    const { first, streams } = await ledBy(small, [a], 'shared_large');
    await more([first, ...streams], 3);
    const seen = [first, ...streams].map((s) => ticks(s).slice(1));
    const from = Math.max(...seen.map((t) => t[0]!));
    const to = Math.min(...seen.map((t) => t.at(-1)!));
    const window = every(from, to);
    for (const t of seen) expect(t.filter((x) => x >= from && x <= to)).toEqual(window);
    // The leader's call, and the follower's own.
    expect(prom.perTick('shared_large', window)).toEqual(window.map(() => 2));
    expect([...stateAt(streams[0]!, to)]).toEqual([...stateAt(first, to)]);
    expect(small.logs.some((l) => String(l.msg).includes('larger than [live] max_shared_answer_bytes'))).toBe(true);
  });
});
