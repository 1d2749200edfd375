import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { haproxyInstalled, startBalancer, type Balancer } from '../support/balancer.ts';
import { killUnderLoad, readYourWrites, rollingRestart, type Sizes } from '../robustness/balancer-scenarios.ts';

/**
 * The long form of test/robustness/balancer.test.ts: three instances behind HAProxy running the
 * committed deploy/haproxy.cfg, under more load and more streams, through DASHGATE_BALANCER_ROUNDS
 * rounds (3 by default) of a `kill -9` of one instance (each in turn) and a rolling restart of all
 * three. Each round prints one line of figures.
 *
 *   DASHGATE_BALANCER_ROUNDS=5 npm run test:stress -- test/stress/balancer.stress.ts
 *
 * DASHGATE_BALANCER_LOG=<file> also keeps HAProxy's output (its log of every request, its checks).
 */
const ROUNDS = Number(process.env.DASHGATE_BALANCER_ROUNDS || 3);
const SIZES: Sizes = { workers: 8, pauseMs: 10, watchers: 30, viewers: 9, steadyMs: 5_000 };

let balancer: Balancer;
const describeWithHaproxy = haproxyInstalled ? describe : describe.skip;
if (!haproxyInstalled) console.warn('skipping the balancer stress test: /usr/sbin/haproxy is not installed (apt-get install haproxy)');

beforeAll(async () => {
  if (haproxyInstalled) balancer = await startBalancer();
}, 120_000);
afterAll(async () => {
  await balancer?.close();
}, 60_000);

describeWithHaproxy(`${ROUNDS} rounds of kill -9 and rolling restart behind HAProxy`, () => {
  it('reads writes back across instances, loses no acknowledged write, and answers every request of every rolling restart', async () => {
    await readYourWrites(balancer, 'ryw');
    for (let round = 0; round < ROUNDS; round++) {
      const killed = await killUnderLoad(balancer, round % balancer.instances.length, SIZES, `kill${round}`);
      const rolled = await rollingRestart(balancer, SIZES, `roll${round}`);
      console.log(`round ${round + 1}: kill -9 of instance ${round % balancer.instances.length}: down after ${Math.round(killed.downAfterMs)} ms, `
        + `${killed.failed} of ${killed.requests} requests failed (${JSON.stringify(killed.failedKinds)}), ${killed.cut} streams cut and resumed; `
        + `rolling restart: ${rolled.requests} requests, 0 failed, ${rolled.reconnects} streams resumed, longest live query gap ${Math.round(rolled.longestGapMs)} ms, `
        + `down after ${rolled.restarts.map((r) => Math.round(r.downAfterMs)).join('/')} ms, up again after ${rolled.restarts.map((r) => Math.round(r.upAfterMs)).join('/')} ms`);
      expect(rolled.restarts).toHaveLength(balancer.instances.length);
    }
  }, 60 * 60_000);
});
