import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { haproxyInstalled, startBalancer, type Balancer } from '../support/balancer.ts';
import { killUnderLoad, readYourWrites, rollingRestart, type Sizes } from './balancer-scenarios.ts';

/**
 * Three instances behind Debian's HAProxy running the committed deploy/haproxy.cfg, the short
 * form (test/stress/balancer.stress.ts is the long one): read-your-writes across instances,
 * streams through the balancer, `kill -9` under load, and a rolling restart with no failed request.
 */
const SIZES: Sizes = { workers: 4, pauseMs: 20, watchers: 6, viewers: 3, steadyMs: 1_000 };

let balancer: Balancer;
const describeWithHaproxy = haproxyInstalled ? describe : describe.skip;
if (!haproxyInstalled) console.warn('skipping the balancer tests: /usr/sbin/haproxy is not installed (apt-get install haproxy)');

beforeAll(async () => {
  if (haproxyInstalled) balancer = await startBalancer();
}, 120_000);
afterAll(async () => {
  await balancer?.close();
}, 60_000);

describeWithHaproxy('three instances behind HAProxy (deploy/haproxy.cfg)', () => {
  it('reads a write made through any instance back through every other, and through the balancer, at once', async () => {
    await readYourWrites(balancer, 'ryw');
  });

  it('kill -9 of one instance under load: dropped within the checks, no acknowledged write lost, its clients back elsewhere missing no change', async () => {
    const outcome = await killUnderLoad(balancer, 1, SIZES, 'kill');
    expect(outcome.downAfterMs).toBeGreaterThan(0);
  }, 120_000);

  it('a rolling restart of all three under steady load answers every request', async () => {
    const outcome = await rollingRestart(balancer, SIZES, 'roll');
    expect(outcome.restarts).toHaveLength(3);
    expect(outcome.requests).toBeGreaterThan(100);
  }, 180_000);
});
