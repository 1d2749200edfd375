import type { IncomingHttpHeaders } from 'node:http';
import { MESSAGES } from '../../errors/messages.ts';
import { UpstreamError } from '../../upstream/index.ts';
import type { KindContext, UpstreamRequest } from './kind.ts';

/**
 * What every kind's health check shares (each check is its kind's own `health.ts`): the verdict's
 * shape, and a probe's answer read as text or the reason there was none. Each kind asks its store
 * what the original's plugin asks it (pkg/tsdb/<kind>, pkg/promlib) and words the verdict as it
 * does: the same success message and failure template, with the cause (refused, timeout, the
 * store's status, a bad answer) filled in.
 */

/** The original's `backend.HealthStatus` names. */
export type HealthStatus = 'OK' | 'ERROR' | 'UNKNOWN';

/** What a data source health check found: 200 when `status` is OK, else 400, with this body. */
export interface DataSourceHealth {
  status: HealthStatus;
  message: string;
  /** Extra detail some kinds report (Graphite's `verboseMessage`); absent otherwise. */
  details?: Record<string, unknown>;
}

/** A check runs with its kind's context: the data source as kinds see it, and its one way to call it. */
export type HealthCheck = (ctx: KindContext) => Promise<DataSourceHealth>;

export interface ProbeResponse {
  status: number;
  /** `401 Unauthorized`, as Go's `Response.Status` reads. */
  statusLine: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export const ok = (message: string): DataSourceHealth => ({ status: 'OK', message });
export const error = (message: string, details?: Record<string, unknown>): DataSourceHealth =>
  details ? { status: 'ERROR', message, details } : { status: 'ERROR', message };
export const notImplemented = (): DataSourceHealth => ({ status: 'UNKNOWN', message: MESSAGES.health.notImplemented });

/**
 * The answer, or the reason there was none worded as Go's client words it (a call that failed);
 * anything else (an address the egress policy denies) propagates.
 */
export async function attempt(ctx: KindContext, probe: UpstreamRequest): Promise<{ res: ProbeResponse; failure?: never } | { res?: never; failure: string }> {
  try {
    const answer = await ctx.call(probe);
    return { res: { status: answer.status, statusLine: `${answer.status} ${answer.statusText}`.trim(), headers: answer.headers, body: answer.body.toString('utf8') } };
  } catch (cause) {
    if (cause instanceof UpstreamError && cause.kind !== 'denied') return { failure: cause.message };
    throw cause;
  }
}

export function json(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

export function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

export const is2xx = (res: ProbeResponse) => res.status >= 200 && res.status < 300;
export const requestFailed = (res: ProbeResponse) => `request failed: ${res.statusLine}`;
/** Go's decoder error for a body that is not JSON, shortened to what it means. */
export const notJson = (res: ProbeResponse) => `invalid response: not JSON (${res.statusLine}, ${res.body.length} bytes)`;
