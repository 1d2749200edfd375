import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { applyLiveDelta, type LiveResult, type LiveResultDelta } from '../../../examples/typed-client/src/live-frames.ts';
import type { Principal } from '../../../src/auth/principal.ts';
import { createToken } from '../../../src/cli/commands.ts';
import { DEFAULT_MAX_CHARS, MAX_JSON_BYTES } from '../../../src/graphql/input-limits.ts';
import type { LiveQueryEvent } from '../../../src/query/live/live-queries.ts';
import { rangeAt } from '../../../src/query/live/timing.ts';
import { StreamEnd } from '../../../src/live/stream.ts';
import { eventually } from '../../support/instances.ts';
import { ADMIN, call, gql, startTestServer, type TestServer } from '../../support/server.ts';
import { subscribe, type OpenSubscription } from '../../support/sse.ts';

// Live queries through the server's own query service (the Prometheus kind, as POST /api/ds/query
// runs it) against a real HTTP upstream that answers Prometheus' query_range and counts what
// reaches it.

const REFRESH = '500ms';
const REFRESH_MS = 500;

interface PromUpstream {
  url: string;
  /** Every query_range call: its expression and the `end` of its range (the tick it serves). */
  calls: Array<{ expr: string; end: number }>;
  inFlight: number;
  maxInFlight: number;
  /** Expressions answered with an error (500) while listed. */
  failing: Set<string>;
  /** Expressions whose calls are held unanswered while listed. */
  hanging: Set<string>;
  close(): Promise<void>;
}

/** A tiny Prometheus: every series' value at t is `base + t mod 97`, one point per second. */
async function startProm(base: number): Promise<PromUpstream> {
  const held: ServerResponse[] = [];
  const state = { calls: [] as PromUpstream['calls'], inFlight: 0, maxInFlight: 0, failing: new Set<string>(), hanging: new Set<string>() };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const expr = url.searchParams.get('query') ?? '';
    const start = Number(url.searchParams.get('start'));
    const end = Number(url.searchParams.get('end'));
    state.calls.push({ expr, end: end * 1000 });
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    res.on('close', () => state.inFlight--);
    if (state.hanging.has(expr)) {
      held.push(res);
      return;
    }
    res.setHeader('content-type', 'application/json');
    if (state.failing.has(expr)) {
      res.statusCode = 500;
      res.end(JSON.stringify({ status: 'error', errorType: 'execution', error: `expanding series: ${expr} failed` }));
      return;
    }
    const values: Array<[number, string]> = [];
    for (let t = Math.ceil(start); t <= end; t++) values.push([t, String(base + (t % 97))]);
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric: { __name__: expr, job: 'live' }, values }] } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get calls() { return state.calls; },
    get inFlight() { return state.inFlight; },
    get maxInFlight() { return state.maxInFlight; },
    failing: state.failing,
    hanging: state.hanging,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a client keeping frames current selects of `DataFrame`: each field's `values`, not its typed columns. */
const FRAME = 'refId meta length fields { name type goType labels { name value } config values nanos }';

const LIVE_QUERY = `subscription($queries: [JSONObject!]!, $from: String!, $to: String!, $refresh: String!) {
  liveQuery(queries: $queries, from: $from, to: $to, refresh: $refresh) {
    refreshedAt viewers results { refId kind status error errorSource frames { ${FRAME} } appends { frame drop values nanos } }
  }
}`;

let server: TestServer;
let promA: PromUpstream;
let promB: PromUpstream;
const open: OpenSubscription[] = [];

beforeAll(async () => {
  promA = await startProm(0);
  promB = await startProm(1000);
  server = await startTestServer({
    overrides: { live: { min_refresh: '200ms' }, dataproxy: { timeout: '1' } },
  });
  const created = await call(server, 'POST', '/api/datasources', { body: { name: 'prom-live', uid: 'prom-live', type: 'prometheus', access: 'proxy', url: promA.url, jsonData: PROM_JSON } });
  expect(created.status).toBe(200);
});

