import { isSpanContextValid, trace, TraceFlags, type Context, type TextMapGetter, type TextMapPropagator, type TextMapSetter } from '@opentelemetry/api';

const HEADER = 'uber-trace-id';

/**
 * `propagation = jaeger`: Jaeger's `uber-trace-id: {trace-id}:{span-id}:{parent-span-id}:{flags}`
 * (hex; a 64-bit trace id is widened to 128 bits; flag 1 means sampled). Jaeger's `uberctx-*`
 * baggage headers are neither read nor written.
 */
export class JaegerPropagator implements TextMapPropagator {
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    const ids = trace.getSpanContext(context);
    if (!ids || !isSpanContextValid(ids)) return;
    const flags = ids.traceFlags & TraceFlags.SAMPLED ? '1' : '0';
    setter.set(carrier, HEADER, `${ids.traceId}:${ids.spanId}:0:${flags}`);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const raw = getter.get(carrier, HEADER);
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (!value) return context;
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      return context;
    }
    const parts = decoded.split(':');
    if (parts.length !== 4 || !parts.every((part) => /^[0-9a-f]{1,32}$/i.test(part))) return context;
    const [traceId, spanId, , flags] = parts as [string, string, string, string];
    if (spanId.length > 16 || flags.length > 2) return context;
    const ids = {
      traceId: traceId.toLowerCase().padStart(32, '0'),
      spanId: spanId.toLowerCase().padStart(16, '0'),
      traceFlags: Number.parseInt(flags, 16) & 1 ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    };
    return isSpanContextValid(ids) ? trace.setSpanContext(context, ids) : context;
  }

  fields(): string[] {
    return [HEADER];
  }
}
