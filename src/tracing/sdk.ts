import { hostname } from 'node:os';
import type { IncomingHttpHeaders } from 'node:http';
import {
  context, defaultTextMapGetter, defaultTextMapSetter, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace,
  type Context, type Span, type TextMapPropagator, type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, setGlobalErrorHandler, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Settings } from '../config/settings.ts';
import type { Logger } from '../logging/logger.ts';
import { VERSION } from '../version.ts';
import { JaegerPropagator } from './jaeger-propagator.ts';
import { RateLimitingSampler } from './rate-limiting-sampler.ts';
import type { SpanAttributes, SpanKindName, Tracing } from './types.ts';

const KINDS: Record<SpanKindName, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };

/** The process-wide store of the active span; registered once, by the first tracing started. */
let contextManagerRegistered = false;

/** Loaded only when tracing is on (see `startTracing`). */
export function createTracing(settings: Settings['tracing'], endpoint: string, log: Logger): Tracing {
  if (!contextManagerRegistered) {
    contextManagerRegistered = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  // Export failures (a receiver down or refusing) would otherwise go to OpenTelemetry's silent diag logger.
  setGlobalErrorHandler((error) => log.warn({ component: 'tracing', error: error instanceof Error ? error.message : String(error) }, 'span export failed'));
  const provider = new TracerProvider({
    sampler: new ParentBasedSampler({ root: sampler(settings, log) }),
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      [ATTR_SERVICE_VERSION]: VERSION,
      'service.instance.id': `${hostname()}:${process.pid}`,
      'host.name': hostname(),
      ...Object.fromEntries(settings.customAttributes),
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: endpoint }) })],
  });
  const propagators: TextMapPropagator[] = settings.propagation.flatMap((name) =>
    name === 'w3c' ? [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] : [new JaegerPropagator()]);
  return new SdkTracing(provider, provider.getTracer('dashgate', VERSION), propagators.length === 1 ? propagators[0]! : new CompositePropagator({ propagators }), settings.filterOperationalEndpoints);
}

/** The root sampler for new traces, as the original reads `sampler_type` and `sampler_param`. */
function sampler(settings: Settings['tracing'], log: Logger): Sampler {
  const param = settings.samplerParam;
  switch (settings.samplerType) {
    case 'const':
      return param >= 1 ? new AlwaysOnSampler() : new AlwaysOffSampler();
    case 'probabilistic':
      return new TraceIdRatioBasedSampler(param);
    case 'rateLimiting':
      return new RateLimitingSampler(param);
    case 'remote':
      // The original samples by this ratio too until the remote server's strategy arrives.
      log.warn({ component: 'tracing', samplerParam: param }, 'remote sampling is not supported: sampling new traces with probability sampler_param');
      return new TraceIdRatioBasedSampler(param);
  }
}

class SdkTracing implements Tracing {
  readonly filterOperationalEndpoints: boolean;
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;
  readonly #propagator: TextMapPropagator;
  /** What a server span continues (the client's trace and baggage), for running its work. */
  readonly #continued = new WeakMap<Span, Context>();

  constructor(provider: TracerProvider, tracer: Tracer, propagator: TextMapPropagator, filterOperationalEndpoints: boolean) {
    this.#provider = provider;
    this.#tracer = tracer;
    this.#propagator = propagator;
    this.filterOperationalEndpoints = filterOperationalEndpoints;
  }

  serverSpan(name: string, headers: IncomingHttpHeaders, attributes: SpanAttributes): Span {
    const parent = this.#propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: defined(attributes) }, parent);
    if (parent !== ROOT_CONTEXT) this.#continued.set(span, parent);
    return span;
  }

  span(name: string, kind: SpanKindName, attributes: SpanAttributes): Span {
    return this.#tracer.startSpan(name, { kind: KINDS[kind], attributes: defined(attributes) });
  }

  childSpan(name: string, kind: SpanKindName, attributes: SpanAttributes): Span | null {
    if (!trace.getActiveSpan()?.isRecording()) return null;
    return this.#tracer.startSpan(name, { kind: KINDS[kind], attributes: defined(attributes) });
  }

  within<T>(span: Span, fn: () => T): T {
    return context.with(trace.setSpan(this.#continued.get(span) ?? context.active(), span), fn);
  }

  inject(headers: Record<string, unknown>, span?: Span): void {
    const active = context.active();
    this.#propagator.inject(span ? trace.setSpan(active, span) : active, headers, defaultTextMapSetter);
  }

  failed(span: Span, errorType: string): void {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute(ATTR_ERROR_TYPE, errorType);
  }

  logFields(): { trace_id: string; span_id: string } | null {
    const ids = trace.getActiveSpan()?.spanContext();
    return ids && isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : null;
  }

  async flush(): Promise<void> {
    await this.#provider.forceFlush();
  }

  async close(): Promise<void> {
    await this.#provider.shutdown();
  }
}

/** Attributes without the undefined ones (OpenTelemetry would warn about each). */
function defined(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const kept: Record<string, string | number | boolean> = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) kept[key] = value;
  }
  return kept;
}
