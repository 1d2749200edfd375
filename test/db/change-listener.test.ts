import { createWriteStream } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ChangeListener, LISTENER_APPLICATION_NAME } from '../../src/db/change-listener.ts';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';
import { eventually } from '../support/instances.ts';

// The change barrier: what makes a cache hit as current as a database read.

let connection: PgConnection;
let writer: pg.Client;
let listener: ChangeListener;
const heard: string[] = [];
const states: boolean[] = [];

beforeAll(async () => {
  connection = await createTestDatabase();
  writer = new pg.Client(connection);
  await writer.connect();
  listener = new ChangeListener(connection, createLogger('error', createWriteStream('/dev/null')));
  listener.subscribe('barrier_test', { notify: (payload) => heard.push(payload), reset: (listening) => states.push(listening) });
  await listener.start();
});
afterAll(async () => {
  await listener.close();
  await writer.end();
  await dropTestDatabase(connection);
});

describe('ChangeListener barrier', () => {
  it('has heard every notification committed before the mark once caught up', async () => {
    for (let i = 0; i < 200; i++) {
      await writer.query(`select pg_notify('barrier_test', $1)`, [String(i)]);
      const mark = listener.mark();
      expect(await listener.caughtUp(mark)).toBe(true);
      expect(heard.at(-1)).toBe(String(i));
    }
  });

  it('answers concurrent callers with at most two round trips', async () => {
    const before = listener.mark();
    const results = await Promise.all(Array.from({ length: 100 }, () => listener.caughtUp(listener.mark())));
    expect(results.every((r) => r === true)).toBe(true);
    expect(listener.mark() - before).toBeLessThanOrEqual(2);
    // A mark already covered by an answered round trip costs none.
    const covered = before;
    expect(listener.caughtUp(covered)).toBe(true);
  });

  it('sends the round trip of a lone caller at once while each round trip serves one caller', async () => {
    expect(await listener.caughtUp(listener.mark())).toBe(true);
    const mark = listener.mark();
    const caughtUp = listener.caughtUp(mark);
    // Sent before the caller even awaits: no wait for the end of the event-loop turn.
    expect(listener.mark()).toBe(mark + 1);
    expect(await caughtUp).toBe(true);
  });

  it('once callers share round trips, sends one for every caller of the same event-loop turn, and a new one for a mark taken after it went out', async () => {
    // A busy spell: the callers behind a round trip in flight share the next one.
    await listener.caughtUp(listener.mark());
    const inFlight = listener.caughtUp(listener.mark());
    const behind = Array.from({ length: 20 }, () => listener.caughtUp(listener.mark()));
    expect(await Promise.all([inFlight, ...behind])).toEqual(Array(21).fill(true));
    const before = listener.mark();
    const sameTurn = Array.from({ length: 50 }, () => listener.caughtUp(listener.mark()));
    // Not sent yet: it waits for the end of the turn, for every caller read in it.
    expect(listener.mark()).toBe(before);
    expect(await Promise.all(sameTurn)).toEqual(Array(50).fill(true));
    expect(listener.mark() - before).toBe(1);
    // Marks taken after that round trip was sent are not covered by it.
    const later = listener.mark();
    expect(listener.caughtUp(later)).toBeInstanceOf(Promise);
    expect(await listener.caughtUp(later)).toBe(true);
    expect(listener.mark() - later).toBe(1);
  });

  it('has heard a notification committed while round trips were under way once a later mark is caught up', async () => {
    const busy = Array.from({ length: 20 }, () => listener.caughtUp(listener.mark()));
    await writer.query(`select pg_notify('barrier_test', 'while-busy')`);
    expect(await listener.caughtUp(listener.mark())).toBe(true);
    expect(heard.at(-1)).toBe('while-busy');
    expect(await Promise.all(busy)).toEqual(Array(20).fill(true));
  });

  it('says false, without hanging, when the connection is lost, and works again once it is back', async () => {
    await writer.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME]);
    expect(await listener.caughtUp(listener.mark())).toBe(false);
    expect(states.at(-1)).toBe(false);
    const deadline = Date.now() + 5000;
    while (!listener.listening && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(states.at(-1)).toBe(true);
    await writer.query(`select pg_notify('barrier_test', 'after')`);
    expect(await listener.caughtUp(listener.mark())).toBe(true);
    expect(heard.at(-1)).toBe('after');
  });

  it('says false once a round trip has gone 5 s unanswered, and starts over on a new connection', async () => {
    const { rows } = await writer.query('select pid from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME]);
    const pid = rows[0].pid as number;
    // The listening backend stops answering (a hung server, a network that drops everything).
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      expect(await listener.caughtUp(listener.mark())).toBe(false);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
      expect(states.at(-1)).toBe(false);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const deadline = Date.now() + 5000;
    while (!listener.listening && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await writer.query(`select pg_notify('barrier_test', 'after stall')`);
    expect(await listener.caughtUp(listener.mark())).toBe(true);
    expect(heard.at(-1)).toBe('after stall');
  }, 20_000);
});

describe('ChangeListener session lock', () => {
  /** Whether some session holds the advisory lock `key` (a bigint key: objsubid 1). */
  const held = async (key: string) => {
    const { rows } = await writer.query(
      `select pid from pg_locks where locktype = 'advisory' and granted and objsubid = 1
          and database = (select oid from pg_database where datname = current_database())
          and ((classid::bigint << 32) | objid::bigint) = $1::bigint`,
      [key],
    );
    return rows.map((r) => r.pid as number);
  };
  /** What another instance asks: the lock is free (tried, and let go again at once). */
  const free = async (key: string) => (await writer.query('select pg_try_advisory_xact_lock($1::bigint) as free', [key])).rows[0].free as boolean;

  it('is held by the listening connection, and freed, with a new one taken, when that connection is lost', async () => {
    await eventuallyListening();
    const key = listener.sessionLock!;
    expect(key).toMatch(/^\d+$/);
    const [pid] = await held(key);
    const listenerPids = (await writer.query('select pid from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME])).rows.map((r) => r.pid);
    expect(listenerPids).toEqual([pid]);
    expect(await free(key)).toBe(false);

    await writer.query('select pg_terminate_backend($1)', [pid]);
    expect(await listener.caughtUp(listener.mark())).toBe(false);
    expect(listener.sessionLock).toBeNull();
    // The backend lets go of its locks as it exits, a moment after it was told to.
    expect(await eventually(() => free(key), true, 2000)).toBe(true);

    await eventuallyListening();
    const next = listener.sessionLock!;
    expect(next).not.toBe(key);
    expect(await free(next)).toBe(false);
  });

  it('is freed when the listener closes', async () => {
    const own = new ChangeListener(connection, createLogger('error', createWriteStream('/dev/null')));
    await own.start();
    const key = own.sessionLock!;
    expect(await free(key)).toBe(false);
    await own.close();
    expect(own.sessionLock).toBeNull();
    expect(await free(key)).toBe(true);
  });
});

async function eventuallyListening(): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!listener.listening && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(listener.listening).toBe(true);
}
