import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { checkTlsSecrets } from '../../src/services/data-source-tls.ts';
import { describeNetworkError, goMethod } from '../../src/upstream/errors.ts';
import { describeTlsError, hostnameError, tlsSettingsFor } from '../../src/upstream/tls.ts';
import { opensslAvailable, TestPki, type KeyPair } from '../support/tls.ts';

// The pure rules of the upstream layer's TLS: which settings count, how failures are worded.

describe('describeTlsError: Go client wording', () => {
  const cases: Array<[string, Record<string, unknown>, { kind: string; text: string } | null]> = [
    ['self-signed leaf', { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, { kind: 'tls', text: 'tls: failed to verify certificate: x509: certificate signed by unknown authority' }],
    ['private CA', { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }, { kind: 'tls', text: 'tls: failed to verify certificate: x509: certificate signed by unknown authority' }],
    ['self-signed root in chain', { code: 'SELF_SIGNED_CERT_IN_CHAIN' }, { kind: 'tls', text: 'tls: failed to verify certificate: x509: certificate signed by unknown authority' }],
    ['expired', { code: 'CERT_HAS_EXPIRED' }, { kind: 'tls', text: 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid' }],
    ['not yet valid', { code: 'CERT_NOT_YET_VALID' }, { kind: 'tls', text: 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid' }],
    ['name mismatch', { code: 'ERR_TLS_CERT_ALTNAME_INVALID', host: 'db.example', cert: { subjectaltname: 'DNS:a.example, DNS:b.example' } },
      { kind: 'tls', text: 'tls: failed to verify certificate: x509: certificate is valid for a.example, b.example, not db.example' }],
    ['TLS 1.3 client certificate missing', { code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' }, { kind: 'tls', text: 'remote error: tls: certificate required' }],
    ['client certificate refused', { code: 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE' }, { kind: 'tls', text: 'remote error: tls: bad certificate' }],
    ['client certificate from another CA', { code: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA' }, { kind: 'tls', text: 'remote error: tls: unknown certificate authority' }],
    ['unlisted alert', { code: 'ERR_SSL_TLSV1_ALERT_NO_RENEGOTIATION' }, { kind: 'tls', text: 'remote error: tls: no renegotiation' }],
    ['https to an http server', { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }, { kind: 'tls', text: 'http: server gave HTTP response to HTTPS client' }],
    ['handshake timeout', { code: 'ETLSHANDSHAKETIMEOUT' }, { kind: 'timeout', text: 'net/http: TLS handshake timeout' }],
    ['not TLS', { code: 'ECONNREFUSED' }, null],
  ];
  it.each(cases)('%s', (_name, error, expected) => {
    expect(describeTlsError(error as never)).toEqual(expected);
  });

  it('leads describeNetworkError, which words the rest', () => {
    expect(describeNetworkError(Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED' }), 'h:1').kind).toBe('tls');
    expect(describeNetworkError(Object.assign(new Error('x'), { code: 'ECONNREFUSED', address: '127.0.0.1', port: 9 }), 'h:9'))
      .toEqual({ kind: 'unreachable', text: 'dial tcp 127.0.0.1:9: connect: connection refused' });
  });
});

describe('hostnameError: x509.HostnameError', () => {
  const cases: Array<[string, string, Record<string, unknown> | undefined, string]> = [
    ['DNS names', 'wrong.test', { subjectaltname: 'DNS:upstream.test' }, 'x509: certificate is valid for upstream.test, not wrong.test'],
    ['IP wanted, IP SANs listed', '127.0.0.2', { subjectaltname: 'DNS:localhost, IP Address:127.0.0.1' }, 'x509: certificate is valid for 127.0.0.1, not 127.0.0.2'],
    ['IP wanted, no IP SANs', '127.0.0.1', { subjectaltname: 'DNS:upstream.test' }, "x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs"],
    ['name wanted, only IP SANs', 'host.test', { subjectaltname: 'IP Address:10.0.0.1' }, 'x509: certificate is not valid for any names, but wanted to match host.test'],
    ['common name only', 'legacy.test', { subject: { CN: 'legacy.test' } }, 'x509: certificate relies on legacy Common Name field, use SANs instead'],
  ];
  it.each(cases)('%s', (_name, host, cert, expected) => {
    expect(hostnameError(host, cert as never)).toBe(expected);
  });
});

describe('goMethod', () => {
  it.each([['GET', 'Get'], ['POST', 'Post'], ['DELETE', 'Delete'], ['options', 'Options']])('%s -> %s', (method, word) => {
    expect(goMethod(method)).toBe(word);
  });
});

const haveOpenssl = opensslAvailable();
if (!haveOpenssl) console.log('openssl not found: skipping the TLS settings tests that need certificates');
(haveOpenssl ? describe : describe.skip)('with certificates', () => {
  let pki: TestPki;
  let ca: KeyPair;
  let client: KeyPair;
  let other: KeyPair;
  beforeAll(() => {
    pki = new TestPki();
    ca = pki.ca('rules-ca');
    client = pki.leaf(ca, 'rules-client', { usage: 'clientAuth' });
    other = pki.leaf(ca, 'rules-other', { usage: 'clientAuth' });
  });
  afterAll(() => pki?.remove());

  it('tlsSettingsFor reads what the original reads, and only that', () => {
    const none = tlsSettingsFor({}, { tlsCACert: ca.cert, tlsClientCert: client.cert, tlsClientKey: client.key });
    expect(none).toEqual({ material: null, error: null });
    // A flag must be a JSON boolean, as simplejson's MustBool reads it.
    expect(tlsSettingsFor({ tlsSkipVerify: 'true' }, {})).toEqual({ material: null, error: null });

    const skip = tlsSettingsFor({ tlsSkipVerify: true, serverName: 'db.test' }, {});
    expect(skip.material).toMatchObject({ rejectUnauthorized: false, servername: 'db.test', ca: undefined, cert: undefined });

    const caOnly = tlsSettingsFor({ tlsAuthWithCACert: true, tlsAuth: false }, { tlsCACert: ca.cert, tlsClientCert: client.cert, tlsClientKey: client.key });
    expect(caOnly.material).toMatchObject({ ca: ca.cert, cert: undefined, key: undefined, rejectUnauthorized: true });

    // A client certificate without its key is not used (the SDK needs both).
    expect(tlsSettingsFor({ tlsAuth: true }, { tlsClientCert: client.cert })).toEqual({ material: null, error: null });
    const mtls = tlsSettingsFor({ tlsAuth: true }, { tlsClientCert: client.cert, tlsClientKey: client.key });
    expect(mtls.material).toMatchObject({ cert: client.cert, key: client.key });
  });

  it('tlsSettingsFor tells materials apart by fingerprint, and the same material alike', () => {
    const fp = (secrets: Record<string, string>, json: Record<string, unknown> = { tlsAuth: true, tlsAuthWithCACert: true }) => tlsSettingsFor(json, secrets).material?.fingerprint;
    const a = fp({ tlsCACert: ca.cert, tlsClientCert: client.cert, tlsClientKey: client.key });
    expect(a).toBe(fp({ tlsCACert: ca.cert, tlsClientCert: client.cert, tlsClientKey: client.key }));
    expect(a).not.toBe(fp({ tlsCACert: ca.cert, tlsClientCert: other.cert, tlsClientKey: other.key }));
    expect(a).not.toBe(fp({ tlsCACert: ca.cert, tlsClientCert: client.cert, tlsClientKey: client.key }, { tlsAuth: true, tlsAuthWithCACert: true, serverName: 'x' }));
    expect(a).not.toBe(fp({ tlsCACert: ca.cert, tlsClientCert: client.cert, tlsClientKey: client.key }, { tlsAuth: true, tlsAuthWithCACert: true, tlsSkipVerify: true }));
    expect(a).not.toContain('BEGIN');
  });

  it('tlsSettingsFor fails unusable stored material naming the field and what is wrong, never quoting it', () => {
    const encrypted = '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n';
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    const CA = { tlsAuthWithCACert: true };
    const MTLS = { tlsAuth: true };
    const cases: Array<[Record<string, unknown>, Record<string, string>, string]> = [
      [CA, { tlsCACert: 'junk' }, 'tlsCACert holds no PEM certificate'],
      [CA, { tlsCACert: '/etc/ssl/certs/ca.pem' }, 'tlsCACert holds no PEM certificate: it looks like a file path, and the certificate\'s PEM text is expected'],
      [CA, { tlsCACert: 'C:\\certs\\ca.crt' }, 'tlsCACert holds no PEM certificate: it looks like a file path, and the certificate\'s PEM text is expected'],
      [CA, { tlsCACert: client.key }, 'tlsCACert holds a private key where a PEM certificate belongs'],
      [CA, { tlsCACert: broken }, 'tlsCACert holds a PEM certificate that does not parse'],
      [CA, { tlsCACert: ca.cert + broken }, 'tlsCACert holds PEM certificates, of which certificate 2 of 2 does not parse'],
      [MTLS, { tlsClientCert: 'junk', tlsClientKey: client.key }, 'tlsClientCert holds no PEM certificate'],
      [MTLS, { tlsClientCert: './client.pem', tlsClientKey: client.key }, 'tlsClientCert holds no PEM certificate: it looks like a file path, and the certificate\'s PEM text is expected'],
      [MTLS, { tlsClientCert: client.key, tlsClientKey: client.key }, 'tlsClientCert holds a private key where a PEM certificate belongs'],
      [MTLS, { tlsClientCert: client.cert, tlsClientKey: 'junk' }, 'tlsClientKey holds no PEM private key'],
      [MTLS, { tlsClientCert: client.cert, tlsClientKey: '/etc/ssl/private/client.key' }, 'tlsClientKey holds no PEM private key: it looks like a file path, and the key\'s PEM text is expected'],
      [MTLS, { tlsClientCert: client.cert, tlsClientKey: client.cert }, 'tlsClientKey holds a certificate where a PEM private key belongs'],
      [MTLS, { tlsClientCert: client.cert, tlsClientKey: encrypted }, 'tlsClientKey holds an encrypted private key, which cannot be used'],
      [MTLS, { tlsClientCert: client.cert, tlsClientKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }, 'tlsClientKey holds a PEM private key that does not parse'],
      [MTLS, { tlsClientCert: client.cert, tlsClientKey: other.key }, 'tlsClientKey is not the private key of secureJsonData.tlsClientCert'],
    ];
    for (const [jsonData, secrets, problem] of cases) {
      const settings = tlsSettingsFor(jsonData, secrets);
      expect([Object.values(secrets)[0]!.slice(0, 30), settings]).toEqual([Object.values(secrets)[0]!.slice(0, 30), { material: null, error: `the data source's TLS settings are unusable: secureJsonData.${problem}` }]);
      for (const value of Object.values(secrets)) for (const line of value.split('\n').filter((l) => l.length > 8)) expect(settings.error).not.toContain(line);
    }
  });

  it('checkTlsSecrets names the first unusable field of a write', () => {
    const encrypted = '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n';
    const cases: Array<[Record<string, string>, [string, string] | null]> = [
      [{}, null],
      [{ tlsCACert: '' }, null],
      [{ tlsCACert: ca.cert + other.cert }, null],
      [{ tlsClientCert: client.cert, tlsClientKey: client.key }, null],
      [{ tlsClientKey: other.key }, null],
      [{ basicAuthPassword: 'not PEM at all' }, null],
      [{ tlsCACert: 'junk' }, ['tlsCACert', 'no PEM-encoded certificate found']],
      [{ tlsCACert: `${ca.cert}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n` }, ['tlsCACert', 'certificate 2 of 2 does not parse']],
      [{ tlsClientCert: client.key }, ['tlsClientCert', 'no PEM-encoded certificate found']],
      [{ tlsClientKey: client.cert }, ['tlsClientKey', 'no PEM-encoded private key found']],
      [{ tlsClientKey: encrypted }, ['tlsClientKey', 'encrypted private keys are not supported']],
      [{ tlsClientKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }, ['tlsClientKey', 'the private key does not parse']],
      [{ tlsClientCert: client.cert, tlsClientKey: other.key }, ['tlsClientKey', 'the private key does not match secureJsonData.tlsClientCert']],
    ];
    for (const [secrets, expected] of cases) expect([Object.keys(secrets), checkTlsSecrets(secrets)]).toEqual([Object.keys(secrets), expected]);
  });
});
