/**
 * What the balancer tests show, shared by the short form in the normal suite
 * (test/robustness/balancer.test.ts) and the long one (test/stress/balancer.stress.ts).
 */
import { expect } from '@jest/globals';
import { call, gql } from '../support/server.ts';
import {
  currentView, DETECTION_MS, DRAIN_SECONDS, LiveViewer, missingWrites, settles, startLoad, Tally, Watcher, type Balancer,
} from '../support/balancer.ts';

export interface Sizes {
  /** Request loops through the balancer. */
  workers: number;
  /** Pause of each loop between two requests. */
  pauseMs: number;
  /** Clients of `dataSourceChanged`, and of a live query, through the balancer. */
  watchers: number;
  viewers: number;
  /** Load before and after the fault. */
  steadyMs: number;
}

/** The load's GET requests (see startLoad); every other request is a POST or a PUT. */
const READS = new Set(['rest-read', 'rest-list']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A write through any instance is read back through every other at once, and through the balancer. */
export async function readYourWrites(balancer: Balancer, prefix: string): Promise<void> {
  const { instances } = balancer;
  for (const writer of instances) {
    const name = `${prefix}-${writer.index}`;
    const created = await call(writer, 'POST', '/api/datasources', { body: { name, uid: name, type: 'loki', access: 'proxy', jsonData: { from: writer.index } } });
    expect(created.status).toBe(200);
    for (const reader of instances.filter((other) => other !== writer)) {
      expect((await call(reader, 'GET', `/api/datasources/uid/${name}`)).body).toMatchObject({ name, version: 1, jsonData: { from: writer.index } });
    }
    // With the version it read, as an editor sends it: the stored version becomes the next one.
    const updated = await call(writer, 'PUT', `/api/datasources/uid/${name}`, { body: { name, uid: name, type: 'loki', access: 'proxy', jsonData: { from: writer.index, again: true }, version: 1 } });
    expect(updated.status).toBe(200);
    for (const reader of instances.filter((other) => other !== writer)) {
      const read = await gql(reader, 'query($name: String!) { currentOrganization { dataSource(name: $name) { version jsonData } } }', { name });
      expect(read.body.data).toEqual({ currentOrganization: { dataSource: { version: 2, jsonData: { from: writer.index, again: true } } } });
    }
  }
  // Through the balancer: each write lands on some instance, and every instance reads it at once.
  for (let n = 0; n < instances.length * 2; n++) {
    const name = `${prefix}-lb-${n}`;
    expect((await call(balancer, 'POST', '/api/datasources', { body: { name, uid: name, type: 'loki', access: 'proxy' } })).status).toBe(200);
    for (const reader of instances) expect((await call(reader, 'GET', `/api/datasources/uid/${name}`)).status).toBe(200);
    expect((await call(balancer, 'DELETE', `/api/datasources/uid/${name}`)).status).toBe(200);
    for (const reader of instances) expect((await call(reader, 'GET', `/api/datasources/uid/${name}`)).status).toBe(404);
  }
}

/** Opens the clients of subscriptions and live queries through the balancer and checks they flow. */
export async function openStreams(balancer: Balancer, tally: Tally, sizes: Sizes): Promise<{ watchers: Watcher[]; viewers: LiveViewer[] }> {
  const watchers = Array.from({ length: sizes.watchers }, () => new Watcher(balancer, tally));
  const viewers = Array.from({ length: sizes.viewers }, (_, i) => new LiveViewer(balancer, tally, i));
  // A change through the balancer reaches every watcher, whichever instance serves it.
  const probe = `probe-${Date.now()}`;
  expect(await settles(() => watchers.every((w) => w.ready) && viewers.every((v) => v.arrivals.length > 0), 10_000)).toBe(true);
  expect((await call(balancer, 'POST', '/api/datasources', { body: { name: probe, uid: probe, type: 'loki', access: 'proxy' } })).status).toBe(200);
  expect(await settles(() => watchers.every((w) => w.view.has(probe)), 5_000)).toBe(true);
  const since = performance.now();
  expect(await settles(() => viewers.every((v) => v.arrivals.filter((at) => at > since).length >= 2), 5_000)).toBe(true);
  return { watchers, viewers };
}

/** Every watcher's view equals the database (read through the balancer) once changes have settled. */
async function viewsConverge(balancer: Balancer, watchers: Watcher[]): Promise<void> {
  const truth = await currentView(balancer);
  const same = (w: Watcher) => [...truth].every(([uid, [version, value]]) => w.view.get(uid)?.[0] === version && w.view.get(uid)?.[1] === value);
  await settles(() => watchers.every(same), 5_000);
  const behind = watchers.map((w, i) => ({
    watcher: i,
    wrong: [...truth].filter(([uid, [version, value]]) => w.view.get(uid)?.[0] !== version || w.view.get(uid)?.[1] !== value)
      .map(([uid, [version, value]]) => `${uid}: has ${JSON.stringify(w.view.get(uid))}, is ${JSON.stringify([version, value])}`),
  }));
  expect(behind.filter((b) => b.wrong.length > 0)).toEqual([]);
}

/** Live queries' refreshes (every 500 ms) may pause this long while their stream moves to another instance. */
const LONGEST_GAP_MS = 5_000;

interface Traffic {
  tally: Tally;
  load: Awaited<ReturnType<typeof startLoad>>;
  watchers: Watcher[];
  viewers: LiveViewer[];
}

/** Load and stream clients through the balancer for the length of `body`, stopped whatever happens. */
async function withTraffic<T>(balancer: Balancer, sizes: Sizes, prefix: string, body: (traffic: Traffic) => Promise<T>): Promise<T> {
  const tally = new Tally();
  const load = await startLoad(balancer, tally, { workers: sizes.workers, pauseMs: sizes.pauseMs, prefix });
  let clients: { watchers: Watcher[]; viewers: LiveViewer[] } = { watchers: [], viewers: [] };
  try {
    clients = await openStreams(balancer, tally, sizes);
    return await body({ tally, load, ...clients });
  } finally {
    await load.stop();
    await Promise.all([...clients.watchers, ...clients.viewers].map((client) => client.stop()));
  }
}

/**
 * `kill -9` of instance `victim` under load: the balancer marks it down within its checks, no
 * acknowledged write is missing, the clients it served reconnect elsewhere and miss no change, and
 * live queries go on. Started again afterwards. Returns what failed (requests in flight on the
 * killed instance may; nothing after the balancer dropped it).
 */
export async function killUnderLoad(balancer: Balancer, victim: number, sizes: Sizes, prefix: string): Promise<{ failed: number; failedKinds: Record<string, number>; requests: number; downAfterMs: number; cut: number }> {
  const outcome = await withTraffic(balancer, sizes, prefix, async ({ tally, load, watchers, viewers }) => {
    await sleep(sizes.steadyMs);
    const killedAt = performance.now();
    await balancer.kill(victim);
    const downAt = await balancer.waitFor(victim, 'DOWN', 10_000);
    await sleep(sizes.steadyMs);
    await load.stop();

    // Failures only while the balancer still sent requests to the dead instance, and only of
    // writes: a read it had sent there is sent again to another instance (retry-on empty-response).
    expect(tally.failures.filter((f) => f.at > downAt + 250)).toEqual([]);
    expect(tally.failures.filter((f) => READS.has(f.what))).toEqual([]);
    expect(await missingWrites(balancer, load.writes)).toEqual([]);
    // The clients it served saw their streams cut and are back on another instance, missing nothing.
    const cut = [...watchers, ...viewers].reduce((n, client) => n + client.ends.filter((end) => end === 'cut').length, 0);
    expect(cut).toBeGreaterThan(0);
    await viewsConverge(balancer, watchers);
    const resumed = performance.now();
    expect(await settles(() => viewers.every((v) => v.arrivals.some((at) => at > resumed)), 5_000)).toBe(true);
    for (const v of viewers) expect(v.longestGap(killedAt)).toBeLessThan(LONGEST_GAP_MS);
    const failedKinds: Record<string, number> = {};
    for (const failure of tally.failures) failedKinds[failure.what] = (failedKinds[failure.what] ?? 0) + 1;
    return { failed: tally.failures.length, failedKinds, requests: tally.requests, downAfterMs: downAt - killedAt, cut };
  });
  expect(outcome.downAfterMs).toBeLessThan(DETECTION_MS);
  await balancer.start(victim);
  await balancer.waitFor(victim, 'UP');
  return outcome;
}

/**
 * A rolling restart of every instance (SIGTERM, wait for its exit, start it, wait until the
 * balancer has it up, next) under steady load: not one failed request, every instance out of the
 * balancer before it stopped taking connections, no acknowledged write missing, every stream ended
 * with its reconnectable close and resumed elsewhere, live queries flowing throughout.
 */
export async function rollingRestart(balancer: Balancer, sizes: Sizes, prefix: string): Promise<{ requests: number; reconnects: number; longestGapMs: number; restarts: Array<{ downAfterMs: number; exitedAfterMs: number; upAfterMs: number }> }> {
  return withTraffic(balancer, sizes, prefix, async ({ tally, load, watchers, viewers }) => {
    await sleep(sizes.steadyMs);
    const began = performance.now();
    const restarts: Array<{ downAfterMs: number; exitedAfterMs: number; upAfterMs: number }> = [];
    for (const instance of balancer.instances) {
      const signalled = performance.now();
      const stopping = balancer.stop(instance.index);
      const downAt = await balancer.waitFor(instance.index, 'DOWN', 10_000);
      expect(await stopping).toBe(0);
      const exitedAt = performance.now();
      await balancer.start(instance.index);
      const upAt = await balancer.waitFor(instance.index, 'UP');
      restarts.push({ downAfterMs: downAt - signalled, exitedAfterMs: exitedAt - signalled, upAfterMs: upAt - signalled });
      // Out of the balancer while it still took connections: before its drain ended.
      expect(downAt - signalled).toBeLessThan(DRAIN_SECONDS * 1000);
      await sleep(sizes.steadyMs / 2);
    }
    await sleep(sizes.steadyMs / 2);
    await load.stop();

    expect(tally.failures).toEqual([]);
    expect(await missingWrites(balancer, load.writes)).toEqual([]);
    // Every stream was on an instance that restarted: each ended with the reconnectable close, none was cut.
    for (const client of [...watchers, ...viewers]) {
      expect(client.ends.length).toBeGreaterThan(0);
      expect(client.ends.filter((end) => end !== 'unavailable')).toEqual([]);
    }
    await viewsConverge(balancer, watchers);
    const longestGapMs = Math.max(...viewers.map((v) => v.longestGap(began)));
    expect(longestGapMs).toBeLessThan(LONGEST_GAP_MS);
    const reconnects = [...watchers, ...viewers].reduce((n, client) => n + client.ends.length, 0);
    return { requests: tally.requests, reconnects, longestGapMs, restarts };
  });
}
