import type { Settings } from '../config/settings.ts';
import type { Logger } from '../logging/logger.ts';
import type { Tracing } from './types.ts';

export type { Span, SpanAttributes, SpanKindName, Tracing } from './types.ts';

/**
 * Tracing as configured, or null when it is off (no receiver address, the default). The SDK and
 * exporter are loaded only here, only when tracing is on: a server that does not trace never
 * loads them.
 */
export async function startTracing(settings: Settings['tracing'], log: Logger): Promise<Tracing | null> {
  if (!settings.endpoint) return null;
  const { createTracing } = await import('./sdk.ts');
  return createTracing(settings, settings.endpoint, log);
}

/**
 * A logger whose lines carry the active span's `trace_id` and `span_id` (the names OpenTelemetry's
 * log data model and its pino instrumentation use), unless the line sets them itself. The same
 * logger when tracing is off.
 */
export function withTraceIds(log: Logger, tracing: Tracing | null): Logger {
  if (!tracing) return log;
  return log.child({}, {
    formatters: {
      log(object: object) {
        if ('trace_id' in object) return object;
        const ids = tracing.logFields();
        return ids ? { ...object, ...ids } : object;
      },
    },
  });
}