afterEach(async () => {
  for (const stream of open.splice(0)) stream.close();
  await eventually(async () => server.app.liveQueries!.subscribers, 0, 5000);
  promA.failing.clear();
  promA.hanging.clear();
});

afterAll(async () => {
  await server?.close();
  await promA?.close();
  await promB?.close();
});

/** GET calls (the upstream reads the URL), one point a second. */
const PROM_JSON = { httpMethod: 'GET', timeInterval: '1s' };

const up = (extra: Record<string, unknown> = {}) => ({ refId: 'A', datasource: { type: 'prometheus', uid: 'prom-live' }, expr: 'up', range: true, intervalMs: 1000, ...extra });

async function watch(queries: Array<Record<string, unknown>>, auth: string = ADMIN, extra: Record<string, string> = {}): Promise<OpenSubscription> {
  const stream = await subscribe(server, LIVE_QUERY, { auth, variables: { queries, from: 'now-10s', to: 'now', refresh: REFRESH, ...extra } });
  open.push(stream);
  return stream;
}

/** The client's view of one stream: every event applied, in order. */
function applied(stream: OpenSubscription, upTo = stream.events.length): Map<string, LiveResult> {
  let state = new Map<string, LiveResult>();
  for (const event of stream.events.slice(0, upTo)) {
    if (event.event !== 'next' || !event.data.data) continue;
    state = applyLiveDelta(state, event.data.data.liveQuery.results as LiveResultDelta[]);
  }
  return state;
}

function live(event: { data: any }): { refreshedAt: number; viewers: number; results: LiveResultDelta[] } {
  return event.data.data.liveQuery;
}

async function token(orgId: number, role: string): Promise<{ auth: string; keyId: number }> {
  const key = await createToken(server.orm.em.fork(), { orgId, role, name: `live-${Math.random().toString(36).slice(2)}`, secondsToLive: 0 });
  const [row] = await server.sql<{ id: number }>('select id from api_key order by id desc limit 1');
  return { auth: `Bearer ${key}`, keyId: row!.id };
}

