import { DomainError, badRequest, unavailable } from './domain.ts';
import { MESSAGES } from './messages.ts';

/** Socket-level failures reaching PostgreSQL (refused, reset, timed out, name lookup). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/**
 * A connect to a Unix socket that is not there: how a restarting PostgreSQL on its socket (the
 * embedded one) refuses, between the old server removing the socket file and the new one
 * creating it. Any other missing file is not the database's.
 */
function isMissingSocket(e: Record<string, unknown>): boolean {
  return e.code === 'ENOENT' && e.syscall === 'connect';
}

/**
 * SQLSTATEs meaning "the server is gone or not accepting work": connection exceptions (class 08,
 * except 08P01, a protocol violation caused by the query itself) and operator intervention
 * (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now), plus too many connections.
 */
function isUnavailableState(code: string): boolean {
  return (code.startsWith('08') && code !== '08P01') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** Messages the pg driver uses when a connection ends under it, without any code. */
const DROPPED_CONNECTION = /Connection terminated|Client has encountered a connection error|Connection ended|connection is closed|terminating connection/i;

/**
 * SQLSTATEs that input alone causes and that only PostgreSQL can detect: text it cannot store
 * (NUL characters: 22P05 in jsonb, 22021 in text) and NULs in inlined query text (08P01).
 */
const BAD_INPUT_STATES = new Set(['22P05', '22021', '08P01']);

/** Every error in a wrapped chain (MikroORM wraps driver errors; sockets may report several). */
export function* errorChain(error: unknown): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  const pending = [error];
  while (pending.length) {
    const next = pending.pop();
    if (!next || typeof next !== 'object' || seen.has(next)) continue;
    seen.add(next);
    const e = next as { cause?: unknown; previous?: unknown; errors?: unknown };
    yield e as Record<string, unknown>;
    pending.push(e.cause, e.previous);
    if (Array.isArray(e.errors)) pending.push(...e.errors);
  }
}

/**
 * What a failure means to the client: a domain error as it is; a database failure as 503 "database
 * unavailable" while PostgreSQL is down or restarting, or 400 for input it refused to store; null
 * for anything else, which is an internal error.
 */
export function classify(error: unknown): DomainError | null {
  if (error instanceof DomainError) return error;
  for (const e of errorChain(error)) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (BAD_INPUT_STATES.has(code)) return badRequest();
    if (SOCKET_CODES.has(code) || isMissingSocket(e) || isUnavailableState(code)) return unavailable();
    if (typeof e.message === 'string' && DROPPED_CONNECTION.test(e.message)) return unavailable();
  }
  return null;
}

export interface RenderedError {
  status: number;
  /** The REST body: `{"message"}`, or the original server's richer shape for that error. */
  body: Record<string, unknown>;
  /** The GraphQL `extensions.code`. */
  code: string;
  message: string;
  /** Headers the answer carries (`Retry-After`). */
  headers?: Readonly<Record<string, string>>;
  /** Set for failures no one anticipated: the caller logs it, the client sees only a 500. */
  unexpected?: unknown;
}

/** THE mapping from any thrown value to what a client sees. */
export function renderError(error: unknown): RenderedError {
  const known = classify(error);
  if (known) {
    const rendered: RenderedError = { status: known.status, body: known.body ?? { message: known.message }, code: known.code, message: known.message };
    if (known.headers) rendered.headers = known.headers;
    return rendered;
  }
  return { status: 500, body: { message: MESSAGES.http.internal }, code: 'INTERNAL_SERVER_ERROR', message: MESSAGES.http.internal, unexpected: error };
}
