import type { Span, Tracing } from '../tracing/index.ts';
import type { UpstreamError } from './errors.ts';
import type { DataSourceTarget } from './target.ts';

/**
 * The span of one call to a data source: which data source (uid, type, org), the method, and where
 * it goes (scheme, host name, port), never its path or query string (which may carry credentials),
 * any header or any of its secrets. It covers the wait for a slot of the queues too.
 */
export function upstreamSpan(tracing: Tracing, target: DataSourceTarget, method: string): Span {
  const upstream = target.upstream;
  return tracing.span(method, 'client', {
    'http.request.method': method,
    'url.scheme': upstream ? upstream.protocol.slice(0, -1) : undefined,
    'server.address': upstream ? upstream.hostname.replace(/^\[|\]$/g, '') : undefined,
    'server.port': upstream ? Number(upstream.port || (upstream.protocol === 'https:' ? 443 : 80)) : undefined,
    datasource_uid: target.uid,
    datasource_type: target.type,
    org_id: target.orgId,
  });
}

/** Ends the span with the status the data source answered; 4xx and 5xx mark it failed, as for any HTTP client span. */
export function answered(tracing: Tracing, span: Span, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 400) tracing.failed(span, String(status));
  span.end();
}

/** Ends the span of a call that got no answer, with the kind of failure (never its message, which quotes the URL). */
export function unanswered(tracing: Tracing, span: Span, error: unknown): void {
  tracing.failed(span, (error as Partial<UpstreamError>)?.kind ?? 'error');
  span.end();
}
