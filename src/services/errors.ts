/**
 * Typed domain errors. Services throw these; GraphQL maps them to `extensions { code, http }` and
 * REST to `{"message": ...}` with the same status, so both faces report one failure identically.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNAVAILABLE'
  | 'INTERNAL';

const STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
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

  constructor(code: ErrorCode, message: string, body?: Record<string, unknown>) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.status = STATUS[code];
    this.body = body;
  }
}

export const badRequest = (message: string) => new DomainError('BAD_REQUEST', message);
export const notFound = (message: string) => new DomainError('NOT_FOUND', message);
export const conflict = (message: string) => new DomainError('CONFLICT', message);
export const forbidden = (message: string) => new DomainError('FORBIDDEN', message);

/** The legacy role middleware's 403. */
export const permissionDenied = () => forbidden('Permission denied');

/** The access-control 403, naming the missing action as the original server does. */
export function accessDenied(action: string): DomainError {
  const message = `You'll need additional permissions to perform this action. Permissions needed: ${action}`;
  const accessErrorId = `ACE${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`;
  return new DomainError('FORBIDDEN', message, { title: 'Access denied', message, accessErrorId });
}

/** The structured 401 bodies of the current original server (`errutil` shape). */
export function unauthorized(message: string, messageId: string): DomainError {
  return new DomainError('UNAUTHENTICATED', message, { extra: null, message, messageId, statusCode: 401, traceID: '' });
}

/** PostgreSQL's unique_violation, with the name of the constraint or index that fired. */
export function uniqueViolation(error: unknown): string | null {
  const e = error as { code?: string; constraint?: string } | null;
  return e && e.code === '23505' ? (e.constraint ?? '') : null;
}
