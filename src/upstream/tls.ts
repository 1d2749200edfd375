import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { parseCertificates, parsePrivateKey } from '../services/data-source-tls.ts';

/**
 * A data source's TLS settings as the original reads them (its `dsTLSOptions` and the plugin SDK's
 * `GetTLSConfig`): `jsonData.tlsSkipVerify` and `serverName` always; `secureJsonData.tlsCACert`
 * only with `jsonData.tlsAuthWithCACert`; `tlsClientCert` and `tlsClientKey` only with
 * `jsonData.tlsAuth`, and only both together. Pure; the agents are made from it in connections.ts.
 */
export interface TlsMaterial {
  /** Replaces the system's roots, as Go's `RootCAs`. */
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  /** SNI and the name the certificate is verified against; the URL's host name when absent. */
  servername?: string;
  /** Tells one set of material from another without holding the secrets as a key. */
  fingerprint: string;
}

export type TlsSettings = { material: TlsMaterial | null; error: null } | { material: null; error: string };

/** `MustBool`: only a JSON boolean counts. */
const flag = (value: unknown) => value === true;

/** The TLS material of a data source; null material when it has none (the shared default pool serves it). */
export function tlsSettingsFor(jsonData: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string>>): TlsSettings {
  const skipVerify = flag(jsonData.tlsSkipVerify);
  const servername = typeof jsonData.serverName === 'string' && jsonData.serverName !== '' ? jsonData.serverName : undefined;
  const ca = flag(jsonData.tlsAuthWithCACert) && secrets.tlsCACert ? secrets.tlsCACert : undefined;
  const clientAuth = flag(jsonData.tlsAuth) && Boolean(secrets.tlsClientCert) && Boolean(secrets.tlsClientKey);
  const cert = clientAuth ? secrets.tlsClientCert : undefined;
  const key = clientAuth ? secrets.tlsClientKey : undefined;
  if (!skipVerify && !servername && !ca && !cert) return { material: null, error: null };

  // As the SDK, a CA bundle with no usable certificate fails every call instead of trusting the system roots.
  if (ca && 'reason' in parseCertificates(ca)) return { material: null, error: 'failed to parse TLS CA PEM certificate' };
  if (cert && key) {
    const certificates = parseCertificates(cert);
    if ('reason' in certificates) return { material: null, error: 'tls: failed to find any PEM data in certificate input' };
    const privateKey = parsePrivateKey(key);
    if ('reason' in privateKey) return { material: null, error: 'tls: failed to find any PEM data in key input' };
    if (!certificates.certificates[0]!.checkPrivateKey(privateKey.key)) return { material: null, error: 'tls: private key does not match public key' };
  }
  const fingerprint = createHash('sha256').update(JSON.stringify([skipVerify, servername ?? '', ca ?? '', cert ?? '', key ?? ''])).digest('base64url');
  return { material: { ca, cert, key, rejectUnauthorized: !skipVerify, servername, fingerprint }, error: null };
}

/** Go's words for TLS alerts a server sends (crypto/tls alert.go), by OpenSSL's alert name. */
const ALERTS: Record<string, string> = {
  CERTIFICATE_REQUIRED: 'certificate required',
  BAD_CERTIFICATE: 'bad certificate',
  HANDSHAKE_FAILURE: 'handshake failure',
  UNKNOWN_CA: 'unknown certificate authority',
  CERTIFICATE_EXPIRED: 'expired certificate',
  CERTIFICATE_REVOKED: 'revoked certificate',
  CERTIFICATE_UNKNOWN: 'unknown certificate',
  UNSUPPORTED_CERTIFICATE: 'unsupported certificate',
  ACCESS_DENIED: 'access denied',
  DECRYPT_ERROR: 'error decrypting message',
  PROTOCOL_VERSION: 'protocol version not supported',
  INTERNAL_ERROR: 'internal error',
  UNRECOGNIZED_NAME: 'unrecognized name',
};

const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE',
]);

const VERIFY = 'tls: failed to verify certificate: ';

/** Our own code for a handshake that took longer than `[dataproxy] tls_handshake_timeout_seconds`. */
export const HANDSHAKE_TIMEOUT = 'ETLSHANDSHAKETIMEOUT';

type TlsError = NodeJS.ErrnoException & { host?: string; cert?: { subjectaltname?: string; subject?: { CN?: string } } };

/**
 * A TLS failure worded as Go's client words it (the original's messages quote it), or null when
 * the error is not about TLS. Never quotes key material: only names and codes.
 */
export function describeTlsError(error: TlsError): { kind: 'tls' | 'timeout'; text: string } | null {
  const code = error.code ?? '';
  if (code === HANDSHAKE_TIMEOUT) return { kind: 'timeout', text: 'net/http: TLS handshake timeout' };
  if (UNKNOWN_AUTHORITY.has(code)) return { kind: 'tls', text: `${VERIFY}x509: certificate signed by unknown authority` };
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return { kind: 'tls', text: `${VERIFY}x509: certificate has expired or is not yet valid` };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return { kind: 'tls', text: `${VERIFY}${hostnameError(error.host ?? '', error.cert)}` };
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') return { kind: 'tls', text: 'http: server gave HTTP response to HTTPS client' };
  const alert = /^ERR_SSL_(?:SSLV3|TLSV1|TLSV13)_ALERT_([A-Z_]+)$/.exec(code)?.[1];
  if (alert) return { kind: 'tls', text: `remote error: tls: ${ALERTS[alert] ?? alert.toLowerCase().replace(/_/g, ' ')}` };
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.startsWith('ERR_OSSL_')) return { kind: 'tls', text: `tls: ${error.message}` };
  return null;
}

/** Go's `x509.HostnameError` text for a certificate that does not name `host`. */
export function hostnameError(host: string, cert: TlsError['cert']): string {
  const names = (cert?.subjectaltname ?? '').split(', ').filter(Boolean);
  const dns = names.filter((n) => n.startsWith('DNS:')).map((n) => n.slice(4));
  const ips = names.filter((n) => n.startsWith('IP Address:')).map((n) => n.slice(11));
  if (names.length === 0 && cert?.subject?.CN === host) return 'x509: certificate relies on legacy Common Name field, use SANs instead';
  let valid: string;
  if (isIP(host)) {
    if (ips.length === 0) return `x509: cannot validate certificate for ${host} because it doesn't contain any IP SANs`;
    valid = ips.join(', ');
  } else valid = dns.join(', ');
  if (valid === '') return `x509: certificate is not valid for any names, but wanted to match ${host}`;
  return `x509: certificate is valid for ${valid}, not ${host}`;
}
