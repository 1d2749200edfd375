import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../../src/errors/domain.ts';
import { LiveStream, StreamEnd } from '../../src/live/stream.ts';

interface Change {
  id: number;
  v: number;
}

function stream(capacity = 3) {
  const closes: number[] = [];
  const s = new LiveStream<Change>({
    capacity,
    keyOf: (e) => e.id,
    merge: (older, newer) => (newer.v < 0 ? null : { id: newer.id, v: older.v * 100 + newer.v }),
    onClose: () => closes.push(1),
  });
  return { s, closes };
}

const overflow = () => new DomainError('UNAVAILABLE', 'too slow');
const values = async (s: LiveStream<Change>, n: number) => {
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const item = await s.next();
    out.push(item.done ? 'done' : item.value instanceof StreamEnd ? `end:${item.value.error.message}` : item.value);
  }
  return out;
};

describe('LiveStream', () => {
  it('hands a waiting reader the event at once, and queues for one that has not asked', async () => {
    const { s } = stream();
    const waiting = s.next();
    s.push({ id: 1, v: 1 }, overflow);
    expect(await waiting).toEqual({ value: { id: 1, v: 1 }, done: false });
    s.push({ id: 2, v: 2 }, overflow);
    expect(s.queued).toBe(1);
    expect(await values(s, 1)).toEqual([{ id: 2, v: 2 }]);
  });

  it('merges queued events with the same key (null drops both), in first-queued order', async () => {
    const { s } = stream();
    s.push({ id: 1, v: 1 }, overflow);
    s.push({ id: 2, v: 2 }, overflow);
    s.push({ id: 1, v: 3 }, overflow);
    s.push({ id: 2, v: -1 }, overflow);
    expect(s.queued).toBe(1);
    expect(await values(s, 1)).toEqual([{ id: 1, v: 103 }]);
  });

  it('ends with the overflow error once more distinct keys wait than it holds; the backlog is dropped for the reason', async () => {
    const { s, closes } = stream(2);
    expect(s.push({ id: 1, v: 1 }, overflow)).toBe(true);
    expect(s.push({ id: 2, v: 1 }, overflow)).toBe(true);
    expect(s.push({ id: 3, v: 1 }, overflow)).toBe(false);
    expect(s.closed).toBe(true);
    expect(closes).toHaveLength(1);
    expect(s.push({ id: 4, v: 1 }, overflow)).toBe(true); // ignored once closed
    expect(await values(s, 2)).toEqual(['end:too slow', 'done']);
  });

  it('end(error) reaches a waiting reader as the last item, then the iteration finishes; onClose runs once', async () => {
    const { s, closes } = stream();
    const waiting = s.next();
    s.end(new DomainError('UNAVAILABLE', 'shutting down'));
    s.end(new DomainError('UNAVAILABLE', 'again'));
    const item = await waiting;
    expect(item.value).toBeInstanceOf(StreamEnd);
    expect((item.value as StreamEnd).error.message).toBe('shutting down');
    expect(await s.next()).toEqual({ value: undefined, done: true });
    expect(closes).toHaveLength(1);
  });

  it('end(null) finishes quietly after what is queued; return() releases a waiting reader and the queue', async () => {
    const quiet = stream();
    quiet.s.push({ id: 1, v: 1 }, overflow);
    quiet.s.end(null);
    expect(await values(quiet.s, 2)).toEqual([{ id: 1, v: 1 }, 'done']);
    expect(quiet.closes).toHaveLength(1);

    const gone = stream();
    const waiting = gone.s.next();
    await gone.s.return();
    expect(await waiting).toEqual({ value: undefined, done: true });
    gone.s.push({ id: 1, v: 1 }, overflow);
    expect(gone.s.queued).toBe(0);
    expect(gone.closes).toHaveLength(1);
  });
});
