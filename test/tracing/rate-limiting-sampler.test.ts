import { describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace';
import { RateLimitingSampler } from '../../src/tracing/rate-limiting-sampler.ts';

function decisions(sampler: RateLimitingSampler, count: number): number {
  let kept = 0;
  for (let i = 0; i < count; i++) {
    if (sampler.shouldSample(ROOT_CONTEXT, 'a'.repeat(32), 'span', SpanKind.SERVER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED) kept++;
  }
  return kept;
}

describe('rateLimiting sampler', () => {
  it('keeps at most the given traces per second, refilled over time, bursting up to one second of them', () => {
    let now = 0;
    const sampler = new RateLimitingSampler(5, () => now);
    expect(decisions(sampler, 20)).toBe(5);
    now += 200; // one more trace's worth
    expect(decisions(sampler, 20)).toBe(1);
    now += 10_000; // refills to the one-second burst, no more
    expect(decisions(sampler, 20)).toBe(5);
  });

  it('keeps one trace now and then below one per second, and none at 0', () => {
    let now = 0;
    const slow = new RateLimitingSampler(0.5, () => now);
    expect(decisions(slow, 10)).toBe(1);
    now += 1000;
    expect(decisions(slow, 10)).toBe(0);
    now += 1000;
    expect(decisions(slow, 10)).toBe(1);
    const never = new RateLimitingSampler(0, () => now);
    expect(decisions(never, 10)).toBe(1); // the one-token bucket starts full, as the original's
    now += 60_000;
    expect(decisions(never, 10)).toBe(0);
  });
});
