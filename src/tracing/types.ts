import type { IncomingHttpHeaders } from 'node:http';
import type { Span } from '@opentelemetry/api';

export type { Span };

export type SpanKindName = 'server' | 'client' | 'internal';

/** Span attributes; undefined ones are left out. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/**
 * OpenTelemetry traces, when `[tracing.opentelemetry]` names a receiver. Everything that makes
 * spans holds one of these or null, and does nothing but a null check when tracing is off: the
 * SDK is not even loaded then (see `startTracing`). Spans follow the request through its async
 * work (the active span lives in an AsyncLocalStorage): one started while another is active is its child.
 */
export interface Tracing {
  /** `[tracing.opentelemetry] filter_operational_endpoints`: no spans for `/api/health` and `/metrics`. */
  readonly filterOperationalEndpoints: boolean;
  /** The span of a request received: continues the trace its headers carry (in the configured formats), else starts one. */
  serverSpan(name: string, headers: IncomingHttpHeaders, attributes: SpanAttributes): Span;
  /** A span under the active one, or the first of a new trace when none is active. */
  span(name: string, kind: SpanKindName, attributes: SpanAttributes): Span;
  /** A span under the active one when that one is recorded; null otherwise (statements no sampled request makes get none). */
  childSpan(name: string, kind: SpanKindName, attributes: SpanAttributes): Span | null;
  /** The first span of a new trace, whatever span is active (work no request asked for, such as a live query's refresh). */
  rootSpan(name: string, kind: SpanKindName, attributes: SpanAttributes): Span;
  /** Runs `fn` with no span active: what it does belongs to no trace. */
  outside<T>(fn: () => T): T;
  /** Runs `fn` with `span` active. */
  within<T>(span: Span, fn: () => T): T;
  /**
   * Writes the trace context of `span` (the active one when absent) into `headers` in every
   * configured format, replacing a client's values of the same headers. Lower-case names.
   */
  inject(headers: Record<string, unknown>, span?: Span): void;
  /** Marks the span failed: its status is an error and `error.type` says which. */
  failed(span: Span, errorType: string): void;
  /** The active span's ids, for a log line; null outside any span. */
  logFields(): { trace_id: string; span_id: string } | null;
  /** Sends the spans ended so far; a failure is logged as the batches' own are, not thrown. */
  flush(): Promise<void>;
  /** Sends the spans not sent yet, and stops. */
  close(): Promise<void>;
}
