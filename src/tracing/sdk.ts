import { hostname } from 'node:os';
import type { IncomingHttpHeaders } from 'node:http';
import {
  context, defaultTextMapGetter, diag, DiagLogLevel, defaultTextMapSetter, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace,
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

/** The longest attribute value kept (longer ones are cut). */
const MAX_ATTRIBUTE_LENGTH = 1024;

/** The longest a shutdown waits for the last spans to be sent. */
const CLOSE_TIMEOUT_MS = 5_000;

const KINDS: Record<SpanKindName, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };

/** The process-wide store of the active span; registered once, by the first tracing started. */
let contextManagerRegistered = false;

/** Loaded only when tracing is on (see `startTracing`). */
export function createTracing(settings: Settings['tracing'], endpoint: string, log: Logger): Tracing {
  if (!contextManagerRegistered) {
    contextManagerRegistered = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  const failed = exportFailures(log);
  setGlobalErrorHandler(failed);
  // The SDK's own warnings (spans dropped from a full queue) go to the log too, rather than nowhere.
  const warn = (message: string) => log.warn({ component: 'tracing' }, message);
  diag.setLogger({ error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
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
    // Some values come from clients (a GraphQL operation's name): none may make a span large.
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH },
  });
  const propagators: TextMapPropagator[] = settings.propagation.flatMap((name) =>
    name === 'w3c' ? [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] : [new JaegerPropagator()]);
  return new SdkTracing(provider, provider.getTracer('dashgate', VERSION), propagators.length === 1 ? propagators[0]! : new CompositePropagator({ propagators }), settings.filterOperationalEndpoints, failed);
}

/** Export failures are logged at most once a minute, with how many there were. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/**
 * What OpenTelemetry reports failing (a receiver down or refusing a batch), which would otherwise
 * go to its silent diag logger; under load a receiver that is down fails many batches a second.
 */
function exportFailures(log: Logger): (error: unknown) => void {
  let loggedAt = -Infinity;
  let unlogged = 0;
  return (error) => {
    const now = performance.now();
    if (now - loggedAt < FAILURE_LOG_INTERVAL_MS) {
      unlogged++;
      return;
    }
    log.warn({ component: 'tracing', error: error instanceof Error ? error.message : String(error), failuresSinceLastLine: unlogged }, 'span export failed');
    loggedAt = now;
    unlogged = 0;
  };
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
  readonly #exportFailed: (error: unknown) => void;

  constructor(provider: TracerProvider, tracer: Tracer, propagator: TextMapPropagator, filterOperationalEndpoints: boolean, exportFailed: (error: unknown) => void) {
    this.#provider = provider;
    this.#exportFailed = exportFailed;
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

  rootSpan(name: string, kind: SpanKindName, attributes: SpanAttributes): Span {
    return this.#tracer.startSpan(name, { kind: KINDS[kind], attributes: defined(attributes), root: true });
  }

  outside<T>(fn: () => T): T {
    return context.with(ROOT_CONTEXT, fn);
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
    await this.#provider.forceFlush().catch(this.#exportFailed);
  }

  async close(): Promise<void> {
    // A receiver that does not answer does not hold up the shutdown for the exporter's own timeout.
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)));
    await Promise.race([this.#provider.shutdown(), bounded]).finally(() => clearTimeout(timer));
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
