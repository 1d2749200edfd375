import { SamplingDecision, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace';

/**
 * `sampler_type = rateLimiting`: at most `perSecond` new traces kept per second, as a token bucket
 * holding up to max(perSecond, 1) tokens, refilled continuously (the original's sampler).
 */
export class RateLimitingSampler implements Sampler {
  readonly #perSecond: number;
  readonly #capacity: number;
  #balance: number;
  #last: number;
  readonly #now: () => number;

  constructor(perSecond: number, now: () => number = () => performance.now()) {
    this.#perSecond = perSecond;
    this.#capacity = Math.max(perSecond, 1);
    this.#balance = this.#capacity;
    this.#now = now;
    this.#last = now();
  }

  shouldSample(..._decidedByTime: Parameters<Sampler['shouldSample']>): SamplingResult {
    const now = this.#now();
    this.#balance = Math.min(this.#capacity, this.#balance + ((now - this.#last) / 1000) * this.#perSecond);
    this.#last = now;
    if (this.#balance < 1) return { decision: SamplingDecision.NOT_RECORD };
    this.#balance -= 1;
    return { decision: SamplingDecision.RECORD_AND_SAMPLED };
  }

  toString(): string {
    return `RateLimitingSampler{${this.#perSecond}}`;
  }
}
