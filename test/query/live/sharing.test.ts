import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { ChangeListener } from '../../../src/db/change-listener.ts';
import type { PgConnection } from '../../../src/db/embedded.ts';
import { ormOptions } from '../../../src/db/orm.ts';
import { createLogger } from '../../../src/logging/logger.ts';
import type { DataResponse } from '../../../src/query/frames/frame.ts';
import { LiveQuerySharing, peerKey, type PeerQuery, type SharedAnswer } from '../../../src/query/live/sharing.ts';
import { createTestDatabase, dropTestDatabase } from '../../support/database.ts';
import { eventually } from '../../support/instances.ts';

// The lease and the shared answers, as several instances see them through one PostgreSQL.

interface Instance {
  orm: MikroORM;
  changes: ChangeListener;
  sharing: LiveQuerySharing;
  logs: string[];
  close(): Promise<void>;
}

let connection: PgConnection;
let sql: pg.Pool;
const instances: Instance[] = [];

async function instance(maxAnswerBytes = 1024 * 1024, now?: () => number): Promise<Instance> {
  const orm = await MikroORM.init(ormOptions(connection, { maxConnections: 4, sslMode: 'disable' }));
  const logs: string[] = [];
  const log = createLogger('warn', new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
  const changes = new ChangeListener(connection, log);
  const sharing = new LiveQuerySharing(orm, changes, log, { maxAnswerBytes, now });
  await changes.start();
  let closed = false;
  const made: Instance = {
    orm, changes, sharing, logs,
    async close() {
      if (closed) return;
      closed = true;
      await sharing.close();
      await changes.close();
      await orm.close(true);
    },
  };
  instances.push(made);
  return made;
}

beforeAll(async () => {
  connection = await createTestDatabase();
  sql = new pg.Pool({ ...connection, max: 2 });
});
afterAll(async () => {
  for (const made of instances) await made.close();
  await sql.end();
  await dropTestDatabase(connection);
});

let n = 0;
const newQuery = (refreshMs = 1000, orgId = 1): PeerQuery => ({ shareKey: `q-${++n}-${Math.random()}`, orgId, refreshMs });
const results = (value: number): ReadonlyMap<string, DataResponse> => new Map([['A', { frames: [{ fields: [{ name: 'Value', type: 'float64', values: [value, NaN] }] }] }]]);
const valueOf = (answer: SharedAnswer | null) => (answer?.outcome.kind === 'results' ? answer.outcome.results.get('A')!.frames![0]!.fields[0]!.values : null);

describe('claims', () => {
  it('give each tick to one instance: the first claimant, then the holder while it claims every tick', async () => {
    const [x, y, z] = await Promise.all([instance(), instance(), instance()]);
    const q = newQuery();
    expect(await x.sharing.claim(q, 1000)).toBe(true);
    expect(await Promise.all([y.sharing.claim(q, 1000), z.sharing.claim(q, 1000)])).toEqual([false, false]);
    for (const tick of [2000, 3000, 4000]) {
      // Whoever comes first at the next tick, the holder keeps it.
      expect(await Promise.all([z.sharing.claim(q, tick), y.sharing.claim(q, tick), x.sharing.claim(q, tick)])).toEqual([false, false, true]);
    }
    // A tick is never given twice, not even to its holder.
    expect(await x.sharing.claim(q, 4000)).toBe(false);
  });

  it('of many queries at once, from instances claiming them in opposite orders, give each tick of each query to exactly one, without a deadlock', async () => {
    const [x, y] = await Promise.all([instance(), instance()]);
    const queries = Array.from({ length: 40 }, () => newQuery());
    for (const tick of [1000, 2000, 3000]) {
      const [mine, theirs] = await Promise.all([
        Promise.all(queries.map((q) => x.sharing.claim(q, tick))),
        Promise.all([...queries].reverse().map((q) => y.sharing.claim(q, tick))),
      ]);
      theirs.reverse();
      expect(mine.map((m, i) => m !== theirs[i])).toEqual(queries.map(() => true));
    }
    expect([...x.logs, ...y.logs].join('')).not.toContain('could not claim');
  });

  it('go to another instance at the next tick once the holder\'s connection is gone, for every instance asking at once', async () => {
    const [holder, y, z] = await Promise.all([instance(), instance(), instance()]);
    const mineY = newQuery();
    const mineZ = newQuery();
    for (const q of [mineY, mineZ]) expect(await holder.sharing.claim(q, 1000)).toBe(true);
    expect(await y.sharing.claim(mineY, 1000)).toBe(false);
    expect(await z.sharing.claim(mineZ, 1000)).toBe(false);
    // Cut off, not shut down: nothing released, the lock goes with the connection.
    const lock = holder.changes.sessionLock!;
    await sql.query(`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and objsubid = 1 and granted and ((classid::bigint << 32) | objid::bigint) = $1::bigint`, [lock]);
    await eventually(async () => (await sql.query('select pg_try_advisory_xact_lock($1::bigint) as free', [lock])).rows[0].free, true, 2000);
    // Two instances find the same dead holder in the same moment, each for its own query: both
    // take over. Held here for as long as it takes: another instance's claim under way.
    const other = await sql.connect();
    try {
      await other.query('begin');
      await other.query('select pg_try_advisory_xact_lock_shared($1::bigint)', [lock]);
      expect(await y.sharing.claim(mineY, 2000)).toBe(true);
    } finally {
      await other.query('commit');
      other.release();
    }
    expect(await z.sharing.claim(mineZ, 2000)).toBe(true);
  });

  it('go to another instance once a live holder lets a tick pass unclaimed (stuck), not before', async () => {
    const [holder, y] = await Promise.all([instance(), instance()]);
    const q = newQuery();
    expect(await holder.sharing.claim(q, 1000)).toBe(true);
    expect(await y.sharing.claim(q, 2000)).toBe(false); // the holder may be late for 2000: not stale yet
    expect(await y.sharing.claim(q, 3000)).toBe(true); // it did not claim 2000
    expect(await holder.sharing.claim(q, 3000)).toBe(false);
    expect(await holder.sharing.claim(q, 4000)).toBe(false);
  });

  it('released by the holder: anyone may claim even the tick it held, and the others hear it', async () => {
    const [holder, y] = await Promise.all([instance(), instance()]);
    const q = newQuery();
    let released = 0;
    y.sharing.follow(q, { newest: () => 0, answer: () => undefined, released: () => released++ });
    expect(await holder.sharing.claim(q, 1000)).toBe(true);
    expect(await y.sharing.claim(q, 1000)).toBe(false);
    holder.sharing.release(q);
    await eventually(async () => released, 1, 3000);
    expect(await y.sharing.claim(q, 1000)).toBe(true);
    // A release by one that does not hold the lease deletes nothing and says nothing.
    holder.sharing.release(q);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(released).toBe(1);
    expect(await holder.sharing.claim(q, 2000)).toBe(false);
  });

  it('released with a claim of its own not sent yet: that claim is dropped, so the others may claim the tick at once', async () => {
    // The last viewer leaves during a tick's check, before the tick's claim went out.
    const [holder, y] = await Promise.all([instance(), instance()]);
    const q = newQuery();
    let released = 0;
    y.sharing.follow(q, { newest: () => 0, answer: () => undefined, released: () => released++ });
    expect(await holder.sharing.claim(q, 1000)).toBe(true);
    const late = holder.sharing.claim(q, 2000);
    holder.sharing.release(q);
    expect(await late).toBe(false);
    await eventually(async () => released, 1, 3000);
    expect(await y.sharing.claim(q, 2000)).toBe(true);
  });

  it('released, then watched again in the same turn: the new claim goes after the release and holds the lease', async () => {
    const holder = await instance();
    const q = newQuery();
    expect(await holder.sharing.claim(q, 1000)).toBe(true);
    holder.sharing.release(q);
    expect(await holder.sharing.claim(q, 2000)).toBe(true);
    const rows = await sql.query('select tick from live_query_lease where key = $1', [peerKey(q.shareKey)]);
    expect(rows.rows.map((row) => Number(row.tick))).toEqual([2000]);
  });

  it('at shutdown, every lease is released at once', async () => {
    const [holder, y] = await Promise.all([instance(), instance()]);
    const queries = [newQuery(), newQuery()];
    for (const q of queries) expect(await holder.sharing.claim(q, 1000)).toBe(true);
    await holder.close();
    const keys = queries.map((q) => peerKey(q.shareKey));
    expect((await sql.query('select key from live_query_lease where key = any($1)', [keys])).rows).toEqual([]);
    for (const q of queries) expect(await y.sharing.claim(q, 1000)).toBe(true);
  });
});

describe('answers', () => {
  it('reach the instances following the query, newest only, in the org they belong to', async () => {
    const [leader, follower] = await Promise.all([instance(), instance()]);
    const q = newQuery();
    const heard: SharedAnswer[] = [];
    let newest = 0;
    follower.sharing.follow(q, { newest: () => newest, answer: (a) => heard.push(a), released: () => undefined });
    leader.sharing.share(q, 1000, { kind: 'results', results: results(1) });
    await eventually(async () => heard.length, 1, 3000);
    expect(heard[0]!.at).toBe(1000);
    expect(valueOf(heard[0]!)).toEqual([1, NaN]);
    newest = 1000;
    // An older answer written late never replaces a newer one.
    leader.sharing.share(q, 3000, { kind: 'results', results: results(3) });
    leader.sharing.share(q, 2000, { kind: 'results', results: results(2) });
    await eventually(async () => heard.length, 2, 3000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(heard.map((a) => a.at)).toEqual([1000, 3000]);
    expect(valueOf(await follower.sharing.latest(q, 0))).toEqual([3, NaN]);
    // Not for a subscriber of another org, nor when older than asked.
    expect(await follower.sharing.latest({ ...q, orgId: 2 }, 0)).toBeNull();
    expect(await follower.sharing.latest(q, 3001)).toBeNull();
  });

  it('larger than the bound are replaced by a marker telling the others to run the tick themselves', async () => {
    const [leader, follower] = await Promise.all([instance(64), instance()]);
    const q = newQuery();
    const heard: SharedAnswer[] = [];
    follower.sharing.follow(q, { newest: () => 0, answer: (a) => heard.push(a), released: () => undefined });
    leader.sharing.share(q, 1000, { kind: 'results', results: results(1) });
    leader.sharing.share(q, 2000, { kind: 'results', results: results(2) });
    await eventually(async () => heard.at(-1)?.at, 2000, 3000);
    expect(heard.every((a) => a.outcome.kind === 'unshared')).toBe(true);
    // Reported once per query, not at every refresh.
    expect(leader.logs.join('').match(/larger than \[live\] max_shared_answer_bytes/g)).toHaveLength(1);
    const [row] = (await sql.query('select length(answer) as bytes from live_query_answer where key = $1', [peerKey(q.shareKey)])).rows;
    expect(row.bytes).toBeLessThanOrEqual(64);
  });

  it('and leases nobody renewed for two refreshes are swept', async () => {
    let clock = 10_000;
    const x = await instance(1024 * 1024, () => clock);
    const q = newQuery(1000);
    expect(await x.sharing.claim(q, 10_000)).toBe(true);
    x.sharing.share(q, 10_000, { kind: 'results', results: results(1) });
    await eventually(async () => (await x.sharing.latest(q, 0))?.at, 10_000, 3000);
    const key = peerKey(q.shareKey);
    const rows = async () => Number((await sql.query('select (select count(*) from live_query_lease where key = $1) + (select count(*) from live_query_answer where key = $1) as n', [key])).rows[0].n);
    clock = 12_000;
    await x.sharing.sweep();
    expect(await rows()).toBe(2);
    clock = 12_001;
    await x.sharing.sweep();
    expect(await rows()).toBe(0);

    // A query refreshed weekly keeps its rows a day at most.
    const weekly = newQuery(7 * 24 * 3600_000);
    const day = 24 * 3600_000;
    const weeklyKey = peerKey(weekly.shareKey);
    expect(await x.sharing.claim(weekly, clock)).toBe(true);
    x.sharing.share(weekly, clock, { kind: 'results', results: results(1) });
    await eventually(async () => (await x.sharing.latest(weekly, 0))?.at, clock, 3000);
    const weeklyRows = async () => Number((await sql.query('select (select count(*) from live_query_lease where key = $1) + (select count(*) from live_query_answer where key = $1) as n', [weeklyKey])).rows[0].n);
    clock += day;
    await x.sharing.sweep();
    expect(await weeklyRows()).toBe(2);
    clock += 1;
    await x.sharing.sweep();
    expect(await weeklyRows()).toBe(0);
  });
});
