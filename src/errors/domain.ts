import { MESSAGES } from './messages.ts';

/**
 * The error type of the whole system. Services, authentication and the front door throw these;
 * `render.ts` turns them into the wire form of each face, so REST and GraphQL report one failure
 * identically. This module and its folder import nothing else of the app.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'LOOP_DETECTED'
  | 'TOO_MANY_REQUESTS'
  | 'UNAVAILABLE'
  | 'INTERNAL';

export const STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  LOOP_DETECTED: 508,
  TOO_MANY_REQUESTS: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /**
   * A whole wire body for the REST face when the original server's body is not `{"message"}`
   * (for example its structured 401s); `message` is still the human text.
   */
  readonly body: Record<string, unknown> | undefined;
  /** Response headers that go with it on either face (`Retry-After` of a 503). */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: ErrorCode, message: string, body?: Record<string, unknown>, headers?: Readonly<Record<string, string>>) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.status = STATUS[code];
    this.body = body;
    this.headers = headers;
  }
}

/**
 * A refusal of the caller itself (its credentials, or its rights to do this at all), as opposed to
 * a refusal of what it asked for (a role above its own, a read-only data source, a wrong old
 * password). The graph's mutations answer the second kind as user errors, the first as errors of
 * the request.
 */
export class CallerRefusal extends DomainError {}

export const badRequest = (message: string = MESSAGES.http.badRequest) => new DomainError('BAD_REQUEST', message);
export const notFound = (message: string = MESSAGES.http.notFound) => new DomainError('NOT_FOUND', message);
export const conflict = (message: string) => new DomainError('CONFLICT', message);
export const forbidden = (message: string) => new DomainError('FORBIDDEN', message);
export const preconditionFailed = (message: string) => new DomainError('PRECONDITION_FAILED', message);
export const tooLarge = () => new DomainError('PAYLOAD_TOO_LARGE', MESSAGES.http.tooLarge);
export const unavailable = () => new DomainError('UNAVAILABLE', MESSAGES.database.unavailable);
/** 503 for work this instance has no room for now, with when to ask again. */
export const busy = (message: string, retryAfterSeconds: number) => new DomainError('UNAVAILABLE', message, undefined, { 'retry-after': String(retryAfterSeconds) });

/** The legacy role middleware's 403. */
export const permissionDenied = () => new CallerRefusal('FORBIDDEN', MESSAGES.http.permissionDenied);

/** The access-control 403, naming the missing action as the original server does. */
export function accessDenied(action: string): DomainError {
  const message = MESSAGES.auth.accessDenied(action);
  const accessErrorId = `ACE${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`;
  return new CallerRefusal('FORBIDDEN', message, { title: 'Access denied', message, accessErrorId });
}

/** The structured 401 bodies of the current original server (`errutil` shape). */
export function unauthorized(message: string, messageId: string): DomainError {
  return new CallerRefusal('UNAUTHENTICATED', message, { extra: null, message, messageId, statusCode: 401, traceID: '' });
}

/** PostgreSQL's unique_violation, with the name of the constraint or index that fired. */
export function uniqueViolation(error: unknown): string | null {
  const e = error as { code?: string; constraint?: string } | null;
  return e && e.code === '23505' ? (e.constraint ?? '') : null;
}

/** The 401s of authentication, each with the original server's message id. */
export const AUTH_ERRORS = {
  unauthorized: () => unauthorized(MESSAGES.auth.unauthorized, 'auth.unauthorized'),
  badPassword: () => unauthorized(MESSAGES.auth.badPassword, 'password-auth.failed'),
  // Same body as a wrong password: a distinct one would reveal which logins exist.
  blocked: () => unauthorized(MESSAGES.auth.badPassword, 'password-auth.failed'),
  invalidKey: () => unauthorized(MESSAGES.auth.invalidKey, 'api-key.invalid'),
  expiredKey: () => unauthorized(MESSAGES.auth.expiredKey, 'api-key.expired'),
  revokedKey: () => unauthorized(MESSAGES.auth.revokedKey, 'api-key.revoked'),
  disabled: () => unauthorized(MESSAGES.auth.unauthorized, 'identity.disabled'),
  wrongOrg: () => unauthorized(MESSAGES.auth.wrongOrg, 'api-key.organization-mismatch'),
};