/** A service account of org 1 with `role` and one token, through the REST API. */
async function serviceAccountToken(role: string): Promise<{ auth: string; keyId: number; accountId: number }> {
  const account = await call(server, 'POST', '/api/serviceaccounts', { body: { name: `live-sa-${Math.random().toString(36).slice(2)}`, role } });
  const key = await call(server, 'POST', `/api/serviceaccounts/${account.body.id}/tokens`, { body: { name: `live-${account.body.id}` } });
  expect(key.status).toBe(200);
  return { auth: `Bearer ${key.body.key}`, keyId: key.body.id, accountId: account.body.id };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('liveQuery: one upstream run per tick, however many watch', () => {
  it('serves every subscriber of one query from one call per tick, on ticks aligned on the clock', async () => {
    const viewer = await token(1, 'Viewer');
    const streams = await Promise.all([
      watch([up()]),
      watch([up({ requestId: 'Q1' })]),
      watch([{ intervalMs: 1000, range: true, expr: 'up', refId: 'A', datasource: { uid: 'prom-live' } }]),
      watch([up()], viewer.auth),
      watch([up({ requestId: 'Q9', maxDataPoints: 100 })], viewer.auth),
    ]);
    for (const stream of streams) expect(stream.status).toBe(200);
    expect(server.app.liveQueries!.active).toBe(1);
    for (const stream of streams) await stream.waitFor((e) => e.event === 'next' && live(e).refreshedAt % REFRESH_MS === 0 && stream.events.filter((x) => x.event === 'next').length >= 4, 5000);

    // One upstream call per run, one run per tick: as many calls as distinct ticks any viewer saw
    // (plus, at most, the run of a tick whose event is still on its way).
    const calls = promA.calls.filter((c) => c.expr === 'up').length;
    const ticks = (s: OpenSubscription) => s.events.filter((e) => e.event === 'next').map((e) => live(e).refreshedAt);
    const seen = new Set(streams.flatMap(ticks));
    expect(calls - seen.size).toBeGreaterThanOrEqual(0);
    expect(calls - seen.size).toBeLessThanOrEqual(1);
    // Every viewer saw the same ticks, on multiples of the refresh after the first answer.
    const common = ticks(streams[0]!).slice(1).filter((t) => streams.every((s) => ticks(s).includes(t)));
    expect(common.length).toBeGreaterThanOrEqual(2);
    expect(common.every((t) => t % REFRESH_MS === 0)).toBe(true);
    expect(live(streams[0]!.events.at(-1)!).viewers).toBe(5);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^dashgate_live_queries_active 1$/m);
    expect(metrics).toMatch(/^dashgate_live_query_subscribers 5$/m);
    expect(Number(/^dashgate_live_query_upstream_calls_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(calls);
    expect(metrics).toMatch(/^dashgate_live_query_skipped_ticks_total \d+$/m);
  });

  it('never shares between orgs: the same query in another org runs against that org\'s own data source', async () => {
    const created = await call(server, 'POST', '/api/orgs', { body: { name: `live-org-${Date.now()}` } });
    const orgId = created.body.orgId as number;
    const admin2 = await token(orgId, 'Admin');
    const ds = await call(server, 'POST', '/api/datasources', { auth: admin2.auth, body: { name: 'prom-live', uid: 'prom-live', type: 'prometheus', access: 'proxy', url: promB.url, jsonData: PROM_JSON } });
    expect(ds.status).toBe(200);
    const [one, two] = await Promise.all([watch([up()]), watch([up()], admin2.auth)]);
    const first = await one.next();
    const second = await two.next();
    expect(server.app.liveQueries!.active).toBe(2);
    const valueOf = (e: { data: any }) => live(e).results[0]!.frames![0]!.fields[1]!.values[0] as number;
    expect(valueOf(first)).toBeLessThan(1000);
    expect(valueOf(second)).toBeGreaterThanOrEqual(1000);
    expect(live(first).viewers).toBe(1);
  });
});

describe('liveQuery: only what changed', () => {
  it('sends the frames at once, then appended rows; the client equals a fresh query at every tick', async () => {
    const stream = await watch([up(), up({ refId: 'B', expr: 'other' })]);
    const first = await stream.next();
    expect(live(first).results.map((r) => [r.refId, r.kind, r.status])).toEqual([['A', 'REPLACE', 200], ['B', 'REPLACE', 200]]);
    let appends = 0;
    for (let i = 0; i < 5; i++) {
      const event = await stream.next();
      const { refreshedAt, results } = live(event);
      for (const r of results) {
        expect(r.kind).toBe('APPEND');
        appends++;
      }
      // A fresh query over the same range, as a new viewer (or dataQuery) would get it at this tick.
      const range = rangeAt('now-10s', 'now', refreshedAt);
      const fresh = await gql(server, `query($queries: [JSONObject!]!, $from: String!, $to: String!) { dataQuery(queries: $queries, from: $from, to: $to) { results { refId status frames { ${FRAME} } } } }`,
        { queries: [up(), up({ refId: 'B', expr: 'other' })], ...range });
      const state = applied(stream);
      expect([...state.keys()].sort()).toEqual(['A', 'B']);
      for (const result of fresh.body.data!.dataQuery.results) expect(state.get(result.refId)!.frames).toEqual(result.frames);
    }
    // One point a second at two ticks a second: about every other tick moves each frame.
    expect(appends).toBeGreaterThanOrEqual(2);
  });
});

describe('liveQuery: failures and back-pressure', () => {
  it('turns an upstream error into the refId\'s error event and goes on', async () => {
    const stream = await watch([up({ expr: 'flaky' })]);
    expect(live(await stream.next()).results[0]).toMatchObject({ kind: 'REPLACE', status: 200 });
    promA.failing.add('flaky');
    const failed = await stream.waitFor((e) => e.event === 'next' && live(e).results[0]?.error != null);
    expect(live(failed).results[0]).toMatchObject({ refId: 'A', kind: 'REPLACE', errorSource: 'downstream' });
    expect(live(failed).results[0]!.error).toContain('expanding series: flaky failed');
    promA.failing.delete('flaky');
    const back = await stream.waitFor((e) => e.event === 'next' && e.at > failed.at && live(e).results[0]?.kind === 'REPLACE' && live(e).results[0]?.status === 200);
    expect(live(back).results[0]!.frames).toHaveLength(1);
    expect(stream.events.some((e) => e.event === 'complete')).toBe(false);
  });

  it('sends an unchanged error once, not at every refresh, while the runs go on', async () => {
    const stream = await watch([up({ expr: 'broken' }), up({ refId: 'B', expr: 'fine' })]);
    await stream.next();
    promA.failing.add('broken');
    const failed = await stream.waitFor((e) => e.event === 'next' && live(e).results.some((r) => r.refId === 'A' && r.error != null));
    const callsThen = promA.calls.filter((c) => c.expr === 'broken').length;
    // Several refreshes later: each still ran (and B moved on), none resent A's error.
    await stream.waitFor((e) => e.at > failed.at && stream.events.filter((x) => x.at > failed.at && x.event === 'next').length >= 4, 5000);
    const after = stream.events.filter((e) => e.at > failed.at && e.event === 'next');
    expect(after.length).toBeGreaterThanOrEqual(4);
    expect(after.flatMap((e) => live(e).results.filter((r) => r.refId === 'A'))).toEqual([]);
    expect(after.some((e) => live(e).results.some((r) => r.refId === 'B' && r.kind === 'APPEND'))).toBe(true);
    expect(promA.calls.filter((c) => c.expr === 'broken').length).toBeGreaterThanOrEqual(callsThen + 3);
    // The client's view still holds the error, as a fresh query would answer.
    expect(applied(stream).get('A')).toMatchObject({ status: 500, errorSource: 'downstream' });
    expect(applied(stream).get('A')!.error).toContain('expanding series: broken failed');
    // A change of the failure is sent: here, the recovery.
    promA.failing.delete('broken');
    const back = await stream.waitFor((e) => e.event === 'next' && e.at > failed.at && live(e).results.some((r) => r.refId === 'A' && r.status === 200), 5000);
    expect(live(back).results.find((r) => r.refId === 'A')).toMatchObject({ kind: 'REPLACE' });
  });

  it('a data source deleted mid-stream ends every stream of the query with a final NOT_FOUND event; nothing polls it any more', async () => {
    const created = await call(server, 'POST', '/api/datasources', { body: { name: 'prom-gone', uid: 'prom-gone', type: 'prometheus', access: 'proxy', url: promA.url, jsonData: PROM_JSON } });
    const viewer = await token(1, 'Viewer');
    const gone = up({ datasource: { uid: 'prom-gone' }, expr: 'gone' });
    const streams = await Promise.all([watch([gone]), watch([gone], viewer.auth)]);
    for (const stream of streams) await stream.next();
    expect((await call(server, 'DELETE', `/api/datasources/${created.body.id}`)).status).toBe(200);
    for (const stream of streams) {
      await stream.ended;
      const nexts = stream.events.filter((e) => e.event === 'next');
      expect(nexts.at(-1)!.data.errors[0]).toMatchObject({ message: 'Data source not found (deleted, or its uid changed); this live query has ended', extensions: { code: 'NOT_FOUND' } });
      // The first tick after the deletion ended it (at most a run already under way reported a 404 first).
      expect(nexts.slice(0, -1).filter((e) => live(e).results.some((r) => r.status === 404)).length).toBeLessThanOrEqual(1);
      expect(stream.events.at(-1)!.event).toBe('complete');
    }
    expect(server.app.liveQueries!.active).toBe(0);
    const calls = promA.calls.filter((c) => c.expr === 'gone').length;
    await sleep(3 * REFRESH_MS);
    expect(promA.calls.filter((c) => c.expr === 'gone').length).toBe(calls);
  });

  it('skips ticks while a run hangs, reports the timeout, and never stacks calls', async () => {
    const before = server.app.liveQueries!.skippedTicks;
    const stream = await watch([up({ expr: 'stuck' })]);
    await stream.next();
    promA.hanging.add('stuck');
    const timedOut = await stream.waitFor((e) => e.event === 'next' && live(e).results[0]?.error != null, 5000);
    expect(live(timedOut).results[0]).toMatchObject({ kind: 'REPLACE', status: 504, errorSource: 'downstream' });
    // 1 s timeout, 500 ms refresh: the ticks meanwhile were skipped, not stacked.
    expect(server.app.liveQueries!.skippedTicks).toBeGreaterThan(before);
    expect(promA.maxInFlight).toBe(1);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(Number(/^dashgate_live_query_skipped_ticks_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    promA.hanging.delete('stuck');
    await stream.waitFor((e) => e.event === 'next' && e.at > timedOut.at && live(e).results[0]?.status === 200, 5000);
  });

  it('a reader that does not read holds one latest state, and gets the change to the newest answer', async () => {
    const liveQueries = server.app.liveQueries!;
    const admin: Principal = { kind: 'user', userId: 1, login: 'admin', orgId: 1, orgRole: 'Admin', isServerAdmin: true, method: 'basic' };
    const request = { principal: admin, authorize: () => undefined };
    const query = { queries: [up({ expr: 'slow-reader' })], from: 'now-10s', to: 'now', refresh: REFRESH };
    const fast = subscribe(server, LIVE_QUERY, { variables: query });
    const slow = (await liveQueries.open(request, query)) as AsyncIterableIterator<LiveQueryEvent | StreamEnd>;
    try {
      const firstEvent = (await slow.next()).value as LiveQueryEvent;
      const fastStream = await fast;
      open.push(fastStream);
      // Several ticks pass while the slow reader reads nothing; the fast one gets each of them.
      await fastStream.waitFor(() => fastStream.events.filter((e) => e.event === 'next').length >= 5, 5000);
      await sleep(50);
      const next = (await slow.next()).value as LiveQueryEvent;
      expect(next.refreshedAt).toBeGreaterThan(firstEvent.refreshedAt + 2 * REFRESH_MS);
      // Its one event brings it from its first answer to the newest, as the fast reader's many did.
      let state = applyLiveDelta(new Map(), JSON.parse(JSON.stringify(firstEvent.results.map(toWire))));
      state = applyLiveDelta(state, JSON.parse(JSON.stringify(next.results.map(toWire))));
      const fastAt = fastStream.events.findIndex((e) => e.event === 'next' && live(e).refreshedAt === next.refreshedAt);
      expect(fastAt).toBeGreaterThan(0);
      const columns = (results: Map<string, LiveResult>) => [...results].map(([refId, r]) => [refId, r.frames?.map((f) => f.fields.map((field) => field.values))]);
      expect(columns(state)).toEqual(columns(applied(fastStream, fastAt + 1)));
    } finally {
      await slow.return!();
    }
  });
});

/** The server delta as the GraphQL field writes it (for the reader that reads the live queries directly). */
function toWire(d: LiveQueryEvent['results'][number]): LiveResultDelta {
  if (d.kind === 'replace') return { refId: d.refId, kind: 'REPLACE', status: d.response.status ?? 200, error: d.response.error ?? null, errorSource: d.response.error !== undefined ? (d.response.errorSource ?? '') : null, frames: (d.response.frames ?? null) as never };
  if (d.kind === 'append') return { refId: d.refId, kind: 'APPEND', appends: d.appends };
  return { refId: d.refId, kind: 'REMOVE' };
}

describe('liveQuery: the caller\'s rights at every tick', () => {
  /** Runs `statement` without the triggers that notify credential changes: only the tick's own recheck can notice. */
  const quietly = (statement: string) => server.sql(`begin; set local session_replication_role = replica; ${statement}; commit;`);

  it.each([
    ['a revoked token', (sa: { keyId: number }) => `update api_key set is_revoked = true where id = ${sa.keyId}`, 'UNAUTHENTICATED'],
    ['a disabled service account', (sa: { accountId: number }) => `update "user" set is_disabled = true where id = ${sa.accountId}`, 'UNAUTHENTICATED'],
  ])('%s ends the stream at the next tick; the others sharing the query go on', async (_name, change, code) => {
    const viewer = await serviceAccountToken('Viewer');
    const [theirs, mine] = await Promise.all([watch([up()], viewer.auth), watch([up()])]);
    await theirs.next();
    await quietly(change(viewer));
    const last = await theirs.waitFor((e) => e.event === 'next' && Boolean(e.data.errors), 3 * REFRESH_MS + 2000);
    expect(last.data.errors[0].extensions.code).toBe(code);
    await theirs.ended;
    expect(theirs.events.at(-1)!.event).toBe('complete');
    const seen = mine.events.length;
    await mine.waitFor(() => mine.events.length > seen + 1, 3000);
    expect(mine.events.every((e) => !e.data?.errors)).toBe(true);
  });

  it.each([
    ['disabled', (id: number) => `update "user" set is_disabled = true where id = ${id}`, 'UNAUTHENTICATED'],
    ['removed from the org', (id: number) => `delete from org_user where user_id = ${id} and org_id = 1`, 'FORBIDDEN'],
  ])('a user %s is ended at the next tick', async (name, change, code) => {
    const login = `live-${name.split(' ')[0]}`;
    const created = await call(server, 'POST', '/api/admin/users', { body: { name: 'Live', login, email: `${login}@example.com`, password: 'live-pass-1' } });
    expect(created.status).toBe(200);
    const stream = await watch([up()], `Basic ${Buffer.from(`${login}:live-pass-1`).toString('base64')}`);
    await stream.next();
    await quietly(change(created.body.id));
    const last = await stream.waitFor((e) => e.event === 'next' && Boolean(e.data.errors), 3000);
    expect(last.data.errors[0].extensions.code).toBe(code);
  });
});

describe('liveQuery: what it refuses', () => {
  it.each([
    [{ refresh: '100ms' }, 'BAD_REQUEST', 'Refresh "100ms" is shorter than the server\'s minimum of 200ms'],
    [{ refresh: 'often' }, 'BAD_REQUEST', 'Invalid refresh "often": a duration such as 5s, 1m or 1m30s'],
    [{ from: 'yesterday' }, 'BAD_REQUEST', 'Invalid time "yesterday": epoch milliseconds, a duration such as 5m, or now-based date math such as now-1h'],
  ])('%j', async (extra, code, message) => {
    const stream = await watch([up()], ADMIN, extra);
    expect(stream.status).toBe(400);
    await stream.ended;
    expect(stream.events[0]!.data.errors[0]).toMatchObject({ message, extensions: { code } });
  });

  it('checks its arguments\' sizes when it opens', async () => {
    const big = await watch([up({ expr: 'x'.repeat(MAX_JSON_BYTES) })]);
    expect(big.status).toBe(400);
    await big.ended;
    expect(big.events[0]!.data.errors[0]).toMatchObject({ message: `queries is too large (at most ${MAX_JSON_BYTES} bytes of JSON)`, extensions: { code: 'BAD_REQUEST' } });
    const long = await watch([up()], ADMIN, { from: `now-${'1'.repeat(DEFAULT_MAX_CHARS)}h` });
    expect(long.status).toBe(400);
    await long.ended;
    expect(long.events[0]!.data.errors[0].message).toBe(`from is too long (at most ${DEFAULT_MAX_CHARS} characters)`);
  });

  it('a refresh longer than a timer can wait (10000w) runs once per refresh, not in a loop', async () => {
    const stream = await watch([up({ expr: 'monthly' })], ADMIN, { refresh: '10000w' });
    expect(stream.status).toBe(200);
    expect(live(await stream.next()).results[0]).toMatchObject({ kind: 'REPLACE', status: 200 });
    await sleep(1000);
    expect(promA.calls.filter((c) => c.expr === 'monthly')).toHaveLength(1);
    expect(stream.events).toHaveLength(1);
  });

  it('refuses an unknown data source at once, and leaves nothing running', async () => {
    const unknown = await watch([up({ datasource: { uid: 'nope' } })]);
    expect(unknown.status).toBe(404);
    await unknown.ended;
    expect(unknown.events[0]!.data.errors[0]).toMatchObject({ message: 'Data source not found', extensions: { code: 'NOT_FOUND' } });
    expect(server.app.liveQueries!.active).toBe(0);
    expect(server.app.live.open).toBe(0);
  });
});

describe('liveQuery: a budget of data source calls per caller ([live] max_upstream_calls_per_second, 50 by default)', () => {
  const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => up({ refId: `R${i}`, expr: `${prefix}${i}` }));

  it('refuses a subscription that would take its caller past the limit, counts a query it already watches once, and frees what ends', async () => {
    // 25 queries every 500ms: 50 calls a second, the whole default budget.
    const full = await watch(many(25, 'b'));
    expect(full.status).toBe(200);
    await full.next();

    const refused = await watch([up({ expr: 'one-more' })]);
    expect(refused.status).toBe(429);
    await refused.ended;
    expect(refused.events[0]!.data.errors[0]).toMatchObject({
      message: 'Too many data source calls per second for these credentials\' live queries (limit 50): this one would add 2/s (1 query every 500ms) to the 50/s already watched; refresh less often or query less',
      extensions: { code: 'TOO_MANY_REQUESTS' },
    });
    // Nothing of it ran.
    expect(promA.calls.some((c) => c.expr === 'one-more')).toBe(false);

    // The same live query again (another tab, its own requestIds) costs nothing more.
    const again = await watch(many(25, 'b').map((q) => ({ ...q, requestId: 'tab-2' })));
    expect(again.status).toBe(200);
    // Another caller has its own budget.
    const viewer = await token(1, 'Viewer');
    const theirs = await watch([up({ expr: 'theirs' })], viewer.auth);
    expect(theirs.status).toBe(200);
    // One subscription at a time is refused, not the whole caller: the open ones go on.
    const seen = full.events.length;
    await full.waitFor(() => full.events.length > seen, 3000);
    expect(full.events.every((e) => !e.data?.errors)).toBe(true);

    // Once both of its subscriptions end, the big query's share is free again.
    full.close();
    again.close();
    await eventually(async () => server.app.liveQueries!.subscribers, 1, 5000);
    const fits = await watch([up({ expr: 'one-more' })]);
    expect(fits.status).toBe(200);
  });

  it('a query too big on its own is refused, whatever the caller holds', async () => {
    const refused = await watch(many(200, 'big'), ADMIN, { refresh: '1s' });
    expect(refused.status).toBe(429);
    await refused.ended;
    expect(refused.events[0]!.data.errors[0].message).toContain('this one would add 200/s (200 queries every 1s) to the 0/s already watched');
    // At a refresh the budget allows, the same query is served.
    const slower = await watch(many(200, 'big'), ADMIN, { refresh: '4s' });
    expect(slower.status).toBe(200);
    expect(live(await slower.next(10_000)).results).toHaveLength(200);
  });
});

describe('liveQuery at shutdown', () => {
  it('ends every stream with the final UNAVAILABLE event', async () => {
    const own = await startTestServer({ overrides: { live: { min_refresh: '200ms' } } });
    try {
      await call(own, 'POST', '/api/datasources', { body: { name: 'prom-live', uid: 'prom-live', type: 'prometheus', access: 'proxy', url: promA.url, jsonData: PROM_JSON } });
      const streams = await Promise.all([1, 2, 3].map((i) => subscribe(own, LIVE_QUERY, { variables: { queries: [up({ expr: `s${i % 2}` })], from: 'now-10s', to: 'now', refresh: REFRESH } })));
      for (const stream of streams) await stream.next();
      const calls = promA.calls.length;
      await own.close();
      for (const stream of streams) {
        await stream.ended;
        const last = stream.events.filter((e) => e.event === 'next').at(-1)!;
        expect(last.data.errors[0]).toMatchObject({ message: 'Server shutting down; subscribe again', extensions: { code: 'UNAVAILABLE' } });
        expect(stream.events.at(-1)!.event).toBe('complete');
      }
      await sleep(3 * REFRESH_MS);
      expect(promA.calls.length).toBeLessThanOrEqual(calls + 2); // no tick runs after the close
    } finally {
      await own.close().catch(() => undefined);
    }
  });
});
