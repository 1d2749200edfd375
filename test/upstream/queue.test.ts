import { describe, expect, it } from '@jest/globals';
import { CallQueue } from '../../src/upstream/queue.ts';

const never = () => () => {};

describe('CallQueue', () => {
  it('grants free slots at once, then queues waiters in arrival order', async () => {
    const queue = new CallQueue(2);
    const a = queue.tryAcquire()!;
    const b = queue.tryAcquire()!;
    expect(queue.tryAcquire()).toBeNull();
    const order: string[] = [];
    const c = queue.acquire(never).then((release) => (order.push('c'), release));
    const d = queue.acquire(never).then((release) => (order.push('d'), release));
    expect([queue.busy, queue.waiting]).toEqual([2, 2]);
    a();
    const releaseC = await c;
    expect(order).toEqual(['c']);
    b();
    const releaseD = await d;
    expect(order).toEqual(['c', 'd']);
    releaseC();
    releaseD();
    expect([queue.busy, queue.waiting]).toEqual([0, 0]);
  });

  it('a waiter that gives up holds no slot, and its turn passes to the next', async () => {
    const queue = new CallQueue(1);
    const held = queue.tryAcquire()!;
    let giveUp: (reason: unknown) => void = () => {};
    let stopped = 0;
    const quitter = queue.acquire((fail) => {
      giveUp = fail;
      return () => stopped++;
    });
    const patient = queue.acquire(never);
    giveUp(new Error('deadline'));
    await expect(quitter).rejects.toThrow('deadline');
    held();
    const release = await patient;
    expect(queue.busy).toBe(1);
    release();
    // Released twice counts once.
    release();
    expect([queue.busy, queue.waiting, stopped]).toEqual([0, 0, 0]);
  });

  it('stops the wait of a waiter once it is served', async () => {
    const queue = new CallQueue(1);
    const held = queue.tryAcquire()!;
    let stopped = 0;
    const served = queue.acquire(() => () => stopped++);
    held();
    (await served)();
    expect(stopped).toBe(1);
  });

  it('never has more slots out than its size, however many wait', async () => {
    const queue = new CallQueue(3);
    let inFlight = 0;
    let most = 0;
    await Promise.all(Array.from({ length: 5000 }, async () => {
      const release = await queue.acquire(never);
      most = Math.max(most, ++inFlight);
      await Promise.resolve();
      inFlight--;
      release();
    }));
    expect(most).toBe(3);
    expect([queue.busy, queue.waiting]).toEqual([0, 0]);
  });
});
