export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'denied' | 'tls' | 'too-large' | 'aborted' | 'invalid-url';

/** Why a call got no answer; `message` reads as the original's Go HTTP client words it (`Get "url": ...`). */
export class UpstreamError extends Error {
  readonly kind: UpstreamErrorKind;
  constructor(kind: UpstreamErrorKind, message: string) {
    super(message);
    this.name = 'UpstreamError';
    this.kind = kind;
  }
}

/** The operation word of Go's `url.Error` (`Get`, `Post`, `Delete`...): the method with only its first letter upper-case. */
export function goMethod(method: string): string {
  return method.charAt(0).toUpperCase() + method.slice(1).toLowerCase();
}

/**
 * A connection or response failure, worded as Go's HTTP client words it (the original server's
 * messages quote it), and the kind of failure it is.
 */
export function describeNetworkError(error: NodeJS.ErrnoException, host: string): { kind: UpstreamErrorKind; text: string } {
  const { address, port } = error as NodeJS.ErrnoException & { address?: string; port?: number };
  const target = address ? (address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`) : host;
  switch (error.code) {
    case 'ECONNREFUSED':
      return { kind: 'unreachable', text: `dial tcp ${target}: connect: connection refused` };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { kind: 'unreachable', text: `dial tcp: lookup ${host.replace(/:\d+$/, '')}: no such host` };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { kind: 'unreachable', text: `dial tcp ${target}: connect: no route to host` };
    case 'ETIMEDOUT':
      return { kind: 'timeout', text: `dial tcp ${target}: i/o timeout` };
    case 'ECONNRESET':
      return { kind: 'unreachable', text: 'read: connection reset by peer' };
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_STATUS':
      return { kind: 'unreachable', text: 'malformed HTTP response' };
    default:
      return { kind: 'unreachable', text: error.message };
  }
}
