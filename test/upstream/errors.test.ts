import { describe, expect, it } from '@jest/globals';
import { callError, deniedAddress, describeNetworkError, goMethod, unusableTarget, UpstreamError } from '../../src/upstream/errors.ts';

// Why a data source call got no answer, worded once for every caller: pure.

const errno = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(`${code} raw`), { code, ...extra }) as NodeJS.ErrnoException;

describe('UpstreamError', () => {
  it.each([
    ['timeout', 504], ['unreachable', 502], ['tls', 502], ['too-large', 502], ['denied', 403], ['aborted', 499], ['invalid-url', 400], ['tls-config', 502], ['secrets', 500],
  ] as const)('%s answers %i', (kind, status) => {
    const error = new UpstreamError(kind, 'why');
    expect([error.name, error.kind, error.status, error.message]).toEqual(['UpstreamError', kind, status, 'why']);
  });
});

describe('goMethod', () => {
  it.each([['GET', 'Get'], ['post', 'Post'], ['DELETE', 'Delete'], ['pAtCh', 'Patch'], ['', '']])('%j is %j', (method, word) => {
    expect(goMethod(method)).toBe(word);
  });
});

describe('callError', () => {
  it('words a failed call as Go\'s url.Error', () => {
    const error = callError('timeout', 'POST', 'http://prom:9090/api/v1/query', 'context deadline exceeded');
    expect([error.kind, error.status, error.message]).toEqual(['timeout', 504, 'Post "http://prom:9090/api/v1/query": context deadline exceeded']);
  });
});

describe('describeNetworkError', () => {
  it.each<[string, NodeJS.ErrnoException, { kind: string; text: string }]>([
    ['refused, at the address dialled', errno('ECONNREFUSED', { address: '127.0.0.1', port: 9 }), { kind: 'unreachable', text: 'dial tcp 127.0.0.1:9: connect: connection refused' }],
    ['refused, IPv6 in brackets', errno('ECONNREFUSED', { address: '::1', port: 9 }), { kind: 'unreachable', text: 'dial tcp [::1]:9: connect: connection refused' }],
    ['refused, no address known: the host', errno('ECONNREFUSED'), { kind: 'unreachable', text: 'dial tcp prom.local:9090: connect: connection refused' }],
    ['no such host, without the port', errno('ENOTFOUND'), { kind: 'unreachable', text: 'dial tcp: lookup prom.local: no such host' }],
    ['a lookup failing for now', errno('EAI_AGAIN'), { kind: 'unreachable', text: 'dial tcp: lookup prom.local: no such host' }],
    ['no route', errno('EHOSTUNREACH', { address: '10.0.0.1', port: 80 }), { kind: 'unreachable', text: 'dial tcp 10.0.0.1:80: connect: no route to host' }],
    ['a dial timing out', errno('ETIMEDOUT', { address: '10.0.0.1', port: 80 }), { kind: 'timeout', text: 'dial tcp 10.0.0.1:80: i/o timeout' }],
    ['a reset', errno('ECONNRESET'), { kind: 'unreachable', text: 'read: connection reset by peer' }],
    ['a malformed answer', errno('HPE_INVALID_CONSTANT'), { kind: 'unreachable', text: 'malformed HTTP response' }],
    ['a TLS failure, in Go\'s words', errno('ERR_SSL_WRONG_VERSION_NUMBER'), { kind: 'tls', text: 'http: server gave HTTP response to HTTPS client' }],
    ['anything else: its own message', errno('EPIPE'), { kind: 'unreachable', text: 'EPIPE raw' }],
  ])('%s', (_name, error, expected) => {
    expect(describeNetworkError(error, 'prom.local:9090')).toEqual(expected);
  });
});

describe('unusableTarget', () => {
  const usable = { secretsUnreadable: false, upstream: { host: 'h' } as never, rawUrl: 'http://h', tlsError: null };

  it('is null for a data source calls may be tried with', () => {
    expect(unusableTarget(usable)).toBeNull();
  });

  it.each([
    ['unreadable secrets first', { secretsUnreadable: true, upstream: null, tlsError: 'tlsCACert: no PEM' }, 'secrets', 500, 'Unable to load datasource meta data'],
    ['then a URL no call can use', { upstream: null, rawUrl: 'ftp://x', tlsError: 'tlsCACert: no PEM' }, 'invalid-url', 400, 'Invalid data source URL: "ftp://x"'],
    ['then TLS material, naming the field', { tlsError: 'tlsCACert holds no PEM certificate' }, 'tls-config', 502, 'tlsCACert holds no PEM certificate'],
  ])('says why: %s', (_name, change, kind, status, message) => {
    const error = unusableTarget({ ...usable, ...change });
    expect(error && [error.kind, error.status, error.message]).toEqual([kind, status, message]);
  });

  it('words an address denied as it resolves as the proxy does, never naming it', () => {
    const error = deniedAddress();
    expect([error.kind, error.status, error.message]).toEqual(['denied', 403, 'Data proxy target address is not allowed']);
  });
});
