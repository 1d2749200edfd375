import { describe, expect, it } from '@jest/globals';
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { JaegerPropagator } from '../../src/tracing/jaeger-propagator.ts';

const propagator = new JaegerPropagator();
const extract = (value: string | undefined) => trace.getSpanContext(propagator.extract(ROOT_CONTEXT, value === undefined ? {} : { 'uber-trace-id': value }, defaultTextMapGetter));

describe('Jaeger propagation (uber-trace-id)', () => {
  it('reads 128- and 64-bit trace ids, the span id and the sampled flag, URL-encoded or not', () => {
    expect(extract('4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7:0:1')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true,
    });
    expect(extract('a3ce929d0e0e4736%3Af067aa0ba902b7%3A0%3A0')).toEqual({
      traceId: '0000000000000000a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE, isRemote: true,
    });
    // Debug (2) without sampled (1) is not sampled; 3 is.
    expect(extract('abc:def:0:2')?.traceFlags).toBe(TraceFlags.NONE);
    expect(extract('abc:def:0:3')?.traceFlags).toBe(TraceFlags.SAMPLED);
  });

  it('ignores what is not a valid header: no trace is continued from it', () => {
    for (const value of [undefined, '', 'abc', 'abc:def:0', 'abc:def:0:1:5', 'xyz:def:0:1', '0:def:0:1', 'abc:0:0:1', `${'a'.repeat(33)}:def:0:1`, 'abc:def:0:100', '%E0%A4%A:1:0:1']) {
      expect(extract(value)).toBeUndefined();
    }
  });

  it('writes the span context back, and nothing without one', () => {
    const carrier: Record<string, string> = {};
    const ctx = trace.setSpanContext(ROOT_CONTEXT, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED });
    propagator.inject(ctx, carrier, defaultTextMapSetter);
    expect(carrier).toEqual({ 'uber-trace-id': '4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7:0:1' });
    const none: Record<string, string> = {};
    propagator.inject(ROOT_CONTEXT, none, defaultTextMapSetter);
    expect(none).toEqual({});
    expect(propagator.fields()).toEqual(['uber-trace-id']);
  });
});
