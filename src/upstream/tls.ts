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

/**
 * The TLS material of a data source; null material when it has none (the shared default pool
 * serves it). Material that does not parse is accepted when written, as the original accepts it;
 * it is reported here, where it is used, by the field's name and what is wrong with it (never its
 * value), and every call of the data source then fails with that error.
 */
export function tlsSettingsFor(jsonData: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string>>): TlsSettings {
  const skipVerify = flag(jsonData.tlsSkipVerify);
  const servername = typeof jsonData.serverName === 'string' && jsonData.serverName !== '' ? jsonData.serverName : undefined;
  const ca = flag(jsonData.tlsAuthWithCACert) && secrets.tlsCACert ? secrets.tlsCACert : undefined;
  const clientAuth = flag(jsonData.tlsAuth) && Boolean(secrets.tlsClientCert) && Boolean(secrets.tlsClientKey);
  const cert = clientAuth ? secrets.tlsClientCert : undefined;
  const key = clientAuth ? secrets.tlsClientKey : undefined;
  if (!skipVerify && !servername && !ca && !cert) return { material: null, error: null };

  // As the SDK, a CA bundle with no usable certificate fails every call instead of trusting the system roots.
  const authorities = ca ? parseCertificates(ca) : null;
  if (ca && authorities && 'reason' in authorities) return unusable('tlsCACert', certificateProblem(ca, authorities.reason));
  if (cert && key) {
    const certificates = parseCertificates(cert);
    if ('reason' in certificates) return unusable('tlsClientCert', certificateProblem(cert, certificates.reason));
    const privateKey = parsePrivateKey(key);
    if ('reason' in privateKey) return unusable('tlsClientKey', keyProblem(key));
    if (!certificates.certificates[0]!.checkPrivateKey(privateKey.key)) return unusable('tlsClientKey', 'is not the private key of secureJsonData.tlsClientCert');
  }
  const fingerprint = createHash('sha256').update(JSON.stringify([skipVerify, servername ?? '', ca ?? '', cert ?? '', key ?? ''])).digest('base64url');
  return { material: { ca, cert, key, rejectUnauthorized: !skipVerify, servername, fingerprint }, error: null };
}

function unusable(field: 'tlsCACert' | 'tlsClientCert' | 'tlsClientKey', problem: string): TlsSettings {
  return { material: null, error: `the data source's TLS settings are unusable: secureJsonData.${field} ${problem}` };
}

/** One line naming a file (`/etc/ssl/certs/ca.pem`, `./ca.crt`, `C:\certs\ca.pem`) rather than holding PEM text. */
const FILE_PATH = /^(?:~?\/|\.{1,2}[\\/]|[A-Za-z]:[\\/])[^\r\n]*$|^[^\r\n]*\.(?:pem|crt|cer|key|der|p12|pfx)$/i;
const PEM_LABEL = /-----BEGIN ([A-Z0-9 ]+)-----/;

/** What is wrong with text that should hold PEM certificates (`reason`: the parser's); it never quotes the text. */
function certificateProblem(text: string, reason: string): string {
  const label = PEM_LABEL.exec(text)?.[1];
  if (label === 'CERTIFICATE') return /^certificate \d+ of \d+/.test(reason) ? `holds PEM certificates, of which ${reason}` : 'holds a PEM certificate that does not parse';
  if (label?.endsWith('PRIVATE KEY')) return 'holds a private key where a PEM certificate belongs';
  if (FILE_PATH.test(text.trim())) return 'holds no PEM certificate: it looks like a file path, and the certificate\'s PEM text is expected';
  return label ? `holds a PEM ${label.toLowerCase()} block where a certificate belongs` : 'holds no PEM certificate';
}

/** What is wrong with text that should hold a PEM private key; it never quotes the text. */
function keyProblem(text: string): string {
  const label = PEM_LABEL.exec(text)?.[1];
  if (label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(text)) return 'holds an encrypted private key, which cannot be used';
  if (label?.endsWith('PRIVATE KEY')) return 'holds a PEM private key that does not parse';
  if (label === 'CERTIFICATE') return 'holds a certificate where a PEM private key belongs';
  if (FILE_PATH.test(text.trim())) return 'holds no PEM private key: it looks like a file path, and the key\'s PEM text is expected';
  return 'holds no PEM private key';
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
