import { MESSAGES } from '../errors/messages.ts';
import type { DataSourceTarget } from './target.ts';
import { describeTlsError } from './tls.ts';

/**
 * Why a call got no answer: the network's reasons (`timeout`, `unreachable`, `tls`, `too-large`,
 * `aborted`), the egress policy's (`denied`), and the data source's own configuration, which no
 * call can succeed with (`invalid-url`, `tls-config`: TLS material that does not parse,
 * `secrets`: secrets that cannot be decrypted).
 */
export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'denied' | 'tls' | 'too-large' | 'aborted' | 'invalid-url' | 'tls-config' | 'secrets';

/**
 * The status each kind is answered with wherever a failed call becomes an answer (a refId's
 * error, a resource's answer): 504 timeout, 502 for an upstream that could not be used, 403 the
 * egress policy, 499 the client left, 400 an unusable URL, 500 unreadable secrets (as the original's
 * "Unable to load datasource meta data").
 */
const STATUS: Record<UpstreamErrorKind, number> = {
  timeout: 504, unreachable: 502, tls: 502, 'too-large': 502, denied: 403, aborted: 499, 'invalid-url': 400, 'tls-config': 502, secrets: 500,
};

/** Why a call got no answer; `message` reads as the original's Go HTTP client words it (`Get "url": ...`). */
export class UpstreamError extends Error {
  readonly kind: UpstreamErrorKind;
  /** The HTTP status a client is answered with for it. */
  readonly status: number;
  constructor(kind: UpstreamErrorKind, message: string) {
    super(message);
    this.name = 'UpstreamError';
    this.kind = kind;
    this.status = STATUS[kind];
  }
}

/**
 * Why no call can succeed with the data source as configured, before any is tried, in the words
 * every caller answers with: secrets that cannot be decrypted (`secrets`), a URL that is not
 * absolute http(s) (`invalid-url`), TLS material that does not parse (`tls-config`, naming the
 * field). Null when calls may be tried.
 */
export function unusableTarget(target: Pick<DataSourceTarget, 'secretsUnreadable' | 'upstream' | 'rawUrl' | 'tlsError'>): UpstreamError | null {
  if (target.secretsUnreadable) return new UpstreamError('secrets', MESSAGES.proxy.secretsUnreadable);
  if (!target.upstream) return new UpstreamError('invalid-url', MESSAGES.proxy.invalidUrl(target.rawUrl));
  if (target.tlsError) return new UpstreamError('tls-config', target.tlsError);
  return null;
}

/**
 * An address the egress policy denies as it resolves: the proxy's words, never the address (a
 * client must not learn what a name resolves to inside).
 */
export const deniedAddress = (): UpstreamError => new UpstreamError('denied', MESSAGES.proxy.addressDenied);

/** A call that got no answer, as Go's `url.Error` words it: `Get "http://host/path": <why>`. */
export function callError(kind: UpstreamErrorKind, method: string, url: string, text: string): UpstreamError {
  return new UpstreamError(kind, `${goMethod(method)} "${url}": ${text}`);
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
  const tls = describeTlsError(error);
  if (tls) return tls;
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
