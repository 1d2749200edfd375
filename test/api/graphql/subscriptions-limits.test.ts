import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../../support/instances.ts';
import { ADMIN, call, startTestServer, type TestServer } from '../../support/server.ts';
import { DATA_SOURCE_CHANGED, subscribe, type OpenSubscription } from '../../support/sse.ts';

const QUEUE = 8;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ overrides: { graphql: { subscription_queue_size: String(QUEUE), max_subscriptions: '4' } } });
});
afterAll(() => server?.close());

/** A subscriber that sends its request and then reads nothing, until `resume`. */
async function stalledSubscriber(): Promise<{ socket: Socket; resume(until?: (text: string) => boolean): Promise<string> }> {
  const body = JSON.stringify({ query: DATA_SOURCE_CHANGED });
  const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(`POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${ADMIN}\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  socket.pause();
  return {
    socket,
    /** Reads again, until `until` holds for what arrived (then disconnects) or the server closes. */
    resume: (until = () => false) => new Promise((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (until(text)) socket.destroy();
      });
      socket.on('close', () => resolve(text));
      socket.resume();
    }),
  };
}

/** About 200 kB of JSON per data source, so a reader that stops reading fills its socket quickly. */
const PAD = `jsonb_build_object('pad', repeat(md5(random()::text), 6000))`;


describe('a reader slower than the changes', () => {
  it('gets the latest state of a data source changed many times, the queue holding one entry for it', async () => {
    const [row] = await server.sql<{ id: number }>(`insert into data_source (org_id, uid, name, type, access, json_data) values (1, 'churn', 'churn', 'loki', 'proxy', ${PAD}) returning id`);
    const id = row!.id;
    const stalled = await stalledSubscriber();
    await eventually(async () => server.app.live.open, 1, 5000);
    for (let version = 2; version <= 120; version++) {
      // Announced by the trigger on data_source, as every committed change is.
      await server.sql(`update data_source set version = $2, json_data = ${PAD} where id = $1`, [id, version]);
    }
    // Well past what the socket holds, and the stream is still open: changes of one data source coalesce.
    await new Promise((r) => setTimeout(r, 300));
    expect(server.app.live.open).toBe(1);
    const text = await stalled.resume((seen) => seen.includes('"version":120'));
    const versions = [...text.matchAll(/"version":(\d+)/g)].map((m) => Number(m[1]));
    expect(versions.at(-1)).toBe(120);
    expect(versions.length).toBeLessThan(119);
    await eventually(async () => server.app.live.open, 0, 5000);
  });

  it('ends the stream with an error event once more distinct changes wait than its queue holds, while a reader that keeps up gets them all', async () => {
    const stalled = await stalledSubscriber();
    const reader = await subscribe(server, DATA_SOURCE_CHANGED);
    await eventually(async () => server.app.live.open, 2, 5000);
    const ids: number[] = [];
    for (let i = 0; i < 80 && server.app.live.open === 2; i++) {
      const [row] = await server.sql<{ id: number }>(`insert into data_source (org_id, uid, name, type, access, json_data) values (1, $1, $1, 'loki', 'proxy', ${PAD}) returning id`, [`slow-${i}`]);
      ids.push(row!.id);
      await reader.waitFor((e) => e.data?.data?.dataSourceChanged?.id === row!.id);
    }
    // The stalled stream was dropped (its memory with it); the reader kept every change.
    expect(await eventually(async () => server.app.live.open, 1, 5000)).toBe(1);
    expect(reader.events.map((e) => e.data.data.dataSourceChanged.id)).toEqual(ids);
    const text = await stalled.resume();
    // Whatever the socket held arrives first, then why the stream ended, then its end.
    const reason = text.indexOf(`"message":"Subscriber too slow: more than ${QUEUE} changes waiting; subscribe again and reload"`);
    expect(reason).toBeGreaterThan(0);
    expect(text.indexOf('event: complete', reason)).toBeGreaterThan(reason);
    reader.close();
    await server.sql(`delete from data_source where name like 'slow-%' or name = 'churn'`);
  });
});

describe('[graphql] max_subscriptions', () => {
  it('refuses streams past the instance limit with 429, whoever asks', async () => {
    await eventually(async () => server.app.live.open, 0, 5000);
    const open: OpenSubscription[] = [];
    for (let i = 0; i < 4; i++) open.push(await subscribe(server, DATA_SOURCE_CHANGED));
    const refused = await subscribe(server, DATA_SOURCE_CHANGED);
    expect(refused.status).toBe(429);
    await refused.ended;
    expect(refused.events[0]!.data.errors[0]).toMatchObject({ message: 'Too many open subscriptions on this server (limit 4)', extensions: { code: 'TOO_MANY_REQUESTS' } });
    for (const stream of open) stream.close();
    await eventually(async () => server.app.live.open, 0, 5000);
    const again = await subscribe(server, DATA_SOURCE_CHANGED);
    expect(again.status).toBe(200);
    again.close();
  });
});

describe('clients that go away', () => {
  it('leave nothing behind: no stream, no timer', async () => {
    await eventually(async () => server.app.live.open, 0, 5000);
    // Every idle connection of the database pool holds an idle timer of its own: those come and go
    // with the pool's use, so they are left out of the count.
    const pool = await server.app.services.orm.em.getConnection().getNativeClient();
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length - pool.idleCount;
    const before = timers();
    const streams: OpenSubscription[] = [];
    for (let i = 0; i < 3; i++) streams.push(await subscribe(server, DATA_SOURCE_CHANGED));
    await eventually(async () => server.app.live.open, 3, 5000);
    // Some pings and a change flow, then every client disconnects.
    const created = await call(server, 'POST', '/api/datasources', { body: { name: 'goodbye', type: 'loki', access: 'proxy' } });
    for (const stream of streams) await stream.next();
    for (const stream of streams) stream.close();
    expect(await eventually(async () => server.app.live.open, 0, 5000)).toBe(0);
    expect(await eventually(async () => timers() <= before, true, 5000)).toBe(true);
    await call(server, 'DELETE', `/api/datasources/${created.body.id}`);
  });

  it('token expiry ends a stream', async () => {
    const sa = (await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'short-lived', role: 'Viewer' } })).body as { id: number };
    const token = (await call(server, 'POST', `/api/serviceaccounts/${sa.id}/tokens`, { body: { name: 'short', secondsToLive: 2 } })).body.key as string;
    const stream = await subscribe(server, DATA_SOURCE_CHANGED, { auth: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    const end = await stream.waitFor((e) => e.data?.errors !== undefined, 5000);
    expect(end.data.errors[0]).toMatchObject({ message: 'Expired API key', extensions: { code: 'UNAUTHENTICATED' } });
    await stream.ended;
  });
});
