import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

/**
 * The PEM secrets a data source's TLS settings read (`secureJsonData.tlsCACert`, `tlsClientCert`,
 * `tlsClientKey`) and what is wrong with one that is unusable, named by field. Writes store them
 * as sent, as the original does (clients send file paths there); the graph's write payloads warn
 * about an unusable one, and the calls that use it fail naming it. Pure: no I/O, table-tested.
 * Messages never quote the PEM text.
 */
export const TLS_SECRET_FIELDS = ['tlsCACert', 'tlsClientCert', 'tlsClientKey'] as const;
export type TlsSecretField = (typeof TLS_SECRET_FIELDS)[number];

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;
const ANY_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----/g;

/** The certificates of a PEM bundle, in order; a reason when there is none or one does not parse. */
export function parseCertificates(pem: string): { certificates: X509Certificate[] } | { reason: string } {
  const blocks = pem.match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0) return { reason: 'no PEM-encoded certificate found' };
  const certificates: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      certificates.push(new X509Certificate(block));
    } catch {
      return { reason: blocks.length === 1 ? 'the certificate does not parse' : `certificate ${i + 1} of ${blocks.length} does not parse` };
    }
  }
  return { certificates };
}

/** The private key of a PEM text; a reason when it is missing, encrypted or unreadable. */
export function parsePrivateKey(pem: string): { key: KeyObject } | { reason: string } {
  const labels = [...pem.matchAll(ANY_BLOCK)].map((m) => m[1]!);
  const label = labels.find((l) => l.endsWith('PRIVATE KEY'));
  if (!label) return { reason: 'no PEM-encoded private key found' };
  if (label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(pem)) return { reason: 'encrypted private keys are not supported' };
  try {
    return { key: createPrivateKey({ key: pem, format: 'pem' }) };
  } catch {
    return { reason: 'the private key does not parse' };
  }
}

/**
 * The first TLS secret of a write that is unusable, as `[field, reason]`, or null. Only the
 * secrets the write sets are checked (an empty value clears one); a client certificate and key
 * sent together must belong to each other.
 */
export function checkTlsSecrets(incoming: Readonly<Record<string, string>>): [TlsSecretField, string] | null {
  const ca = incoming.tlsCACert;
  if (ca) {
    const parsed = parseCertificates(ca);
    if ('reason' in parsed) return ['tlsCACert', parsed.reason];
  }
  let leaf: X509Certificate | undefined;
  if (incoming.tlsClientCert) {
    const parsed = parseCertificates(incoming.tlsClientCert);
    if ('reason' in parsed) return ['tlsClientCert', parsed.reason];
    leaf = parsed.certificates[0];
  }
  if (incoming.tlsClientKey) {
    const parsed = parsePrivateKey(incoming.tlsClientKey);
    if ('reason' in parsed) return ['tlsClientKey', parsed.reason];
    if (leaf && !leaf.checkPrivateKey(parsed.key)) return ['tlsClientKey', 'the private key does not match secureJsonData.tlsClientCert'];
  }
  return null;
}
